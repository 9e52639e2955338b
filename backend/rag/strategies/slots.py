"""The contracts of the components that fill a strategy's slots.

Each returns what it decided together with the facts a trace shows (``details``), so a user
can see why a chunk was dropped, a branch taken or a query rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rag.core import ConfigObject, ParamsT
from rag.retrievers import Hit


@dataclass
class Outcome:
    """Hits a step kept (in order) and what the trace should show about the decision."""

    hits: list[Hit]
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Judgement:
    chunk_id: int
    relevant: bool
    reason: str = ""


@dataclass(frozen=True)
class RouteDecision:
    route: str
    reason: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class QueryTransformer(ConfigObject[ParamsT]):
    """Turns a question into the queries to retrieve with (the original included when useful)."""

    KIND: ClassVar[str] = "query_transformer"
    CATEGORY: ClassVar[str] = "query transformation"

    def transform(self, question: str) -> tuple[list[str], dict[str, Any]]:
        """``(queries, details)``; ``queries`` is never empty."""
        raise NotImplementedError


class RelevanceFilter(ConfigObject[ParamsT]):
    """Keeps the hits that are relevant to the question, in their order."""

    KIND: ClassVar[str] = "relevance_filter"
    CATEGORY: ClassVar[str] = "relevance"

    def filter(self, question: str, hits: Sequence[Hit]) -> Outcome:
        raise NotImplementedError


class RelevanceEvaluator(ConfigObject[ParamsT]):
    """A relevant / not relevant verdict per hit (CRAG decides from them)."""

    KIND: ClassVar[str] = "relevance_evaluator"
    CATEGORY: ClassVar[str] = "relevance"

    def evaluate(self, question: str, hits: Sequence[Hit]) -> tuple[list[Judgement], dict[str, Any]]:
        raise NotImplementedError


class Reranker(ConfigObject[ParamsT]):
    """Re-orders hits (and may keep fewer)."""

    KIND: ClassVar[str] = "reranker"
    CATEGORY: ClassVar[str] = "re-ranking"

    def rerank(self, question: str, hits: Sequence[Hit]) -> Outcome:
        raise NotImplementedError


class WebRetriever(ConfigObject[ParamsT]):
    """Searches the web; results become chunks whose metadata holds ``url`` and ``title``."""

    KIND: ClassVar[str] = "web_retriever"
    CATEGORY: ClassVar[str] = "web"

    def search(self, question: str, top_k: int | None = None) -> Outcome:
        raise NotImplementedError


class Router(ConfigObject[ParamsT]):
    """Chooses one of ``routes`` for a question (or its default route)."""

    KIND: ClassVar[str] = "router"
    CATEGORY: ClassVar[str] = "routing"

    def route(self, question: str, routes: Sequence[str]) -> RouteDecision:
        raise NotImplementedError


class Classifier(ConfigObject[ParamsT]):
    """A yes/no predicate on the question, for first-match routing."""

    KIND: ClassVar[str] = "classifier"
    CATEGORY: ClassVar[str] = "routing"

    def matches(self, question: str) -> bool:
        raise NotImplementedError
