"""The credential types a user can store: an OpenAI-compatible API key, a bearer token for any
HTTP service, and the API key of a web search provider."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from rag.core import Params as BaseParams
from rag.core import ml, param, register

from .base import CredentialComponent, Secret

_BASE_URL_TITLE = ml("Base URL", "URL base", "基礎 URL")
OPENAI_BASE_URL = "https://api.openai.com/v1"
# The web search APIs by their own names.
SEARCH_PROVIDERS = {"brave": ml("Brave Search"), "tavily": ml("Tavily"), "serper": ml("Serper")}


@register
class OpenAIAPIKey(CredentialComponent["OpenAIAPIKey.Params"]):
    """An API key for an OpenAI-compatible server (OpenAI, Azure-style gateways, vLLM...).

    Parameters
    ----------
    api_key : SecretStr
        The key, sent as the bearer token.
    base_url : str or None
        API root this key belongs to; None means the one the component using it is set to.
    organization : str or None
        OpenAI organization id, for keys that belong to several organizations.
    """

    ICON = "key-round"
    DISPLAY_NAME = ml("OpenAI API key", "Clave de API de OpenAI", "OpenAI API 金鑰")
    DESCRIPTION = ml(
        "An API key for OpenAI or any OpenAI-compatible server, stored encrypted.",
        "Una clave de API para OpenAI o cualquier servidor compatible con OpenAI, guardada cifrada.",
        "用於 OpenAI 或任何 OpenAI 相容伺服器的 API 金鑰，以加密方式儲存。",
    )
    REPRESENTATION = ml(
        "OpenAI key · {base_url|api.openai.com}",
        "Clave de OpenAI · {base_url|api.openai.com}",
        "OpenAI 金鑰 · {base_url|api.openai.com}",
    )
    SECRET_PARAMS = ("api_key",)
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {"api_key": "sk-example-000000000000000000000000"}

    class Params(BaseParams):
        api_key: Secret = param(
            title=ml("API key", "Clave de API", "API 金鑰"),
            description=ml(
                "The secret key. It is stored encrypted and never shown again.",
                "La clave secreta. Se guarda cifrada y no se vuelve a mostrar.",
                "秘密金鑰。以加密方式儲存，之後不會再顯示。",
            ),
        )
        base_url: str | None = param(
            None,
            json_schema_extra={"x-outbound": True},
            title=_BASE_URL_TITLE,
            description=ml(
                "The API root this key is for, e.g. http://10.0.0.5:8000/v1; the key is sent to no other "
                "server. Empty means OpenAI's own, https://api.openai.com/v1.",
                "La raíz de la API para la que sirve esta clave, p. ej. http://10.0.0.5:8000/v1; la clave no "
                "se envía a ningún otro servidor. Vacío significa la de OpenAI, https://api.openai.com/v1.",
                "此金鑰適用的 API 根網址，例如 http://10.0.0.5:8000/v1；金鑰不會傳送到其他伺服器。"
                "留空表示 OpenAI 本身的 https://api.openai.com/v1。",
            ),
        )
        organization: str | None = param(
            None,
            title=ml("Organization", "Organización", "組織"),
            description=ml(
                "OpenAI organization id (org-...), for keys that belong to several organizations.",
                "Id de organización de OpenAI (org-...), para claves de varias organizaciones.",
                "OpenAI 組織 ID（org-...），用於屬於多個組織的金鑰。",
            ),
        )

    @classmethod
    def own_destinations(cls, public_params: Mapping[str, Any]) -> list[str]:
        return [public_params.get("base_url") or OPENAI_BASE_URL]


@register
class BearerToken(CredentialComponent["BearerToken.Params"]):
    """A token sent in an HTTP header, for services that take a plain bearer token.

    Parameters
    ----------
    token : SecretStr
        The token.
    header : str
        The header that carries it; ``Authorization`` sends ``Bearer <token>``.
    """

    ICON = "lock-keyhole"
    DISPLAY_NAME = ml("Bearer token", "Token de portador", "Bearer 權杖")
    DESCRIPTION = ml(
        "A token sent in an HTTP header to a service that needs one, stored encrypted.",
        "Un token que se envía en una cabecera HTTP a un servicio que lo pide, guardado cifrado.",
        "在 HTTP 標頭中傳送給需要它的服務的權杖，以加密方式儲存。",
    )
    REPRESENTATION = ml("Token · {header}", "Token · {header}", "權杖 · {header}")
    SECRET_PARAMS = ("token",)
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {"token": "tok-example-000000000000000000000"}

    class Params(BaseParams):
        token: Secret = param(
            title=ml("Token", "Token", "權杖"),
            description=ml(
                "The secret token. It is stored encrypted and never shown again.",
                "El token secreto. Se guarda cifrado y no se vuelve a mostrar.",
                "秘密權杖。以加密方式儲存，之後不會再顯示。",
            ),
        )
        header: str = param(
            "Authorization",
            title=ml("Header", "Cabecera", "標頭"),
            description=ml(
                "The HTTP header that carries the token; Authorization sends \"Bearer <token>\".",
                "La cabecera HTTP que lleva el token; Authorization envía \"Bearer <token>\".",
                "攜帶權杖的 HTTP 標頭；Authorization 會傳送「Bearer <權杖>」。",
            ),
            min_length=1,
            pattern=r"^[A-Za-z0-9-]+$",
        )

    def header_value(self) -> tuple[str, str]:
        """The (header, value) pair to send."""
        token = self.params.token.get_secret_value()
        if self.params.header.lower() == "authorization":
            return self.params.header, f"Bearer {token}"
        return self.params.header, token


SEARCH_PROVIDER_ENDPOINTS: dict[str, str] = {
    "brave": "https://api.search.brave.com",
    "tavily": "https://api.tavily.com",
    "serper": "https://google.serper.dev",
}


@register
class WebSearchAPIKey(CredentialComponent["WebSearchAPIKey.Params"]):
    """The API key of a web search provider, for web retrieval (CRAG's fallback).

    Parameters
    ----------
    api_key : SecretStr
        The provider's key.
    provider : {"brave", "tavily", "serper", "searxng"}
        Which search API the key belongs to.
    base_url : str or None
        The endpoint, for a self-hosted SearXNG or a proxy; None uses the provider's own.
    """

    ICON = "globe"
    DISPLAY_NAME = ml("Web search API key", "Clave de API de búsqueda web", "網頁搜尋 API 金鑰")
    DESCRIPTION = ml(
        "The API key of a web search provider (Brave, Tavily, Serper or SearXNG), stored encrypted.",
        "La clave de API de un proveedor de búsqueda web (Brave, Tavily, Serper o SearXNG), guardada cifrada.",
        "網頁搜尋服務（Brave、Tavily、Serper 或 SearXNG）的 API 金鑰，以加密方式儲存。",
    )
    REPRESENTATION = ml(
        "{provider} · {base_url|provider's endpoint}",
        "{provider} · {base_url|punto de acceso del proveedor}",
        "{provider} · {base_url|服務商的端點}",
    )
    SECRET_PARAMS = ("api_key",)
    EXAMPLE_PARAMS: ClassVar[dict[str, Any]] = {"api_key": "BSA-example-00000000000000000000"}

    class Params(BaseParams):
        api_key: Secret = param(
            title=ml("API key", "Clave de API", "API 金鑰"),
            description=ml(
                "The provider's secret key. It is stored encrypted and never shown again.",
                "La clave secreta del proveedor. Se guarda cifrada y no se vuelve a mostrar.",
                "服務商的秘密金鑰。以加密方式儲存，之後不會再顯示。",
            ),
        )
        provider: Literal["brave", "tavily", "serper", "searxng"] = param(
            "brave",
            title=ml("Provider", "Proveedor", "服務商"),
            labels={**SEARCH_PROVIDERS, "searxng": ml("SearXNG")},
            description=ml(
                "The search API this key belongs to.",
                "La API de búsqueda a la que pertenece esta clave.",
                "此金鑰所屬的搜尋 API。",
            ),
        )
        base_url: str | None = param(
            None,
            json_schema_extra={"x-outbound": True},
            title=_BASE_URL_TITLE,
            description=ml(
                "The endpoint, for a self-hosted SearXNG or a proxy; empty uses the provider's own.",
                "El punto de acceso, para un SearXNG propio o un proxy; vacío usa el del proveedor.",
                "端點，用於自架的 SearXNG 或代理；留空則使用服務商自己的端點。",
            ),
        )

    @classmethod
    def own_destinations(cls, public_params: Mapping[str, Any]) -> list[str]:
        own = public_params.get("base_url") or SEARCH_PROVIDER_ENDPOINTS.get(public_params.get("provider") or "brave")
        return [own] if own else []
