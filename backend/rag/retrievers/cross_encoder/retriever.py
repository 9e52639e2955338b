"""``SentenceTransformerCrossEncoderRetriever``: re-score a child's candidates pair by pair."""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from rag.core import (
    ComponentRef,
    Problem,
    TrellisError,
    children_param,
    install_model_action,
    ml,
    param,
    ref,
    register,
)
from rag.core.i18n import gettext_noop
from rag.tracing import TraceNode

from ..base import CompositeRetriever, Hit, RerankParams, RetrieverParams
from ..composite import EnsembleRetriever  # noqa: F401  (registers the default child)

DEFAULT_MODEL = "cross-encoder/ms-marco-MiniLM-L-6-v2"
_models: dict[tuple[str, str, str], Any] = {}
_models_lock = threading.Lock()


def resolve_cross_encoder(model_name: str) -> tuple[str, str]:
    """``(what CrossEncoder loads, version)`` for ``model_name``: an installed model (by name,
    or by the hub id it came from), else a local directory spelt as a path (``spelt_as_path``),
    else a hub id to find in the local Hugging Face cache, whatever exists under the working
    directory. What it loads is an absolute folder or a hub id. ``version`` changes when an
    installed model is replaced."""
    from rag.models_manager import CROSS_ENCODER, spelt_as_path, store

    installed = store().resolve(model_name, CROSS_ENCODER)
    if installed is not None:
        return str(installed.path.expanduser().absolute()), installed.version
    path = Path(model_name).expanduser()
    if spelt_as_path(model_name) and path.is_dir():
        return str(path.resolve()), ""
    return model_name, ""


def cross_encoder_problem(model_name: str) -> Problem | None:
    """None when ``model_name`` (an installed name, a local directory or a hub id) has a local
    copy; otherwise what to do about it. Looks only at the disk: never downloads. A directory is
    one spelt as a path (``spelt_as_path``): a name is never looked up under the working directory."""
    from rag.models_manager import CROSS_ENCODER, spelt_as_path, store

    if store().resolve(model_name, CROSS_ENCODER) is not None:
        return None
    path = Path(model_name).expanduser()
    if spelt_as_path(model_name) and path.is_dir():
        return None if (path / "config.json").is_file() else Problem(
            gettext_noop("{name} is a directory without config.json; point model_name at a saved cross-encoder"),
            name=model_name)
    try:
        from huggingface_hub import try_to_load_from_cache

        cached = try_to_load_from_cache(model_name, "config.json")
    except Exception:
        cached = None
    if isinstance(cached, str):
        return None
    # The words name the Models page only: the action lets a page link to its install form filled
    # in, and a person at a terminal has the models command (``manage.py models install --help``).
    return Problem(gettext_noop(
        "no cross-encoder named {name} is installed (no package ships one): install it on the Models page, or set "
        "model_name to an installed model or a local directory"), name=model_name,
        action=install_model_action(CROSS_ENCODER, model_name))


def sigmoid(value: float) -> float:
    """The logistic function, without overflow for large negative logits."""
    if value >= 0:
        return 1.0 / (1.0 + math.exp(-value))
    exponential = math.exp(value)
    return exponential / (1.0 + exponential)


def load_cross_encoder(model_name: str, device: str) -> Any:
    """The ``sentence_transformers.CrossEncoder`` for ``model_name`` on ``device`` ("CPU" or
    "CUDA"), loaded once per process (and per installed version) and shared. Only local files
    are read: nothing is downloaded.

    Raises
    ------
    TrellisError
        When the model has no local copy (``cross_encoder_problem`` says what to do).
    """
    source, version = resolve_cross_encoder(model_name)
    key = (source, version, device)
    with _models_lock:
        if key not in _models:
            problem = cross_encoder_problem(model_name)
            if problem:
                raise TrellisError(problem)
            _models[key] = _load(source, device)
        return _models[key]


def _load(source: str, device: str) -> Any:
    """A ``CrossEncoder`` from ``source`` (an absolute folder or a cached hub id), once its files
    name no function to run; ``SystemExit`` and the like raised while loading become
    ``ModelLoadAborted``."""
    import torch
    from sentence_transformers import CrossEncoder

    from rag.models_manager.safety import abort_guard, hub_snapshot_folder, model_files_problem

    folder = Path(source) if Path(source).is_absolute() else hub_snapshot_folder(source)
    if folder is None:
        raise TrellisError(Problem(gettext_noop("{name} is not in the local Hugging Face cache"), name=source))
    problem = model_files_problem(folder)
    if problem is not None:
        raise problem
    with abort_guard():
        # An activation given here is one the model's configuration is never asked for.
        return CrossEncoder(str(folder), device=device.lower(), local_files_only=True, trust_remote_code=False,
                            activation_fn=torch.nn.Identity())


def cross_encoder_logits(model: Any, question: str, texts: Sequence[str], *, batch_size: int) -> list[float]:
    """The raw relevance logit of each (question, text) pair, in the order of ``texts``."""
    if not texts:
        return []
    import torch

    # Raw logits: callers apply the sigmoid themselves so scores and distances agree exactly.
    scores = model.predict([(question, text) for text in texts], batch_size=batch_size,
                           activation_fn=torch.nn.Identity(), convert_to_numpy=True, show_progress_bar=False)
    return [float(score) for score in scores.reshape(len(texts), -1)[:, 0]]


class CrossEncoderParams(RerankParams):
    """The model settings of the cross-encoder retriever and of the cross-encoder re-ranker slot."""

    model_name: str = param(
        DEFAULT_MODEL, min_length=1, max_length=500,
        title=ml("Model", "Modelo", "模型"),
        description=ml(
            "An installed cross-encoder (Models page), a Hugging Face name with a local copy, or a local directory "
            "(a path starting with /, ./ or ~).",
            "Un cross-encoder instalado (página Modelos), un nombre de Hugging Face con copia local, o un directorio "
            "local (una ruta que empiece por /, ./ o ~).",
            "已安裝的交叉編碼器（模型頁面）、已有本機副本的 Hugging Face 名稱，或本機目錄（以 /、./ 或 ~ 開頭的路徑）。",
        ),
        json_schema_extra={"x-model-name": True, "x-model-kind": "cross-encoder"},
    )
    batch_size: int = param(
        32, ge=1, le=1024,
        title=ml("Batch size", "Tamaño de lote", "批次大小"),
        description=ml("Pairs scored per batch.", "Pares puntuados por lote.", "每批評分的配對數。"),
    )
    device: Literal["CPU", "CUDA"] = param(
        "CPU",
        title=ml("Device", "Dispositivo", "裝置"),
        description=ml("Where the model runs.", "Dónde se ejecuta el modelo.", "模型執行的位置。"),
    )


@register
class SentenceTransformerCrossEncoderRetriever(CompositeRetriever["SentenceTransformerCrossEncoderRetriever.Params"]):
    """Asks its one child for candidates (the child's own ``top_k`` sets how many), scores each
    (question, chunk) pair with a cross-encoder, and keeps the best ``top_k``.

    Scores are ``sigmoid(logit)`` in (0, 1); ``score_chunks`` distances are ``1 - sigmoid``.
    """

    CATEGORY = "re-ranking"
    ICON = "list-ordered"
    DISPLAY_NAME = ml("Cross-encoder re-ranker", "Reordenador cross-encoder", "交叉編碼器重新排序")
    SHORT_NAME = ml("Cross-encoder", "Cross-encoder", "交叉編碼器")
    DESCRIPTION = ml(
        "Reads the question and each candidate chunk together with a cross-encoder model and "
        "re-orders the candidates by relevance; slower than retrieval, usually more precise.",
        "Lee la pregunta junto con cada fragmento candidato mediante un modelo cross-encoder y "
        "reordena los candidatos por relevancia; más lento que recuperar, normalmente más preciso.",
        "以交叉編碼器模型同時讀取問題與每個候選區塊，依相關性重新排序；比檢索慢，但通常更精確。",
    )
    REPRESENTATION = ml(
        "Cross-encoder · {model_name} · keep {top_k}",
        "Cross-encoder · {model_name} · conserva {top_k}",
        "交叉編碼器 · {model_name} · 保留 {top_k}",
    )

    class Params(CrossEncoderParams, RetrieverParams):
        children: list[ComponentRef] = children_param(
            "retriever",
            min_children=1,
            max_children=1,
            default=[ref("EnsembleRetriever")],
            title=ml("Candidate retriever", "Recuperador de candidatos", "候選檢索器"),
            description=ml(
                "Exactly one child; its own top_k sets how many candidates are re-ranked.",
                "Exactamente un hijo; su propio top_k fija cuántos candidatos se reordenan.",
                "恰好一個子檢索器；其 top_k 決定要重新排序的候選數量。",
            ),
        )

    @classmethod
    def availability_problem(cls, params: Any) -> str | None:
        return cross_encoder_problem(params["model_name"])

    def init_model(self) -> None:
        self._model()

    def _model(self) -> Any:
        return load_cross_encoder(self.params.model_name, self.params.device)

    def _logits(self, query: str, texts: Sequence[str]) -> list[float]:
        if not texts:
            return []
        return cross_encoder_logits(self._model(), query, texts, batch_size=self.params.batch_size)

    @property
    def score_scale(self) -> str:
        return "relevance"

    def _search(self, query: str, top_k: int, node: TraceNode) -> list[Hit]:
        candidates, child_node = self.children[0].search(query)
        node.children = [child_node]
        logits = self._logits(query, [hit.chunk.text for hit in candidates])
        rescored = [Hit(hit.chunk, sigmoid(logit), ({"child": 0, "rank": rank, "score": hit.score},))
                    for rank, (hit, logit) in enumerate(zip(candidates, logits, strict=True), start=1)]
        rescored.sort(key=lambda hit: -hit.score)
        return rescored[:top_k]

    def score_chunks(self, chunk_ids: Sequence[int], query: str) -> list[tuple[int, float]]:
        chunks = self.chunks_by_id or self.children[0].chunks_by_id
        known = [int(chunk_id) for chunk_id in chunk_ids if int(chunk_id) in chunks]
        logits = self._logits(query, [chunks[chunk_id].text for chunk_id in known])
        distances = {chunk_id: 1.0 - sigmoid(logit) for chunk_id, logit in zip(known, logits, strict=True)}
        return sorted(((int(chunk_id), distances.get(int(chunk_id), float("inf"))) for chunk_id in chunk_ids),
                      key=lambda pair: pair[1])
