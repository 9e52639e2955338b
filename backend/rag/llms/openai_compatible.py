"""``OpenAICompatibleLLM``: chat models behind any OpenAI-compatible API."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any, Literal

from rag.clients.openai_api import NO_KEY, make_client, readable_errors, resolve_api_key
from rag.clients.outbound import OutboundPolicy
from rag.core import ml, param, register

from .base import LLM, LLMError, Message, json_only_instruction
from .params import LLMParams


@register
class OpenAICompatibleLLM(LLM["OpenAICompatibleLLM.Params"]):
    """A chat model served by OpenAI or any server speaking its API.

    ``base_url`` for common servers: OpenAI ``https://api.openai.com/v1``; Ollama
    ``http://localhost:11434/v1``; vLLM ``http://localhost:8000/v1``; LM Studio
    ``http://localhost:1234/v1``; llama.cpp's ``llama-server`` ``http://localhost:8080/v1``.

    Function calls use tools when the server supports them (``function_calling="auto"`` tries
    tools first and, if the server refuses them or answers without a call, switches to a
    JSON-only reply for the rest of this component's life); both are parsed the same way.
    """

    ICON = "bot"
    DISPLAY_NAME = ml("OpenAI-compatible chat model", "Modelo de chat compatible con OpenAI", "OpenAI 相容聊天模型")
    SHORT_NAME = ml("OpenAI-compatible", "Compatible con OpenAI", "OpenAI 相容")
    DESCRIPTION = ml(
        "A chat model behind an OpenAI-compatible API: OpenAI, Azure-style gateways, Ollama, vLLM, "
        "LM Studio or a llama.cpp server.",
        "Un modelo de chat detrás de una API compatible con OpenAI: OpenAI, pasarelas tipo Azure, "
        "Ollama, vLLM, LM Studio o un servidor llama.cpp.",
        "透過 OpenAI 相容 API 提供的聊天模型：OpenAI、Azure 類閘道、Ollama、vLLM、LM Studio 或 llama.cpp 伺服器。",
    )
    REPRESENTATION = ml("{model} · {base_url}", "{model} · {base_url}", "{model} · {base_url}")

    class Params(LLMParams):
        base_url: str = param(
            "https://api.openai.com/v1", pattern=r"^https?://[^\s/]+\S*$",
            json_schema_extra={"x-outbound": True},
            title=ml("Base URL", "URL base", "基礎網址"),
            description=ml(
                "The API root: OpenAI https://api.openai.com/v1, Ollama http://localhost:11434/v1, vLLM "
                "http://localhost:8000/v1, LM Studio http://localhost:1234/v1, llama.cpp http://localhost:8080/v1.",
                "La raíz de la API: OpenAI https://api.openai.com/v1, Ollama http://localhost:11434/v1, vLLM "
                "http://localhost:8000/v1, LM Studio http://localhost:1234/v1, llama.cpp http://localhost:8080/v1.",
                "API 根網址：OpenAI https://api.openai.com/v1、Ollama http://localhost:11434/v1、vLLM "
                "http://localhost:8000/v1、LM Studio http://localhost:1234/v1、llama.cpp http://localhost:8080/v1。",
            ),
        )
        model: str = param(
            "gpt-4o-mini", min_length=1, max_length=200,
            title=ml("Model", "Modelo", "模型"),
            description=ml("The model's name on that server.", "El nombre del modelo en ese servidor.",
                           "該伺服器上的模型名稱。"),
        )
        timeout: float = param(
            60.0, gt=0, le=600,
            title=ml("Timeout (seconds)", "Tiempo de espera (segundos)", "逾時（秒）"),
            description=ml("How long to wait for each request.", "Cuánto esperar cada solicitud.",
                           "每個請求的等待時間。"),
        )
        credential: str | None = param(
            None, min_length=1, json_schema_extra={"x-credential": True},
            title=ml("Credential", "Credencial", "憑證"),
            description=ml(
                "Name of the stored credential holding the API key; empty for local servers that need none.",
                "Nombre de la credencial guardada con la clave de API; vacío para servidores locales que no la necesitan.",
                "存放 API 金鑰的已儲存憑證名稱；不需要金鑰的本機伺服器請留空。",
            ),
        )
        function_calling: Literal["auto", "tools", "json"] = param(
            "auto",
            title=ml("Function calls", "Llamadas a funciones", "函式呼叫"),
            description=ml(
                "tools: native tool calls; json: ask for a bare JSON object; auto: tools, falling back to "
                "json when the server does not support them.",
                "tools: llamadas nativas a herramientas; json: pedir un objeto JSON; auto: tools, y json si "
                "el servidor no las admite.",
                "tools：原生工具呼叫；json：要求只回傳 JSON 物件；auto：先用 tools，伺服器不支援時改用 json。",
            ),
        )

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._client: Any = None
        self._api_key = NO_KEY
        self._lock = threading.Lock()
        self._tools_unsupported = self.params.function_calling == "json"
        self._outbound: OutboundPolicy | None = None

    def inject_infra(self, *, outbound: OutboundPolicy | None = None, **infra: Any) -> None:
        """``outbound``: the policy every connection must meet (given for the components of a user
        who is not an administrator); None reaches any address."""
        self._outbound = outbound
        super().inject_infra(**infra)

    def init_model(self) -> None:
        """Resolve the credential and build the client (no request is made)."""
        with self._lock:
            if self._client is None:
                self._api_key = resolve_api_key(self, self.params.credential, url=self.params.base_url)
                self._client = make_client(base_url=self.params.base_url, api_key=self._api_key,
                                           timeout=self.params.timeout, outbound=self._outbound)

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None
        super().close()

    def _errors(self):
        where = f"{self.params.base_url} (model {self.params.model})"
        return readable_errors(where, api_key=self._api_key, timeout=self.params.timeout, error=LLMError)

    def _create(self, messages: list[Message], **options: Any) -> Any:
        self.init_model()
        options.setdefault("max_tokens", self.params.max_tokens)
        with self._errors():
            return self._client.chat.completions.create(
                model=self.params.model, messages=messages, temperature=self.params.temperature, **options,
            )

    def _generate(self, messages: list[Message], max_tokens: int) -> str:
        response = self._create(messages, max_tokens=max_tokens)
        self._count_usage(getattr(response, "usage", None))
        choices = getattr(response, "choices", None)
        if not choices or getattr(choices[0], "message", None) is None:
            # A server answering with something that is not a chat completion (an event stream,
            # an HTML page): readable, not an AttributeError.
            raise LLMError(f"{self.params.base_url} (model {self.params.model}) answered with something that is "
                           "not a chat completion")
        return choices[0].message.content or ""

    def _stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        # include_usage: the last chunk reports the tokens read and written, as OpenAI, vLLM,
        # llama.cpp and Ollama do when asked; servers that do not know it leave it out.
        response = self._create(messages, stream=True, max_tokens=max_tokens, stream_options={"include_usage": True})
        usage = None
        try:
            with self._errors():
                for chunk in response:
                    usage = getattr(chunk, "usage", None) or usage
                    if chunk.choices and chunk.choices[0].delta and chunk.choices[0].delta.content:
                        yield chunk.choices[0].delta.content
        finally:
            response.close()
            self._count_usage(usage)

    def _function_call_text(self, messages: list[Message], schema: dict[str, Any], name: str,
                            description: str) -> str | dict[str, Any]:
        if not self._tools_unsupported:
            tool = {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}
            try:
                response = self._create(messages, tools=[tool],
                                        tool_choice={"type": "function", "function": {"name": name}})
            except LLMError as exc:
                if self.params.function_calling == "tools" or getattr(exc, "status", None) not in (400, 404, 422):
                    raise
                self._tools_unsupported = True
            else:
                self._count_usage(getattr(response, "usage", None))
                message = response.choices[0].message
                calls = [call for call in (message.tool_calls or []) if call.function.name == name]
                if calls:
                    return calls[0].function.arguments or ""
                if self.params.function_calling == "tools":
                    return message.content or ""
                self._tools_unsupported = True
                if message.content and message.content.strip().startswith(("{", "```")):
                    return message.content
        response = self._create([json_only_instruction(schema, name, description), *messages])
        self._count_usage(getattr(response, "usage", None))
        return response.choices[0].message.content or ""
