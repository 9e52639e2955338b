"""``LocalLLM``: a GGUF chat model run in-process by llama.cpp (the prebuilt xllamacpp wheel)."""

from __future__ import annotations

import functools
import http.client
import json
import logging
import os
import queue
import secrets
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from rag.core import ml, param, register
from rag.core.environment import environment_number

from . import gguf, local_models
from .base import (
    LLM,
    LLMError,
    Message,
    ReadingDefaults,
    estimate_tokens,
    json_only_instruction,
    schema_with_grammar_limits,
)
from .params import LLMParams
from .server_pool import MB, TOO_LARGE, Pooled, PoolLimits, ServerPool, ServerPoolError

logger = logging.getLogger(__name__)
_END = object()


@dataclass(frozen=True)
class _Usage:
    """The tokens a streamed answer read and wrote, as llama.cpp's last chunk reports them."""

    counts: dict[str, Any]


ANSWER_MODEL = "qwen2.5-1.5b-instruct"
"""The packaged model that writes answers by default. On 100 XQuAD-es and -zh questions it gave
a short answer holding the reference 0.80/0.70 of the time (the 0.5B 0.29/0.35) and copied a
passage for 1% of them (the 0.5B 5%), with its first word at a p50 of 1.7 s on two idle cores
that read it at ~50 tokens a second (bench/answers.py, bench/README.md)."""
SLOTS = 2
"""Conversations one server generates for at once; each slot gets the whole context."""
DEFAULT_MAX_SERVERS = 3
DEFAULT_MAX_MEMORY_MB = 4096
SERVER_OVERHEAD_BYTES = 96 * MB
"""What a server holds besides its weights and its context cache (compute buffers, threads)."""
UNKNOWN_CACHE_BYTES_PER_TOKEN = 128 * 1024
"""The context cache of a token, for a file whose header does not say (a 7B model's, about)."""
SMALLEST_CONTEXT, CONTEXT_STEP = 512, 256


class _Tokenizer:
    """A loaded model's own tokenizer, which its server offers on a loopback port (behind a
    random key that keeps other local users out)."""

    def __init__(self, host: str, port: int | None, headers: dict[str, str]) -> None:
        self._host, self._port, self._headers = host, port, headers
        self._connections = threading.local()  # one kept-alive connection per thread

    def count(self, text: str) -> int:
        try:
            return self._tokenize(text)
        except (OSError, http.client.HTTPException):
            # The server may have closed a kept-alive connection: once more, on a new one.
            self._connections.value.close()
            self._connections.value = None
            return self._tokenize(text)

    def slots_status(self) -> int:
        """The HTTP status of ``GET /slots``, which the server answers from its main loop."""
        connection = http.client.HTTPConnection(self._host, self._port, timeout=30)
        try:
            connection.request("GET", "/slots", headers=self._headers)
            response = connection.getresponse()
            response.read()
            return response.status
        finally:
            connection.close()

    def _tokenize(self, text: str) -> int:
        connection = getattr(self._connections, "value", None)
        if connection is None:
            connection = self._connections.value = http.client.HTTPConnection(self._host, self._port, timeout=10)
        connection.request("POST", "/tokenize", json.dumps({"content": text}).encode(), self._headers)
        response = connection.getresponse()
        payload = response.read()
        if response.status != 200:
            raise LLMError(f"the local model's tokenizer answered HTTP {response.status}")
        return len(json.loads(payload)["tokens"])


class _Loaded(Pooled):
    """A model llama.cpp has loaded, held by the pool (``_servers``): its in-process server, and
    the model's own tokenizer.

    ``server`` leases it for each request (a stream's included), so the pool never closes a
    server that is answering. Only ``_server`` refers to llama.cpp's server, so ``close`` frees
    it there and then (its threads end, its port closes), at a moment the pool chose."""

    def __init__(self, server: Any, api_key: str, reacquire: Callable[[], _Loaded]) -> None:
        self._server = server
        self.reacquire = reacquire
        """The pool's server for the same model and settings, for a request that finds this one closed."""
        self.address = server.listening_address
        address = urlsplit(self.address)
        tokenizer = _Tokenizer(address.hostname or "127.0.0.1", address.port,
                               {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"})
        # The instructions, the examples and a passage asked about again are counted once.
        self.count_tokens = functools.lru_cache(maxsize=8192)(tokenizer.count)
        self._wait_until_serving(tokenizer)

    def _wait_until_serving(self, tokenizer: _Tokenizer) -> None:
        """Return once the server's main loop runs. xllamacpp's server hands itself over before
        its loop starts, and freeing it before then leaves the loop running and the freeing
        thread waiting for it for ever; a request the loop answers proves it runs."""
        try:
            if tokenizer.slots_status() == 200:
                return
        except (OSError, http.client.HTTPException):
            pass
        self._server.handle_chat_completions({"messages": [{"role": "user", "content": "."}], "max_tokens": 1})

    @property
    def server(self) -> _LeasedServer:
        return _LeasedServer(self)

    def close(self) -> None:
        super().close()
        self._server = None


class _LeasedServer:
    """llama.cpp's server, each request made while holding a lease on it."""

    def __init__(self, loaded: _Loaded) -> None:
        self._loaded = loaded

    def handle_chat_completions(self, *args: Any) -> Any:
        loaded = self._loaded
        while True:
            with loaded.lease() as alive:
                if alive:
                    return loaded._server.handle_chat_completions(*args)
            loaded = loaded.reacquire()  # closed since it was handed out: the pool's current one


def configure_local_servers(*, max_servers: int | None = None, max_memory_mb: int | None = None) -> None:
    """Bound this process's local model servers (the Django app passes its settings); None
    reads the environment: ``TRELLIS_LOCAL_LLM_MAX_SERVERS`` (3) and
    ``TRELLIS_LOCAL_LLM_MAX_MEMORY_MB`` (4096; 0 for no memory limit)."""
    global _configured_limits
    _configured_limits = (max_servers, max_memory_mb)


_configured_limits: tuple[int | None, int | None] = (None, None)


def server_limits() -> PoolLimits:
    """How many local model servers this process may hold, and how much memory in all."""
    servers, memory = _configured_limits
    if servers is None:
        servers = int(environment_number("TRELLIS_LOCAL_LLM_MAX_SERVERS", DEFAULT_MAX_SERVERS))
    if memory is None:
        memory = int(environment_number("TRELLIS_LOCAL_LLM_MAX_MEMORY_MB", DEFAULT_MAX_MEMORY_MB))
    return PoolLimits(max(int(servers), 1), int(memory) * MB if memory > 0 else None)


def server_memory_bytes(path: Path, context: int) -> int:
    """About what a server of the model in ``path`` takes with ``context`` tokens a slot: its
    weights, its context cache and its buffers."""
    shape = gguf.model_shape(path)
    per_token = shape.cache_bytes_per_token or UNKNOWN_CACHE_BYTES_PER_TOKEN
    return shape.file_bytes + SLOTS * context * per_token + SERVER_OVERHEAD_BYTES


def fitted_context(path: Path, context: int, limits: PoolLimits | None = None) -> int:
    """``context`` clamped to what the model was trained for and to what the memory limit
    leaves once the weights are loaded (in steps of 256, at least 512); raises
    ``ServerPoolError`` when even 512 tokens do not fit."""
    limits = limits or server_limits()
    shape = gguf.model_shape(path)
    if shape.trained_context:
        context = min(context, max(shape.trained_context, SMALLEST_CONTEXT))
    if limits.max_memory_bytes is not None:
        per_slot_token = SLOTS * (shape.cache_bytes_per_token or UNKNOWN_CACHE_BYTES_PER_TOKEN)
        room = limits.max_memory_bytes - shape.file_bytes - SERVER_OVERHEAD_BYTES
        most = room // per_slot_token // CONTEXT_STEP * CONTEXT_STEP
        if most < SMALLEST_CONTEXT:
            raise ServerPoolError(TOO_LARGE, "local_model_too_large", name=path.name,
                                  needed=server_memory_bytes(path, SMALLEST_CONTEXT) // MB,
                                  limit=limits.max_memory_bytes // MB)
        context = min(context, most)
    return max(context, SMALLEST_CONTEXT)


def _load(path: Path, context: int, threads: int, reacquire: Callable[[], _Loaded]) -> _Loaded:
    import xllamacpp

    settings = xllamacpp.CommonParams()
    settings.model.path = str(path)
    # Two slots so two conversations generate at once; each slot gets `context` tokens.
    settings.n_parallel = SLOTS
    settings.n_ctx = context * SLOTS
    settings.cpuparams.n_threads = threads
    settings.cpuparams_batch.n_threads = threads
    settings.verbosity = -1
    api_key = secrets.token_urlsafe(24)
    settings.api_keys = [api_key]
    try:
        return _Loaded(xllamacpp.Server(settings), api_key, reacquire)
    except Exception as exc:
        raise LLMError(f"llama.cpp could not load {path.name}: {exc}") from None


_servers: ServerPool[_Loaded] = ServerPool(server_limits)
"""Every llama.cpp server of this process, keyed by (model file, context a slot, threads)."""


class _TokenizerIndex:
    """Which model file each model (a packaged name or a GGUF path) was loaded from, so that
    its tokenizer is found in whichever server the pool holds for that file now; it holds no
    server itself, so a server the pool let go of is not kept alive here."""

    def __init__(self) -> None:
        self._files: dict[str, str] = {}

    def setdefault(self, identity: str, loaded: _Loaded) -> _Loaded:
        self._files[identity] = loaded.key[0]
        return loaded

    def get(self, identity: str) -> _Loaded | None:
        file = self._files.get(identity)
        return _servers.find(lambda key: key[0] == file) if file is not None else None


_tokenizers = _TokenizerIndex()


def _server(path: Path, context: int, threads: int) -> _Loaded:
    """A llama.cpp server for this model file, from the process's pool: at most
    ``TRELLIS_LOCAL_LLM_MAX_SERVERS`` of them within ``TRELLIS_LOCAL_LLM_MAX_MEMORY_MB``, the
    least recently used idle one let go of to make room. ``threads`` is clamped to the cores
    this process may use and ``context`` to what the model and the memory limit allow; a server
    of the same file and threads with a larger context serves a smaller one."""
    threads = min(max(threads, 1), available_cores())
    limits = server_limits()
    context = fitted_context(path, context, limits)
    key = (str(path), context, threads)
    return _servers.acquire(
        key, load=lambda: _load(path, context, threads, lambda: _server(path, context, threads)),
        memory_bytes=server_memory_bytes(path, context),
        serves=lambda other: other[0] == key[0] and other[2] == threads and other[1] >= context)


def available_cores() -> int:
    """The cores this process may run on (its CPU affinity, not the machine's count)."""
    try:
        return max(len(os.sched_getaffinity(0)), 1)
    except AttributeError:  # not Linux
        return os.cpu_count() or 2


@register
class LocalLLM(LLM["LocalLLM.Params"]):
    """A small chat model running on this machine's CPU, no key or network needed.

    The default is the packaged Qwen2.5 0.5B Instruct (Q4 GGUF, verified by SHA-256), fast enough
    for the several calls of re-ranking, agentic plans and grading; answers are written by the
    packaged Qwen2.5-Coder 1.5B Instruct (``ANSWER_MODEL``) unless a pipeline says otherwise. The
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
                "qwen2.5-1.5b-instruct writes the answers by default: it answers about twice as often but "
                "reads the passages about half as fast; qwen2.5-0.5b-instruct is fast enough for the several "
                "calls of re-ranking and agentic plans; smollm2-135m-instruct is faster still but invents "
                "facts (for tests).",
                "qwen2.5-1.5b-instruct redacta las respuestas por defecto: acierta cerca del doble de veces "
                "pero lee los pasajes a la mitad de velocidad; qwen2.5-0.5b-instruct es lo bastante rápido "
                "para las varias llamadas de la reordenación y los planes agénticos; smollm2-135m-instruct "
                "es aún más rápido pero inventa datos (para pruebas).",
                "qwen2.5-1.5b-instruct 預設負責撰寫回答：答對的次數約為兩倍，但讀取段落的速度約只有一半；"
                "qwen2.5-0.5b-instruct 的速度足以應付重新排序與代理式規劃的多次呼叫；smollm2-135m-instruct 更快但會捏造事實（供測試用）。",
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
                "The most new prompt tokens (passages, question, conversation) one question sends the model, "
                "always obeyed; the fixed instructions are read once and cached. Empty: when the pipeline does "
                "not say how many passages to send, the packaged model's fixed default (a few passages its "
                "answer starts on within seconds); otherwise only the input budget and the context limit.",
                "El máximo de tokens nuevos (pasajes, pregunta, conversación) que una pregunta envía al modelo, "
                "siempre respetado; las instrucciones fijas se leen una vez y quedan en caché. Vacío: si el "
                "pipeline no dice cuántos pasajes enviar, el valor fijo del modelo incluido (unos pocos pasajes "
                "con los que su respuesta empieza en segundos); si no, solo el presupuesto de entrada y el "
                "límite de contexto.",
                "單一問題送給模型的新提示 token（段落、問題、對話）上限，一律遵守；固定的指示只讀取一次並會快取。"
                "留空時：若流程未指定送出幾個段落，使用內建模型的固定預設值（少數幾個段落，讓回答在數秒內開始）；"
                "否則只受輸入預算與上下文長度限制。",
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

    def _engine(self) -> _Loaded:
        loaded = _server(self._path(), self.params.context_tokens, self.params.threads or available_cores())
        _tokenizers.setdefault(self._model_identity(), loaded)
        return loaded

    def _model_identity(self) -> str:
        return self.params.gguf_path or self.params.model

    def input_limits(self) -> dict[str, int]:
        limits = {"context_tokens": self.params.context_tokens, "answer_tokens": self.params.max_tokens}
        if self.params.reading_tokens is not None:
            limits["reading_tokens"] = self.params.reading_tokens
        return limits

    def reading_defaults(self) -> ReadingDefaults:
        """A small model on a CPU reads a prompt at tens of tokens a second: unless the pipeline
        says how many passages to send, it reads a few, within a fixed budget of new tokens (the
        packaged model's, ``local_models``), so its answer starts within seconds. Fixed, not
        measured: the same question gets the same prompt on an idle or a busy machine."""
        packaged = local_models.PACKAGED.get(self.params.model) if not self.params.gguf_path else None
        defaults = packaged or local_models.PackagedGGUF
        return ReadingDefaults(passages=defaults.default_passages, reading_tokens=defaults.default_reading_tokens)

    def _already_loaded(self) -> _Loaded | None:
        """This model as llama.cpp already holds it (with any window or threads), without loading
        it: counting a question's tokens must not wait for a model to load."""
        return _tokenizers.get(self._model_identity())

    def tokens_counted_by(self) -> str:
        return "the model's tokenizer" if self._already_loaded() is not None else super().tokens_counted_by()

    def count_tokens(self, text: str) -> int:
        """The tokens ``text`` takes in this model's prompt, by its own tokenizer once the model is
        loaded (an estimate before: it counts a Chinese character as one token, where Qwen's
        tokenizer takes about 0.8)."""
        loaded = self._already_loaded()
        if loaded is None or not text:
            return estimate_tokens(text)
        try:
            return loaded.count_tokens(text)
        except Exception:
            logger.warning("the local model's tokenizer failed; estimating the tokens instead", exc_info=True)
            return estimate_tokens(text)

    def prefill(self, messages: list[Message]) -> dict[str, float]:
        """Read ``messages`` without answering them (one token is generated), so that a later
        prompt starting the same way reads only what follows; llama.cpp's timings come back
        (``prompt_n`` tokens read, ``cache_n`` reused, ``prompt_ms``, ``prompt_per_second``)."""
        response = self._completion(self._request(messages, max_tokens=1))
        return dict(response.get("timings") or {})

    def _request(self, messages: list[Message], **options: Any) -> dict[str, Any]:
        # cache_prompt: the slot keeps the prompt it last read, so the next request reads only
        # what follows the shared start (the instructions and examples of a language).
        return {"messages": messages, "max_tokens": self.params.max_tokens,
                "temperature": self.params.temperature, "cache_prompt": True, **options}

    def _completion(self, request: dict[str, Any]) -> dict[str, Any]:
        response = self._engine().server.handle_chat_completions(request)
        if not isinstance(response, dict) or "choices" not in response:
            detail = response.get("error", response) if isinstance(response, dict) else response
            raise LLMError(f"the local model failed: {detail}")
        self._count_usage(response.get("usage"))
        return response

    def _answer(self, request: dict[str, Any]) -> str:
        return self._completion(request)["choices"][0]["message"].get("content") or ""

    def _generate(self, messages: list[Message], max_tokens: int) -> str:
        return self._answer(self._request(messages, max_tokens=max_tokens))

    def _stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        engine = self._engine()
        deltas: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()

        def receive(chunk: dict[str, Any]) -> bool:
            if chunk.get("usage"):
                deltas.put(_Usage(chunk["usage"]))
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    deltas.put(text)
            if "error" in chunk:
                deltas.put(LLMError(f"the local model failed: {chunk['error']}"))
            return stop.is_set()  # True tells llama.cpp to stop generating

        def produce() -> None:
            try:
                engine.server.handle_chat_completions(
                    self._request(messages, stream=True, max_tokens=max_tokens,
                                  stream_options={"include_usage": True}), receive)
            except Exception as exc:
                deltas.put(LLMError(f"the local model failed: {exc}"))
            finally:
                deltas.put(_END)

        worker = threading.Thread(target=produce, name="trellis-local-llm", daemon=True)
        worker.start()
        usage = None
        try:
            while (item := deltas.get()) is not _END:
                if isinstance(item, Exception):
                    raise item
                if isinstance(item, _Usage):
                    usage = item.counts  # counted here: the recorder belongs to the run's thread
                    continue
                yield item
        finally:
            stop.set()
            self._count_usage(usage)

    def _schema_to_follow(self, schema: dict[str, Any]) -> dict[str, Any]:
        # The grammar llama.cpp builds from the schema enforces the limits as it samples.
        return schema_with_grammar_limits(schema)

    def _function_call_text(self, messages: list[Message], schema: dict[str, Any], name: str,
                            description: str) -> str:
        format_ = {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}
        return self._answer(self._request([json_only_instruction(schema, name, description), *messages],
                                          response_format=format_))
