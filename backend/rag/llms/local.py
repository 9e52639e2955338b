"""``LocalLLM``: a GGUF chat model run in-process by llama.cpp (the prebuilt xllamacpp wheel)."""

from __future__ import annotations

import os
import queue
import secrets
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

from rag.core import ml, param, register

from . import local_models
from .base import LLM, LLMError, Message, json_only_instruction
from .params import LLMParams

_servers: dict[tuple[str, int, int], Any] = {}
_servers_lock = threading.Lock()
_END = object()


def _server(path: Path, context: int, threads: int) -> Any:
    """One llama.cpp server per model file and settings, shared by the whole process."""
    key = (str(path), context, threads)
    with _servers_lock:
        if key not in _servers:
            import xllamacpp

            settings = xllamacpp.CommonParams()
            settings.model.path = str(path)
            # Two slots so two conversations generate at once; each slot gets `context` tokens.
            settings.n_parallel = 2
            settings.n_ctx = context * 2
            settings.cpuparams.n_threads = threads
            settings.cpuparams_batch.n_threads = threads
            settings.verbosity = -1
            # The server also listens on a loopback port; a random key keeps other local users out.
            settings.api_keys = [secrets.token_urlsafe(24)]
            try:
                _servers[key] = xllamacpp.Server(settings)
            except Exception as exc:
                raise LLMError(f"llama.cpp could not load {path.name}: {exc}") from None
        return _servers[key]


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return os.cpu_count() or 2


@register
class LocalLLM(LLM["LocalLLM.Params"]):
    """A small chat model running on this machine's CPU, no key or network needed.

    The default is the packaged Qwen2.5 0.5B Instruct (Q4 GGUF, verified by SHA-256); the
    packaged SmolLM2 135M is a fast stand-in for tests; ``gguf_path`` runs any other GGUF. The
    model loads once per process and is shared. Function calls are constrained by the JSON
    Schema (llama.cpp grammar), so their JSON is always well-formed.
    """

    CATEGORY = "language models"
    ICON = "cpu"
    DISPLAY_NAME = ml("Local model (llama.cpp)", "Modelo local (llama.cpp)", "本機模型（llama.cpp）")
    SHORT_NAME = ml("Local model", "Modelo local", "本機模型")
    DESCRIPTION = ml(
        "A small chat model that runs on this computer's CPU with llama.cpp: private, free, no key; "
        "slower and less capable than large hosted models.",
        "Un modelo de chat pequeño que se ejecuta en la CPU de este equipo con llama.cpp: privado, "
        "gratuito y sin clave; más lento y menos capaz que los grandes modelos alojados.",
        "以 llama.cpp 在本機 CPU 上執行的小型聊天模型：私密、免費、無需金鑰；速度與能力不及大型雲端模型。",
    )
    REPRESENTATION = ml(
        "Local · {model} · ctx {context_tokens}",
        "Local · {model} · ctx {context_tokens}",
        "本機 · {model} · 上下文 {context_tokens}",
    )

    class Params(LLMParams):
        model: Literal["qwen2.5-0.5b-instruct", "qwen2.5-1.5b-instruct", "smollm2-135m-instruct"] = param(
            "qwen2.5-0.5b-instruct",
            title=ml("Packaged model", "Modelo incluido", "內建模型"),
            description=ml(
                "qwen2.5-0.5b-instruct answers from context well for its size; qwen2.5-1.5b-instruct "
                "answers harder questions but reads the passages about half as fast (install it with "
                "`make models-quality`); smollm2-135m-instruct is faster but invents facts (for tests).",
                "qwen2.5-0.5b-instruct responde bien a partir del contexto para su tamaño; "
                "qwen2.5-1.5b-instruct responde preguntas más difíciles pero lee los pasajes a la mitad de "
                "velocidad (se instala con `make models-quality`); smollm2-135m-instruct es más rápido pero "
                "inventa datos (para pruebas).",
                "qwen2.5-0.5b-instruct 以其規模而言能依據上下文良好回答；qwen2.5-1.5b-instruct 能回答較難的問題，"
                "但讀取段落的速度約只有一半（以 `make models-quality` 安裝）；smollm2-135m-instruct 較快但會捏造事實（供測試用）。",
            ),
        )
        gguf_path: str | None = param(
            None, min_length=1,
            json_schema_extra={"x-local-path": True},
            title=ml("Other GGUF file", "Otro archivo GGUF", "其他 GGUF 檔案"),
            description=ml(
                "A path to any GGUF chat model on this machine; overrides the packaged model.",
                "La ruta de cualquier modelo de chat GGUF en este equipo; reemplaza al modelo incluido.",
                "本機上任一 GGUF 聊天模型的路徑；設定後取代內建模型。",
            ),
        )
        context_tokens: int = param(
            4096, ge=512, le=32768,
            title=ml("Context (tokens)", "Contexto (tokens)", "上下文（token）"),
            description=ml(
                "The most tokens of prompt plus answer one conversation may use.",
                "El máximo de tokens de instrucción más respuesta por conversación.",
                "單一對話的提示加回答最多可用的 token 數。",
            ),
        )
        reading_tokens: int | None = param(
            None, ge=64, le=32768,
            title=ml("Reading budget (tokens)", "Presupuesto de lectura (tokens)", "閱讀預算（token）"),
            description=ml(
                "The most new prompt tokens (passages, question, conversation) one question sends the model; "
                "the fixed instructions are read once and cached. Empty: the packaged model's own, which starts "
                "an answer within about 4 seconds on two cores (420 for the 0.5B model, which reads about 150 "
                "tokens a second; 240 for the 1.5B).",
                "El máximo de tokens nuevos (pasajes, pregunta, conversación) que una pregunta envía al modelo; "
                "las instrucciones fijas se leen una vez y quedan en caché. Vacío: el propio del modelo incluido, "
                "que empieza a responder en unos 4 segundos con dos núcleos (420 para el modelo 0.5B, que lee "
                "unos 150 tokens por segundo; 240 para el 1.5B).",
                "單一問題送給模型的新提示 token（段落、問題、對話）上限；固定的指示只讀取一次並會快取。"
                "留空則採用內建模型自身的預算，在兩個核心上約 4 秒內開始回答（0.5B 模型為 420，它每秒約讀取 "
                "150 個 token；1.5B 為 240）。",
            ),
        )
        threads: int | None = param(
            None, ge=1, le=256,
            title=ml("CPU threads", "Hilos de CPU", "CPU 執行緒"),
            description=ml("Empty uses every core this process may run on.",
                           "Vacío usa todos los núcleos en los que puede ejecutarse este proceso.",
                           "留空則使用此程序可用的所有核心。"),
        )
        max_tokens: int = param(
            384, ge=1, le=8192,
            title=ml("Maximum answer length (tokens)", "Longitud máxima de respuesta (tokens)", "回答長度上限（token）"),
            description=ml("The model stops after this many tokens.", "El modelo se detiene tras esta cantidad de tokens.",
                           "模型產生此數量的 token 後即停止。"),
        )

    @classmethod
    def availability_problem(cls, params: Any) -> str | None:
        if params.get("gguf_path"):
            path = Path(params["gguf_path"]).expanduser()
            return None if path.is_file() else f"the GGUF file {path} does not exist"
        return local_models.problem(params["model"])

    def _path(self) -> Path:
        if self.params.gguf_path:
            path = Path(self.params.gguf_path).expanduser()
            if not path.is_file():
                raise LLMError(f"the GGUF file {path} does not exist")
            return path
        try:
            return local_models.ensure(self.params.model)
        except local_models.LocalModelError as exc:
            raise LLMError(str(exc)) from None

    def init_model(self) -> None:
        self._engine()

    def _engine(self) -> Any:
        return _server(self._path(), self.params.context_tokens, self.params.threads or available_cores())

    def input_limits(self) -> dict[str, int]:
        packaged = local_models.PACKAGED.get(self.params.model)
        default = packaged.reading_tokens if packaged is not None else local_models.PackagedGGUF.reading_tokens
        return {"context_tokens": self.params.context_tokens, "answer_tokens": self.params.max_tokens,
                "reading_tokens": self.params.reading_tokens or default}

    def prefill(self, messages: list[Message]) -> dict[str, float]:
        """Read ``messages`` without answering them (one token is generated), so that a later
        prompt starting the same way reads only what follows; llama.cpp's timings come back
        (``prompt_n`` tokens read, ``cache_n`` reused, ``prompt_ms``, ``prompt_per_second``)."""
        response = self._engine().handle_chat_completions(self._request(messages, max_tokens=1))
        if not isinstance(response, dict) or "choices" not in response:
            detail = response.get("error", response) if isinstance(response, dict) else response
            raise LLMError(f"the local model failed: {detail}")
        return dict(response.get("timings") or {})

    def _request(self, messages: list[Message], **options: Any) -> dict[str, Any]:
        # cache_prompt: the slot keeps the prompt it last read, so the next request reads only
        # what follows the shared start (the instructions and examples of a language).
        return {"messages": messages, "max_tokens": self.params.max_tokens,
                "temperature": self.params.temperature, "cache_prompt": True, **options}

    def _answer(self, request: dict[str, Any]) -> str:
        response = self._engine().handle_chat_completions(request)
        if not isinstance(response, dict) or "choices" not in response:
            detail = response.get("error", response) if isinstance(response, dict) else response
            raise LLMError(f"the local model failed: {detail}")
        return response["choices"][0]["message"].get("content") or ""

    def _generate(self, messages: list[Message], max_tokens: int) -> str:
        return self._answer(self._request(messages, max_tokens=max_tokens))

    def _stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        engine = self._engine()
        deltas: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()

        def receive(chunk: dict[str, Any]) -> bool:
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    deltas.put(text)
            if "error" in chunk:
                deltas.put(LLMError(f"the local model failed: {chunk['error']}"))
            return stop.is_set()  # True tells llama.cpp to stop generating

        def produce() -> None:
            try:
                engine.handle_chat_completions(self._request(messages, stream=True, max_tokens=max_tokens), receive)
            except Exception as exc:
                deltas.put(LLMError(f"the local model failed: {exc}"))
            finally:
                deltas.put(_END)

        worker = threading.Thread(target=produce, name="trellis-local-llm", daemon=True)
        worker.start()
        try:
            while (item := deltas.get()) is not _END:
                if isinstance(item, Exception):
                    raise item
                yield item
        finally:
            stop.set()

    def _function_call_text(self, messages: list[Message], schema: dict[str, Any], name: str,
                            description: str) -> str:
        format_ = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        return self._answer(self._request([json_only_instruction(schema, name, description), *messages],
                                          response_format=format_))
