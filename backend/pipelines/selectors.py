"""Reads of the pipelines app; every function sees only the acting user's pipelines."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from catalog.selectors import CatalogVocabulary
from rag.components import load_components
from rag.core import validate_tree
from rag.presets import PRESETS

from .models import Pipeline


def pipeline_list(*, user: AbstractBaseUser) -> QuerySet[Pipeline]:
    return Pipeline.objects.filter(owner=user).select_related("knowledge_base")


def pipeline_get(*, user: AbstractBaseUser, pipeline_id: int) -> Pipeline:
    """Raises ``Pipeline.DoesNotExist`` for a missing id or another user's pipeline."""
    return pipeline_list(user=user).get(pk=pipeline_id)


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
                                         "unavailable_reason")},
            "document": {"name": row["display_name"], "version": 1, "strategy": normalised or strategy},
        })
    return rows
