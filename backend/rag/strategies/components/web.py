"""Web retrievers: a SearXNG instance, or the Brave, Tavily and Serper search APIs.

Results become chunks (``document_id=-1``, a negative id derived from the URL) whose text is the
title and the snippet and whose metadata holds ``url``, ``title``, ``source="web"`` and
``provider``; scores are ``1 - rank / len(results)``.
"""

from __future__ import annotations

import hashlib
import html
import logging
import re
from collections.abc import Iterable, Mapping
from typing import Any, Literal

from rag.clients.openai_api import resolve_api_key, scrub, server_summary
from rag.clients.outbound import REFUSED, OutboundPolicy
from rag.core import CredentialError, TrellisError, ml, param, register
from rag.core import Params as BaseParams
from rag.credentials.keys import SEARCH_PROVIDER_ENDPOINTS, SEARCH_PROVIDERS
from rag.documents.models import Chunk
from rag.retrievers import Hit

from ..slots import Outcome, WebRetriever

WEB_DOCUMENT_ID = -1
logger = logging.getLogger(__name__)
_TAG = re.compile(r"<[^>]+>")
_URL_PATTERN = r"^https?://[^\s/]+\S*$"

PROVIDERS: dict[str, dict[str, str]] = {
    name: {"name": title, "base_url": SEARCH_PROVIDER_ENDPOINTS[name]}
    for name, title in (("brave", "Brave Search"), ("tavily", "Tavily"), ("serper", "Serper"))
}


class WebSearchError(TrellisError):
    """A web search failed; the message says where and why and never carries the API key."""


def url_chunk_id(url: str) -> int:
    """A stable negative id for the chunk of ``url`` (a 63-bit hash), so web chunks never collide
    with a knowledge base's (positive) ids."""
    digest = hashlib.sha256(url.encode("utf-8")).digest()
    return -(int.from_bytes(digest[:8], "big") & (2**63 - 1)) - 1


def _plain(text: Any) -> str:
    """Snippet text without HTML tags or entities (Brave marks matches with ``<strong>``)."""
    return " ".join(html.unescape(_TAG.sub("", str(text or ""))).split())


def web_hits(results: Iterable[tuple[Any, Any, Any]], *, provider: str, top_k: int) -> list[Hit]:
    """Hits for ``(url, title, snippet)`` results in rank order: results without a URL and repeated
    URLs are skipped, the first ``top_k`` kept, scored ``1 - rank / count``."""
    seen: set[str] = set()
    chunks: list[Chunk] = []
    for url, title, snippet in results:
        url = str(url or "").strip()
        if not url or url in seen:
            continue
        seen.add(url)
        title, snippet = _plain(title), _plain(snippet)
        chunks.append(Chunk(id=url_chunk_id(url), document_id=WEB_DOCUMENT_ID, position=0,
                            text=f"{title}\n{snippet}",
                            metadata={"url": url, "title": title, "source": "web", "provider": provider}))
        if len(chunks) == top_k:
            break
    return [Hit(chunk, 1.0 - rank / len(chunks)) for rank, chunk in enumerate(chunks)]


def _error_message(response: Any) -> str:
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, Mapping):
        for key in ("message", "error", "detail"):
            value = body.get(key)
            if isinstance(value, Mapping):
                value = value.get("message") or value.get("detail")
            if isinstance(value, str) and value.strip():
                return value.strip()[:300]
    return (response.text or "").strip()[:300] or response.reason_phrase or "no message"


def request_json(
    method: str,
    url: str,
    *,
    service: str,
    timeout: float,
    secret: str = "",
    hint: Mapping[int, str] | None = None,
    outbound: OutboundPolicy | None = None,
    **options: Any,
) -> Any:
    """Send one HTTP request and return its JSON body.

    The request goes through ``guarded_client``: with ``outbound`` (the policy of a pipeline of a
    user who is not an administrator), its host is resolved once, every address checked, and the
    connection made to a checked address, so a name that points inside by then (DNS rebinding)
    gets nothing; no redirect is followed, for anyone (one would carry the provider's key to
    wherever it points).

    Every failure becomes a ``WebSearchError`` naming ``service``: an address the policy refuses,
    a timeout, an unreachable server, an HTTP error status (with ``hint[status]`` if any) or a body
    that is not JSON. The server's own words and the network error's details go to the log only;
    ``secret`` is removed from them, and the original exception, whose request may hold it, is
    not chained.
    """
    import httpx2

    from rag.clients.guarded_http import guarded_client, refused

    try:
        with guarded_client(outbound, timeout=timeout) as client:
            response = client.request(method, url, **options)
    except httpx2.TimeoutException:
        raise WebSearchError(f"{service} did not answer within {timeout:g} s") from None
    except httpx2.HTTPError as exc:
        if refused(exc):
            raise WebSearchError(f"{service} {REFUSED}") from None
        logger.warning("could not reach %s: %s", service, scrub(str(exc), secret))
        raise WebSearchError(f"could not reach {service}") from None
    if response.status_code >= 400 or response.is_redirect:
        extra = (hint or {}).get(response.status_code)
        logger.warning("%s answered HTTP %s: %s", service, response.status_code,
                       scrub(_error_message(response), secret))
        try:
            summary = server_summary(response.json())
        except ValueError:
            summary = ""
        message = f"{service} answered HTTP {response.status_code}{summary}"
        raise WebSearchError(f"{message} ({extra})" if extra else message)
    try:
        return response.json()
    except ValueError:
        logger.warning("%s answered with something that is not JSON: %r", service,
                       scrub(response.text.strip()[:500], secret))
        raise WebSearchError(f"{service} answered with something that is not JSON") from None


def _items(body: Any, service: str, *path: str) -> list[Mapping[str, Any]]:
    """The result objects at ``path`` of a JSON answer; a missing list means no results."""
    if not isinstance(body, Mapping):
        raise WebSearchError(f"{service} answered with JSON that is not an object")
    value: Any = body
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    if value is None:
        return []
    if not isinstance(value, list):
        raise WebSearchError(f"{service} answered with {'.'.join(path)} that is not a list")
    return [item for item in value if isinstance(item, Mapping)]


def _top_k(default: int, top_k: int | None) -> int:
    k = default if top_k is None else int(top_k)
    if k < 1:
        raise ValueError(f"top_k must be ≥ 1, got {k}")
    return k


_TOP_K: dict[str, Any] = {
    "title": ml("Results", "Resultados", "結果數"),
    "description": ml("How many web results to use.", "Cuántos resultados web usar.", "要使用的網頁結果數量。"),
}
_TIMEOUT: dict[str, Any] = {
    "title": ml("Timeout (seconds)", "Tiempo de espera (segundos)", "逾時（秒）"),
    "description": ml("How long to wait for the search.", "Cuánto esperar la búsqueda.", "等待搜尋結果的時間。"),
}


@register
class SearxngWebRetriever(WebRetriever["SearxngWebRetriever.Params"]):
    """Searches a SearXNG instance through its JSON API
    (``GET <base_url>/search?q=…&format=json&language=…&categories=…``).

    The instance must allow the ``json`` format (``search.formats`` in its ``settings.yml``).
    """

    ICON = "search"
    DISPLAY_NAME = ml("SearXNG web search", "Búsqueda web con SearXNG", "SearXNG 網頁搜尋")
    SHORT_NAME = ml("SearXNG", "SearXNG", "SearXNG")
    DESCRIPTION = ml(
        "Searches the web through a SearXNG metasearch instance, for example one you host yourself; no key needed.",
        "Busca en la web mediante una instancia del metabuscador SearXNG, por ejemplo una propia; no requiere clave.",
        "透過 SearXNG 元搜尋引擎（例如自行架設的執行個體）搜尋網頁；不需要金鑰。",
    )
    REPRESENTATION = ml(
        "SearXNG · {base_url} · top {top_k}",
        "SearXNG · {base_url} · {top_k} mejores",
        "SearXNG · {base_url} · 前 {top_k} 筆",
    )
    EXAMPLE_PARAMS = {"base_url": "http://localhost:8888"}

    class Params(BaseParams):
        base_url: str = param(
            json_schema_extra={"x-outbound": True},
            pattern=_URL_PATTERN, max_length=500,
            title=ml("Instance URL", "URL de la instancia", "執行個體網址"),
            description=ml(
                "The root of the SearXNG instance, e.g. http://localhost:8888.",
                "La raíz de la instancia de SearXNG, p. ej. http://localhost:8888.",
                "SearXNG 執行個體的根網址，例如 http://localhost:8888。",
            ),
        )
        top_k: int = param(5, ge=1, le=20, **_TOP_K)
        language: str = param(
            "auto", pattern=r"^(auto|all|[a-z]{2,3}(-[A-Za-z]{2,4})?)$",
            title=ml("Language", "Idioma", "語言"),
            description=ml(
                "Search language: auto, all, or a code such as en, es or zh-TW.",
                "Idioma de búsqueda: auto, all o un código como en, es o zh-TW.",
                "搜尋語言：auto、all，或 en、es、zh-TW 等代碼。",
            ),
        )
        timeout: float = param(10.0, gt=0, le=120, **_TIMEOUT)
        categories: str = param(
            "general", pattern=r"^[a-z_]+( [a-z_]+)*(,[a-z_]+( [a-z_]+)*)*$", max_length=200,
            title=ml("Categories", "Categorías", "類別"),
            description=ml(
                "SearXNG categories to search, separated by commas, e.g. general or general,science.",
                "Categorías de SearXNG en las que buscar, separadas por comas, p. ej. general o general,science.",
                "要搜尋的 SearXNG 類別，以逗號分隔，例如 general 或 general,science。",
            ),
        )

    _outbound: OutboundPolicy | None = None

    def inject_infra(self, *, outbound: OutboundPolicy | None = None, **infra: Any) -> None:
        """``outbound``: the policy every connection must meet (given for the components of a user
        who is not an administrator); None reaches any address."""
        self._outbound = outbound
        super().inject_infra(**infra)

    def search(self, question: str, top_k: int | None = None) -> Outcome:
        """The first ``top_k`` results as hits; details hold the endpoint and result counts."""
        k = _top_k(self.params.top_k, top_k)
        endpoint = f"{self.params.base_url.rstrip('/')}/search"
        service = f"SearXNG at {self.params.base_url}"
        body = request_json(
            "GET", endpoint, service=service, timeout=self.params.timeout, outbound=self._outbound,
            params={"q": question, "format": "json", "language": self.params.language,
                    "categories": self.params.categories},
            headers={"Accept": "application/json"},
            hint={403: "is the json format enabled in the instance's settings.yml (search.formats)?"},
        )
        items = _items(body, service, "results")
        hits = web_hits(((item.get("url"), item.get("title"), item.get("content")) for item in items),
                        provider="searxng", top_k=k)
        return Outcome(hits, {"provider": "searxng", "endpoint": endpoint, "results": len(items), "kept": len(hits)})


@register
class WebSearchAPIRetriever(WebRetriever["WebSearchAPIRetriever.Params"]):
    """Searches the web with the Brave, Tavily or Serper search API, using the key of a stored
    credential (a ``WebSearchAPIKey``).

    Requests: Brave ``GET <root>/res/v1/web/search?q=…&count=…`` with ``X-Subscription-Token``;
    Tavily ``POST <root>/search {"query", "max_results"}`` with a bearer token; Serper
    ``POST <root>/search {"q", "num"}`` with ``X-API-KEY``. The root is ``base_url``, else the
    credential's ``base_url``, else the provider's own.
    """

    ICON = "globe"
    DISPLAY_NAME = ml("Web search API", "API de búsqueda web", "網頁搜尋 API")
    SHORT_NAME = ml("Web search", "Búsqueda web", "網頁搜尋")
    DESCRIPTION = ml(
        "Searches the web with Brave Search, Tavily or Serper (Google results); needs the provider's API key "
        "stored as a credential.",
        "Busca en la web con Brave Search, Tavily o Serper (resultados de Google); necesita la clave de API del "
        "proveedor guardada como credencial.",
        "使用 Brave Search、Tavily 或 Serper（Google 結果）搜尋網頁；需要將服務商的 API 金鑰儲存為憑證。",
    )
    REPRESENTATION = ml(
        "Web · {provider} · top {top_k}",
        "Web · {provider} · {top_k} mejores",
        "網頁 · {provider} · 前 {top_k} 筆",
    )
    EXAMPLE_PARAMS = {"provider": "brave", "credential": "brave-search"}

    class Params(BaseParams):
        provider: Literal["brave", "tavily", "serper"] = param(
            "brave",
            title=ml("Provider", "Proveedor", "服務商"),
            labels=SEARCH_PROVIDERS,
            description=ml(
                "The search API: brave (Brave Search), tavily (Tavily) or serper (Google results through Serper).",
                "La API de búsqueda: brave (Brave Search), tavily (Tavily) o serper (resultados de Google con Serper).",
                "搜尋 API：brave（Brave Search）、tavily（Tavily）或 serper（透過 Serper 取得 Google 結果）。",
            ),
        )
        credential: str = param(
            min_length=1, max_length=200, json_schema_extra={"x-credential": True},
            title=ml("Credential", "Credencial", "憑證"),
            description=ml(
                "Name of the stored web search API key for this provider.",
                "Nombre de la clave de API de búsqueda web guardada para este proveedor.",
                "為此服務商儲存的網頁搜尋 API 金鑰名稱。",
            ),
        )
        top_k: int = param(5, ge=1, le=20, **_TOP_K)
        timeout: float = param(10.0, gt=0, le=120, **_TIMEOUT)
        base_url: str | None = param(
            None, json_schema_extra={"x-outbound": True}, pattern=_URL_PATTERN, max_length=500,
            title=ml("Base URL", "URL base", "基礎網址"),
            description=ml(
                "Another root for the provider's API (a proxy); empty uses the credential's, else the provider's own.",
                "Otra raíz para la API del proveedor (un proxy); vacío usa la de la credencial o, si no, la del "
                "proveedor.",
                "服務商 API 的其他根網址（代理）；留空則使用憑證中的網址，否則使用服務商自己的網址。",
            ),
        )

    @classmethod
    def credential_destination(cls, params: Mapping[str, Any], credential_params: Mapping[str, Any]) -> str:
        """Where the searches (and the credential) go: ``base_url``, else the credential's, else
        the provider's own."""
        return (params.get("base_url") or credential_params.get("base_url")
                or PROVIDERS[params.get("provider") or "brave"]["base_url"]).rstrip("/")

    def _key_and_root(self) -> tuple[str, str]:
        name = self.params.credential
        credential = self.get_credential(name)
        provider = getattr(credential.params, "provider", None)
        if provider is not None and provider != self.params.provider:
            raise CredentialError(f"the credential {name!r} is a {provider} key, but this retriever searches "
                                  f"with {self.params.provider}")
        root = self.credential_destination(self.to_config()["params"], credential.to_config()["params"])
        return resolve_api_key(self, name, url=root), root

    _outbound: OutboundPolicy | None = None

    def inject_infra(self, *, outbound: OutboundPolicy | None = None, **infra: Any) -> None:
        """``outbound``: the policy every connection must meet (given for the components of a user
        who is not an administrator); None reaches any address."""
        self._outbound = outbound
        super().inject_infra(**infra)

    def search(self, question: str, top_k: int | None = None) -> Outcome:
        """The first ``top_k`` results as hits; details hold the endpoint and result counts."""
        k = _top_k(self.params.top_k, top_k)
        provider = self.params.provider
        key, root = self._key_and_root()
        service = f"{PROVIDERS[provider]['name']} at {root}"
        common: dict[str, Any] = {"service": service, "timeout": self.params.timeout, "secret": key,
                                  "outbound": self._outbound}
        if provider == "brave":
            endpoint = f"{root}/res/v1/web/search"
            body = request_json("GET", endpoint, params={"q": question, "count": k},
                                headers={"X-Subscription-Token": key, "Accept": "application/json"}, **common)
            items = _items(body, service, "web", "results")
            results = ((item.get("url"), item.get("title"), item.get("description")) for item in items)
        elif provider == "tavily":
            endpoint = f"{root}/search"
            body = request_json("POST", endpoint, json={"query": question, "max_results": k},
                                headers={"Authorization": f"Bearer {key}"}, **common)
            items = _items(body, service, "results")
            results = ((item.get("url"), item.get("title"), item.get("content")) for item in items)
        else:
            endpoint = f"{root}/search"
            body = request_json("POST", endpoint, json={"q": question, "num": k},
                                headers={"X-API-KEY": key}, **common)
            items = _items(body, service, "organic")
            results = ((item.get("link"), item.get("title"), item.get("snippet")) for item in items)
        hits = web_hits(results, provider=provider, top_k=k)
        return Outcome(hits, {"provider": provider, "endpoint": endpoint, "results": len(items), "kept": len(hits)})
