"""Pipelines as runnable strategies: built once per version and shared by every chat."""

from __future__ import annotations

import threading
from collections import OrderedDict
from dataclasses import dataclass

from config.i18n import translate
from credentials.selectors import credential_resolver_for
from knowledge.models import Document, VectorIndex
from knowledge.runtime import retriever_infra
from knowledge.services.knowledge_bases import model_key_of
from rag.components import load_components
from rag.core import build
from rag.core.i18n import gettext_noop
from rag.strategies import Strategy

from .models import Pipeline
from .services import dense_requirements

_lock = threading.Lock()
_built: OrderedDict[tuple, Strategy] = OrderedDict()
_building: dict[tuple, threading.Lock] = {}
_CACHE_SIZE = 8


@dataclass(frozen=True)
class Readiness:
    """Whether a pipeline can answer; ``waiting_for`` holds ``(template, context)`` reasons
    (``reasons(language)`` renders them)."""

    ready: bool
    waiting_for: list[tuple[str, dict]]

    def reasons(self, language: str | None = None) -> list[str]:
        return [translate(template, context, language, fallback=template.format(**context))
                for template, context in self.waiting_for]


def pipelines_readiness(pipelines: list[Pipeline]) -> dict[int, Readiness]:
    """Whether each pipeline can answer now, and what it waits for; a fixed number of queries
    whatever the number of pipelines."""
    knowledge_base_ids = {pipeline.knowledge_base_id for pipeline in pipelines}
    with_ready = set(Document.objects.filter(knowledge_base_id__in=knowledge_base_ids, status=Document.Status.READY)
                     .values_list("knowledge_base_id", flat=True).distinct())
    indexes = {(index.knowledge_base_id, index.model_key, index.metric): index
               for index in VectorIndex.objects.filter(knowledge_base_id__in=knowledge_base_ids)}
    readiness = {}
    for pipeline in pipelines:
        knowledge_base = pipeline.knowledge_base
        waiting = []
        if knowledge_base.pk not in with_ready:
            waiting.append((gettext_noop("the knowledge base {name!r} has no ready document yet"),
                            {"name": knowledge_base.name}))
        for embedding, metric in dense_requirements(pipeline.strategy, knowledge_base):
            key = model_key_of(embedding)
            index = indexes.get((knowledge_base.pk, key, metric))
            if index is not None and index.status == VectorIndex.Status.FAILED:
                waiting.append((gettext_noop("the vector index {key} ({metric}) failed: {error}"),
                                {"key": key, "metric": metric, "error": index.error}))
            elif index is None or index.status != VectorIndex.Status.READY:
                waiting.append((gettext_noop("the vector index {key} ({metric}) is being built"),
                                {"key": key, "metric": metric}))
        readiness[pipeline.pk] = Readiness(not waiting, waiting)
    return readiness


def pipeline_readiness(pipeline: Pipeline) -> Readiness:
    return pipelines_readiness([pipeline])[pipeline.pk]


def pipeline_strategy(pipeline: Pipeline) -> Strategy:
    """The built strategy of ``pipeline`` over its knowledge base's current chunks."""
    knowledge_base = pipeline.knowledge_base
    key = (pipeline.pk, pipeline.updated_at.isoformat(), knowledge_base.pk, knowledge_base.content_version)
    with _lock:
        if key in _built:
            _built.move_to_end(key)
            return _built[key]
        building = _building.setdefault(key, threading.Lock())
    # One build per version: questions arriving together wait for it instead of each loading
    # the chunks and indices again.
    with building:
        with _lock:
            if key in _built:
                return _built[key]
        strategy = build(pipeline.strategy, kind="strategy", registry=load_components(),
                         infra=retriever_infra(knowledge_base), credentials=credential_resolver_for(pipeline.owner))
        with _lock:
            _built[key] = strategy
            _building.pop(key, None)
            while len(_built) > _CACHE_SIZE:
                _built.popitem(last=False)
    return strategy
