"""The retrieval playground: run one retriever tree over a knowledge base and say why each hit
ranks where it does, before anyone chats with it.

A run writes nothing. The built retriever is kept per process (like ``runtime``'s strategies),
so trying the same node again costs a search, not a build. A tree that calls a language model
runs only when the caller says it may (``allow_llm``): such a run costs time or money.
"""

from __future__ import annotations

import json
import threading
import time
from collections import OrderedDict
from typing import Any

from django.contrib.auth.models import AbstractBaseUser

from common.outbound import outbound_policy_for
from credentials.services import credential_resolver_for
from knowledge.models import KnowledgeBase
from knowledge.runtime import retriever_infra
from knowledge.services import vector_index_ensure
from rag.components import load_components
from rag.core import build, iter_nodes
from rag.retrievers import BaseRetriever
from rag.tracing import TraceRecorder, recording

from .selectors import dense_requirements
from .services import strategy_validate

_lock = threading.Lock()
_built: OrderedDict[tuple, BaseRetriever] = OrderedDict()
_CACHE_SIZE = 8
TEXT_CHARACTERS = 2000


class LanguageModelConsentNeeded(Exception):
    """The tree calls a language model and the caller has not agreed to the cost.
    ``components`` holds ``{"path", "component"}`` of each node that is a model."""

    def __init__(self, components: list[dict[str, str]]) -> None:
        super().__init__(components)
        self.components = components


def language_model_nodes(config: dict[str, Any], path: str = "") -> list[dict[str, str]]:
    """Every node of a validated tree that is a language model, with its JSON path."""
    registry = load_components()
    return [{"path": where, "component": node["component"]}
            for where, node in iter_nodes(config, registry=registry, path=path)
            if registry.get(node["component"]).KIND == "llm"]


def retriever_try(
    *,
    owner: AbstractBaseUser,
    knowledge_base: KnowledgeBase,
    retriever: Any,
    question: str,
    top_k: int | None = None,
    allow_llm: bool = False,
) -> dict[str, Any]:
    """Run ``retriever`` (a retriever tree, validated here as a pipeline's would be) over
    ``knowledge_base`` for ``question``.

    Returns ``{"score_scale", "elapsed_ms", "results", "trace"}``: each result has its rank,
    chunk, document and position, text, score and ``explanation`` (BM25: each term's part of the
    score; fusion: each child's rank, score and part; empty where the score explains itself).

    Raises
    ------
    ConfigValidationError
        With every problem of the tree at its JSON path under ``retriever``.
    LanguageModelConsentNeeded
        The tree calls a language model and ``allow_llm`` is false.
    """
    config = strategy_validate(owner=owner, strategy=retriever, kind="retriever", path="retriever")
    models = language_model_nodes(config, path="retriever")
    if models and not allow_llm:
        raise LanguageModelConsentNeeded(models)
    built = built_retriever(owner, knowledge_base, config)
    started = time.perf_counter()
    with recording(TraceRecorder()):
        hits, node = built.search(question, top_k)
        explanations = built.explain(question, hits)
    elapsed_ms = (time.perf_counter() - started) * 1000
    results = []
    for row, hit, explanation in zip(node.results, hits, explanations, strict=True):
        text = hit.chunk.text
        results.append({
            **{key: row[key] for key in ("rank", "chunk_id", "document_id", "position", "score")},
            "document_name": row.get("document_name", ""),
            "page": hit.chunk.metadata.get("page"),
            "text": text if len(text) <= TEXT_CHARACTERS else text[:TEXT_CHARACTERS - 1] + "…",
            "explanation": explanation,
        })
    return {"score_scale": built.score_scale, "elapsed_ms": round(elapsed_ms, 3), "results": results,
            "trace": node.to_dict()}


def built_retriever(owner: AbstractBaseUser, knowledge_base: KnowledgeBase, config: dict[str, Any]) -> BaseRetriever:
    """The retriever a validated ``config`` builds over ``knowledge_base`` as ``owner``; kept per
    process for each version of the tree and of the knowledge base's content."""
    key = (owner.pk, knowledge_base.pk, knowledge_base.content_version, json.dumps(config, sort_keys=True))
    with _lock:
        if key in _built:
            _built.move_to_end(key)
            return _built[key]
    # A dense retriever over another model or metric than the knowledge base's reads an index
    # that may not exist yet: queue it, as saving a pipeline would.
    for embedding, metric in dense_requirements(config, knowledge_base):
        vector_index_ensure(knowledge_base=knowledge_base, embedding_config=embedding, metric=metric)
    infra = {**retriever_infra(knowledge_base), "outbound": outbound_policy_for(owner)}
    built = build(config, kind=BaseRetriever, registry=load_components(), infra=infra,
                  credentials=credential_resolver_for(owner))
    with _lock:
        _built[key] = built
        # An evicted retriever is not closed: a request may still be searching with it, and its
        # models are shared per process anyway.
        while len(_built) > _CACHE_SIZE:
            _built.popitem(last=False)
    return built
