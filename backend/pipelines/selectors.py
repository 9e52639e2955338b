"""Reads of the pipelines app; every function sees only the acting user's pipelines."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, QuerySet

from catalog.selectors import CatalogVocabulary
from common.i18n import translate
from common.slugs import owner_slugs
from knowledge.models import Document, KnowledgeBase, VectorIndex
from knowledge.services.knowledge_bases import model_key_of
from rag.components import load_components
from rag.core import iter_nodes, validate_tree
from rag.core.i18n import gettext_noop
from rag.presets import PRESETS

from .models import Pipeline


def pipeline_list(*, user: AbstractBaseUser) -> QuerySet[Pipeline]:
    return Pipeline.objects.filter(owner=user).select_related("knowledge_base")


def pipeline_get(*, user: AbstractBaseUser, pipeline_id: int) -> Pipeline:
    """Raises ``Pipeline.DoesNotExist`` for a missing id or another user's pipeline."""
    return pipeline_list(user=user).get(pk=pipeline_id)


def pipeline_slugs(*, user: AbstractBaseUser) -> dict[int, str]:
    """``{id: slug}`` of the user's pipelines: the names by which the OpenAI API (``model``) and
    the MCP tools (``ask_<slug>``) know them."""
    return owner_slugs(Pipeline.objects.filter(owner=user).values_list("pk", "name"), fallback="pipeline")


def pipeline_get_by_slug(*, user: AbstractBaseUser, slug: str) -> Pipeline:
    """The user's pipeline with this slug or id (as text); raises ``Pipeline.DoesNotExist``
    for none, and for another user's."""
    if slug.isdigit():
        return pipeline_get(user=user, pipeline_id=int(slug))
    found = [pk for pk, known in pipeline_slugs(user=user).items() if known == slug]
    if not found:
        raise Pipeline.DoesNotExist(slug)
    return pipeline_get(user=user, pipeline_id=found[0])


def pipeline_representation(pipeline: Pipeline, vocabulary: CatalogVocabulary) -> str:
    """The pipeline's strategy in the vocabulary's words (``catalog.selectors.component_vocabulary``)."""
    return vocabulary.representation(pipeline.strategy)


def pipeline_templates(*, language: str | None) -> list[dict[str, Any]]:
    """One template per retriever preset: NaiveRAG with the local LLM over that retriever."""
    from catalog.selectors import preset_list

    registry = load_components()
    rows = []
    for preset, row in zip(PRESETS, preset_list(language=language), strict=True):
        strategy = {"component": "NaiveRAG", "params": {"retriever": preset.config()}}
        normalised, _ = validate_tree(strategy, registry=registry, kind="strategy")
        rows.append({
            **{key: row[key] for key in ("name", "display_name", "description", "icon", "default", "available",
                                         "unavailable_reason", "unavailable_action")},
            "document": {"name": row["display_name"], "version": 1, "strategy": normalised or strategy},
        })
    return rows


def dense_requirements(config: dict[str, Any], knowledge_base: KnowledgeBase) -> list[tuple[dict[str, Any], str]]:
    """``(embedding config, metric)`` of every dense retriever in the tree (the knowledge base's
    own model where a retriever names none)."""
    registry = load_components()
    needed = []
    for _, node in iter_nodes(config, registry=registry):
        if node["component"] == "DenseEmbeddingRetriever":
            embedding = node["params"].get("embedding_model") or knowledge_base.embedding_model
            pair = (embedding, node["params"].get("similarity_metric", "cosine"))
            if pair not in needed:
                needed.append(pair)
    return needed


@dataclass(frozen=True)
class Readiness:
    """Whether a pipeline can answer; ``waiting_for`` holds ``(template, context)`` reasons
    (``reasons(language)`` renders them)."""

    ready: bool
    waiting_for: list[tuple[str, dict]]
    documents_reading: int = 0
    """Documents of the knowledge base still being read (queued, parsed, chunked, embedded or
    indexed): a ready pipeline answers from the others, and cannot answer from these yet."""

    def reasons(self, language: str | None = None) -> list[str]:
        return [translate(template, context, language, fallback=template.format(**context))
                for template, context in self.waiting_for]


def pipelines_readiness(pipelines: list[Pipeline]) -> dict[int, Readiness]:
    """Whether each pipeline can answer now, and what it waits for; a fixed number of queries
    whatever the number of pipelines."""
    knowledge_base_ids = {pipeline.knowledge_base_id for pipeline in pipelines}
    with_ready = set(Document.objects.filter(knowledge_base_id__in=knowledge_base_ids, status=Document.Status.READY)
                     .values_list("knowledge_base_id", flat=True).distinct())
    reading = {row["knowledge_base_id"]: row["count"] for row in
               Document.objects.filter(knowledge_base_id__in=knowledge_base_ids)
               .exclude(status__in=[Document.Status.READY, Document.Status.FAILED])
               .values("knowledge_base_id").annotate(count=Count("pk"))}
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
        readiness[pipeline.pk] = Readiness(not waiting, waiting, reading.get(knowledge_base.pk, 0))
    return readiness


def pipeline_readiness(pipeline: Pipeline) -> Readiness:
    return pipelines_readiness([pipeline])[pipeline.pk]
