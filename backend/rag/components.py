"""Importing every module that registers components, then freezing the registry."""

from __future__ import annotations

import importlib

from .core.registry import Registry, registry

COMPONENT_MODULES: tuple[str, ...] = (
    "rag.credentials",
    "rag.documents.chunkers",
    "rag.embeddings",
    "rag.llms",
    "rag.prompts",
    "rag.retrievers.sparse",
    "rag.retrievers.dense",
    "rag.retrievers.composite",
    "rag.retrievers.cross_encoder",
    "rag.retrievers.llm_rerank",
    "rag.strategies",
    "rag.strategies.components",
)


def load_components() -> Registry:
    """Import all component modules once and freeze the global registry; returns it."""
    if not registry.frozen:
        for module in COMPONENT_MODULES:
            importlib.import_module(module)
        registry.freeze()
    return registry
