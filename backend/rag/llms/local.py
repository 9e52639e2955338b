"""``LocalLLM``: a GGUF chat model run in-process by llama.cpp (the prebuilt xllamacpp wheel)."""

from __future__ import annotations

import functools
import http.client
import json
import logging
import os
import queue
import secrets
import statistics
import threading
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from rag.core import ml, param, register

from . import local_models
from .base import LLM, LLMError, Message, estimate_tokens, json_only_instruction
from .params import LLMParams

logger = logging.getLogger(__name__)
_servers_lock = threading.Lock()
_END = object()
ANSWER_MODEL = "qwen2.5-1.5b-instruct"
"""The packaged model that writes answers by default. On 100 XQuAD-es and -zh questions it gave
a short answer holding the reference 0.80/0.70 of the time (the 0.5B 0.29/0.35) and copied a
passage for 1% of them (the 0.5B 5%), with its first word at a p50 of 1.7 s on two idle cores
that read it at ~50 tokens a second (bench/answers.py, bench/README.md)."""
FIRST_TOKEN_HEADROOM_S = 0.5
"""Of the time to the first word, what retrieval and the first generated token take: the rest is
left for reading the prompt."""


class ReadingSpeed:
    """How fast one model has read prompts on this machine lately: the median prompt tokens a
    second of its last reads long enough to time (llama.cpp's own timings of each request)."""

    SHORTEST_TIMED_READ = 64
    """Reads of fewer new tokens are mostly fixed cost, not reading speed."""

    def __init__(self, keep: int = 9) -> None:
        self._speeds: deque[float] = deque(maxlen=keep)
        self._lock = threading.Lock()

    def record(self, timings: dict[str, Any] | None) -> None:
        if not timings or timings.get("prompt_n", 0) < self.SHORTEST_TIMED_READ:
            return
        speed = timings.get("prompt_per_second")
        if isinstance(speed, (int, float)) and speed > 0:
            with self._lock:
                self._speeds.append(float(speed))

    def tokens_per_second(self) -> float | None:
        with self._lock:
            return statistics.median(self._speeds) if self._speeds else None


_reading_speeds: dict[tuple[str, int], ReadingSpeed] = {}
_reading_speeds_lock = threading.Lock()  # not the servers' lock, which is held while a model loads


class _Loaded:
    """A model llama.cpp has loaded: its in-process server, and the model's own tokenizer, which
    that server also offers on a loopback port (behind a random key that keeps other local users
    out)."""

    def __init__(self, server: Any, api_key: str) -> None:
        self.server = server
        address = urlsplit(server.listening_address)
        self._host, self._port = address.hostname or "127.0.0.1", address.port
        self._headers = {"Authorization": f"Bearer {api_key}", "Content-Type": "application/json"}
        self._connections = threading.local()  # one kept-alive connection per thread
        # The instructions, the examples and a passage asked about again are counted once.
        self.count_tokens = functools.lru_cache(maxsize=8192)(self._count_tokens)

    def _count_tokens(self, text: str) -> int:
        try:
            return self._tokenize(text)
        except (OSError, http.client.HTTPException):
            # The server may have closed a kept-alive connection: once more, on a new one.
            self._connections.value.close()
            self._connections.value = None
            return self._tokenize(text)

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


_servers: dict[tuple[str, int, int], _Loaded] = {}
_tokenizers: dict[str, _Loaded] = {}
"""A loaded server per packaged model name or GGUF path, for its tokenizer."""


def _server(path: Path, context: int, threads: int) -> _Loaded:
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
            api_key = secrets.token_urlsafe(24)
            settings.api_keys = [api_key]
            try:
                _servers[key] = _Loaded(xllamacpp.Server(settings), api_key)
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
                "The most new prompt tokens (passages, question, conversation) one question sends the model; "
                "the fixed instructions are read once and cached. Empty: as many as this model reads on this "
                "machine within the time to the first word, measured as it reads.",
                "El máximo de tokens nuevos (pasajes, pregunta, conversación) que una pregunta envía al modelo; "
                "las instrucciones fijas se leen una vez y quedan en caché. Vacío: tantos como este modelo lee "
                "en este equipo dentro del tiempo hasta la primera palabra, medido mientras lee.",
                "單一問題送給模型的新提示 token（段落、問題、對話）上限；固定的指示只讀取一次並會快取。"
                "留空則為此模型在本機於第一個字出現前的時間內能讀取的數量，於讀取時實測。",
            ),
        )
        first_token_seconds: float = param(
            4.0, ge=1.0, le=600.0,
            title=ml("Time to the first word (seconds)", "Tiempo hasta la primera palabra (segundos)",
                     "第一個字出現前的時間（秒）"),
            description=ml(
                "How long a question may wait before its answer starts, when the reading budget is empty: "
                "the passages sent are cut to what the model reads in that time on this machine. Longer "
                "lets it read more passages.",
                "Cuánto puede esperar una pregunta hasta que empieza su respuesta, si el presupuesto de "
                "lectura está vacío: los pasajes enviados se recortan a lo que el modelo lee en ese tiempo "
                "en este equipo. Más tiempo le deja leer más pasajes.",
                "閱讀預算留空時，問題在回答開始前最多等待的時間：送出的段落會裁切到模型在本機於此時間內能讀取的量。"
                "時間越長，能讀的段落越多。",
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

    def reading_speed(self) -> ReadingSpeed:
        """The reading speed of this model with these threads, shared by every instance."""
        key = (self.params.gguf_path or self.params.model, self.params.threads or available_cores())
        with _reading_speeds_lock:
            return _reading_speeds.setdefault(key, ReadingSpeed())

    def input_limits(self) -> dict[str, int]:
        limits = {"context_tokens": self.params.context_tokens, "answer_tokens": self.params.max_tokens}
        if self.params.reading_tokens is not None:
            return {**limits, "reading_tokens": self.params.reading_tokens}
        speed = self.reading_speed().tokens_per_second()
        if speed is None:  # not read anything yet: the packaged model's speed on two idle cores
            packaged = local_models.PACKAGED.get(self.params.model)
            speed = (packaged or local_models.PackagedGGUF).reading_tokens_per_s
        seconds = max(self.params.first_token_seconds - FIRST_TOKEN_HEADROOM_S, 0.5)
        reading = max(int(speed * seconds), ReadingSpeed.SHORTEST_TIMED_READ)
        return {**limits, "reading_tokens": reading, "reading_tokens_per_s": round(speed)}

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
        self.reading_speed().record(response.get("timings"))
        return response

    def _answer(self, request: dict[str, Any]) -> str:
        return self._completion(request)["choices"][0]["message"].get("content") or ""

    def _generate(self, messages: list[Message], max_tokens: int) -> str:
        return self._answer(self._request(messages, max_tokens=max_tokens))

    def _stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        engine = self._engine()
        speed = self.reading_speed()
        deltas: queue.Queue[Any] = queue.Queue()
        stop = threading.Event()

        def receive(chunk: dict[str, Any]) -> bool:
            speed.record(chunk.get("timings"))  # only the last chunk carries them
            for choice in chunk.get("choices") or []:
                text = (choice.get("delta") or {}).get("content")
                if text:
                    deltas.put(text)
            if "error" in chunk:
                deltas.put(LLMError(f"the local model failed: {chunk['error']}"))
            return stop.is_set()  # True tells llama.cpp to stop generating

        def produce() -> None:
            try:
                engine.server.handle_chat_completions(self._request(messages, stream=True, max_tokens=max_tokens),
                                                      receive)
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
