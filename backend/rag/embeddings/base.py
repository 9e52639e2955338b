"""The embedding component interface, its shared parameters and the long-text strategies."""

from __future__ import annotations

import re
import threading
import zlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar

from rag.core import ConfigObject, Params, TrellisError, ml, param

from .shared import SharedModel, shared_models

if TYPE_CHECKING:
    import numpy as np

EmbeddingProgress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each batch the model encodes; ``done / total`` is
the share of the work finished (a long text split into windows counts once per window)."""


class EmbeddingError(TrellisError):
    """A model could not be loaded or a service refused a request; the text says which and why
    and never carries a secret."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


class Tokenizer(Protocol):
    """What a token chunker needs from an embedding model's tokenizer."""

    def offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span ``(start, end)`` in ``text`` of each token the model sees, in order,
        special tokens excluded."""
        ...


def batch_size_param(default: int) -> Any:
    """The ``batch_size`` setting, with the default that suits a component's runtime."""
    return param(
        default,
        title=ml("Batch size", "Tamaño de lote", "批次大小"),
        description=ml(
            "How many texts are embedded in one call. The fastest size depends on the model and "
            "the machine; the vectors do not change.",
            "Cuántos textos se vectorizan en una sola llamada. El tamaño más rápido depende del "
            "modelo y de la máquina; los vectores no cambian.",
            "每次呼叫嵌入的文字數量。最快的批次大小取決於模型與機器；向量不會改變。",
        ),
        ge=1,
        le=1024,
    )


class EmbeddingParams(Params):
    """Parameters every embedding model has."""

    batch_size: int = batch_size_param(32)
    device: Literal["CPU", "CUDA"] = param(
        "CPU",
        title=ml("Device", "Dispositivo", "運算裝置"),
        description=ml(
            "Where the model runs. CUDA needs an NVIDIA GPU and a CUDA build of PyTorch.",
            "Dónde se ejecuta el modelo. CUDA requiere una GPU NVIDIA y una versión de PyTorch con CUDA.",
            "模型執行的位置。CUDA 需要 NVIDIA GPU 及支援 CUDA 的 PyTorch。",
        ),
    )
    normalize: bool = param(
        True,
        title=ml("Normalize vectors", "Normalizar vectores", "正規化向量"),
        description=ml(
            "Scale every vector to length 1, so cosine similarity and inner product rank alike.",
            "Escala cada vector a longitud 1, para que la similitud coseno y el producto interno "
            "ordenen igual.",
            "將每個向量縮放為長度 1，使餘弦相似度與內積的排序一致。",
        ),
    )
    overflow_strategy: Literal["truncate", "aggregate"] = param(
        "truncate",
        title=ml("Long texts", "Textos largos", "過長文字"),
        description=ml(
            "A text longer than the model's maximum sequence length is either truncated (only its "
            "beginning is embedded) or aggregated (embedded in consecutive token windows whose "
            "vectors are averaged).",
            "Un texto más largo que la longitud máxima de secuencia del modelo se trunca (solo se "
            "vectoriza su comienzo) o se agrega (se vectoriza en ventanas consecutivas de tokens "
            "cuyos vectores se promedian).",
            "超過模型最大序列長度的文字可截斷（只嵌入開頭）或彙總（以連續的詞元視窗分別嵌入，再將向量取平均）。",
        ),
    )


EmbeddingParamsT = TypeVar("EmbeddingParamsT", bound=EmbeddingParams)


class EmbeddingModel(ConfigObject[EmbeddingParamsT]):
    """Base of every embedding component: texts in, float32 vectors out.

    Subclasses load their model in ``_load_model`` (called once per process for a given
    ``_model_identity``, through ``shared_models``) and encode prepared texts in ``_encode``;
    this class handles batching, the long-text strategy and normalisation.

    Attributes
    ----------
    DIMENSION : int or None
        The vector size when it is known without loading the model.
    MAX_TOKENS : int or None
        ``max_tokens`` when it is known without loading the model.
    RELEVANCE_FLOORS : mapping of language family ("en", "es", "zh") to similarity
        The cosine similarity between a question and its best passage below which the passages
        are not about the question, where it was measured (``bench/relevance_floor.py``); an
        answer is then "not found" without asking the model (``rag.strategies.relevance``).
    """

    KIND = "embedding"
    CATEGORY = "embeddings"
    Params: ClassVar[type[EmbeddingParams]] = EmbeddingParams
    DIMENSION: ClassVar[int | None] = None
    MAX_TOKENS: ClassVar[int | None] = None
    RELEVANCE_FLOORS: ClassVar[Mapping[str, float]] = {}

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._shared: SharedModel | None = None
        self._life_cycle = threading.Lock()

    # -- the interface ----------------------------------------------------------------------

    def embed_documents(self, texts: Sequence[str], *, progress: EmbeddingProgress | None = None) -> np.ndarray:
        """Embed passages; returns a float32 array of shape ``(len(texts), dimension)``.

        ``progress(done, total)`` is called after every encoded batch.
        """
        return self._embed(_as_texts(texts), query=False, progress=progress)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one search query; returns a float32 array of shape ``(dimension,)``."""
        if not isinstance(text, str):
            raise TypeError(f"embed_query takes a string, not {type(text).__name__}")
        return self._embed([text], query=True)[0]

    @property
    def dimension(self) -> int:
        """Length of the vectors (loads the model when the class cannot tell beforehand)."""
        if self.DIMENSION is not None:
            return self.DIMENSION
        self.init_model()
        return self._loaded_dimension()

    @property
    def model_key(self) -> str:
        """A short stable slug naming this model's vectors, e.g. for a vector collection; it
        differs between models and between output dimensions."""
        raise NotImplementedError

    @property
    def max_tokens(self) -> int | None:
        """The most tokens of a passage (as ``tokenizer()`` counts them; prefix and special
        tokens excluded) that the model embeds whole; None when unknown."""
        if self.MAX_TOKENS is not None:
            return self.MAX_TOKENS
        self.init_model()
        return self._window_budget(query=False)

    def tokenizer(self) -> Tokenizer | None:
        """The model's tokenizer with character offsets, or None when it has no local one."""
        return None

    @classmethod
    def availability_problem(cls, params: Mapping[str, Any]) -> str | None:
        """None when the model these ``params`` describe can run here offline; otherwise a
        sentence saying what to install or configure. Never downloads anything.

        Raises
        ------
        ConfigValidationError
            When ``params`` are not valid for this component.
        """
        return cls._availability_problem(cls.Params.model_validate(cls.validate_and_transform(params)))

    # -- life cycle -------------------------------------------------------------------------

    def init_model(self) -> None:
        """Load the model, or take a reference to the copy another component loaded."""
        with self._life_cycle:
            if self._shared is None:
                self._shared = shared_models.acquire(self._model_identity(), self._load_model)

    def close(self) -> None:
        """Drop this component's reference to the shared model."""
        with self._life_cycle:
            if self._shared is not None:
                shared_models.release(self._shared.key)
                self._shared = None
        super().close()

    @property
    def _loaded(self) -> SharedModel:
        """The shared model (its ``value`` and ``lock``), loaded on first use."""
        self.init_model()
        assert self._shared is not None
        return self._shared

    @property
    def _model(self) -> Any:
        return self._loaded.value

    # -- for subclasses ---------------------------------------------------------------------

    @classmethod
    def _availability_problem(cls, params: Any) -> str | None:
        raise NotImplementedError

    def _model_identity(self) -> Hashable:
        """What makes two components share one loaded model (source, device...)."""
        raise NotImplementedError

    def _load_model(self) -> Any:
        raise NotImplementedError

    def _loaded_dimension(self) -> int:
        raise NotImplementedError

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        """Vectors of ``texts`` (at most ``batch_size``), not yet normalised; texts already fit."""
        raise NotImplementedError

    def _fits(self, text: str, *, query: bool) -> bool:
        """Whether the model would embed ``text`` whole."""
        raise NotImplementedError

    def _window_budget(self, *, query: bool) -> int:
        """Tokens of text (``tokenizer()`` tokens) one model input holds."""
        raise NotImplementedError

    def _truncate(self, text: str, *, query: bool) -> str:
        """``text`` cut to what the model embeds; by default the model truncates by itself."""
        return text

    # -- the pipeline -----------------------------------------------------------------------

    def _embed(self, texts: list[str], *, query: bool, progress: EmbeddingProgress | None = None) -> np.ndarray:
        import numpy as np

        self.init_model()
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        if self.params.overflow_strategy == "aggregate":
            groups = [self._windows(text, query=query) for text in texts]
            flat = self._encode_in_batches([window for group in groups for window in group], query=query,
                                           progress=progress)
            vectors = np.empty((len(texts), flat.shape[1]), dtype=np.float32)
            start = 0
            for row, group in enumerate(groups):
                vectors[row] = flat[start:start + len(group)].mean(axis=0)
                start += len(group)
        else:
            vectors = self._encode_in_batches([self._truncate(text, query=query) for text in texts], query=query,
                                              progress=progress)
        if self.params.normalize:
            vectors = normalise(vectors)
        return vectors.astype(np.float32, copy=False)

    def _encode_in_batches(self, texts: list[str], *, query: bool,
                           progress: EmbeddingProgress | None = None) -> np.ndarray:
        import numpy as np

        size = self.params.batch_size
        parts = []
        for start in range(0, len(texts), size):
            parts.append(np.asarray(self._encode(texts[start:start + size], query=query), dtype=np.float32))
            if progress is not None:
                progress(min(start + size, len(texts)), len(texts))
        return np.concatenate(parts, axis=0)

    def _windows(self, text: str, *, query: bool, limit: int | None = None) -> list[str]:
        """``text`` split into consecutive token windows the model embeds whole (the first
        ``limit`` windows only, when given)."""
        if self._fits(text, query=query):
            return [text]
        tokenizer = self.tokenizer()
        assert tokenizer is not None, f"{self.NAME} has no tokenizer to split long texts with"
        spans = [span for span in tokenizer.offsets(text) if span[1] > span[0]]
        budget = max(1, self._window_budget(query=query))
        windows: list[str] = []
        start = 0
        while start < len(spans) and (limit is None or len(windows) < limit):
            end = min(start + budget, len(spans))
            window = text[spans[start][0]:spans[end - 1][1]]
            # A cut inside a word can re-tokenise into more pieces than the budget counted.
            while end - start > 1 and not self._fits(window, query=query):
                end -= 1
                window = text[spans[start][0]:spans[end - 1][1]]
            windows.append(window)
            start = end
        return windows or [text]

    def _device(self) -> str:
        return "cuda" if self.params.device == "CUDA" else "cpu"


def normalise(vectors: np.ndarray) -> np.ndarray:
    """Rows of ``vectors`` scaled to unit length (zero rows stay zero)."""
    import numpy as np

    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors / np.maximum(norms, 1e-12)


def slug(text: str, *, max_length: int = 48) -> str:
    """``text`` as a lowercase ``a-z0-9-`` slug; a long one keeps a checksum of the whole so two
    long names sharing a beginning stay apart."""
    value = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "model"
    if len(value) > max_length:
        checksum = f"{zlib.crc32(text.encode('utf-8')):08x}"
        value = f"{value[:max_length - 9].rstrip('-')}-{checksum}"
    return value


def cuda_problem(device: str) -> str | None:
    """Why ``device`` cannot be used here, or None. Imports torch only when CUDA is asked for."""
    if device != "CUDA":
        return None
    try:
        import torch
    except ImportError:
        return "device CUDA needs PyTorch; install torch with CUDA support or choose CPU"
    if not torch.cuda.is_available():
        return "device CUDA was chosen, but PyTorch sees no CUDA GPU on this machine; choose CPU"
    return None


def _as_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("embed_documents takes a sequence of strings; use embed_query for one text")
    items = list(texts)
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise TypeError(f"text {index} is a {type(item).__name__}, not a string")
    return items
