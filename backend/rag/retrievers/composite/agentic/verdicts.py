"""What the planning LLM answers (the verdict), and which of its operations may run."""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from rag.llms import GRAMMAR_LIMITS

# ``reason`` comes first so that a model writing left to right says what the pool holds and lacks
# before it decides. The bounds are grammar limits only (``GRAMMAR_LIMITS``): the packaged 0.5B
# once in about fifteen calls wrote on until its max_tokens (25-30 s, then asked again); a hosted
# model writing a longer reason is not asked again for it.
VERDICT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "reason": {"type": "string", GRAMMAR_LIMITS: {"maxLength": 240}},
        "sufficient": {"type": "boolean"},
        "operations": {
            "type": "array",
            GRAMMAR_LIMITS: {"maxItems": 6},
            "items": {
                "type": "object",
                "properties": {
                    "child": {"type": "integer"},
                    "query": {"type": "string", GRAMMAR_LIMITS: {"maxLength": 160}},
                    "top_k": {"type": "integer"},
                },
                "required": ["child"],
                "additionalProperties": False,
            },
        },
    },
    "required": ["reason", "sufficient", "operations"],
    "additionalProperties": False,
}

OperationKey = tuple[int, int, str | None]
"""An operation's identity: (child, top_k, query); query None is the user's question."""

_SPACES = re.compile(r"\s+")


def query_key(query: Any, question: str) -> str | None:
    """The operation's search text as compared for repeats: None for the user's question (no
    query, a blank one, or the question itself), else the text with its spaces collapsed and
    its case folded."""
    if not isinstance(query, str):
        return None
    text = _SPACES.sub(" ", query).strip().casefold()
    if not text or text == _SPACES.sub(" ", question).strip().casefold():
        return None
    return text


def split_operations(
    operations: Sequence[dict[str, Any]],
    *,
    own_top_k: Sequence[int],
    consulted: Collection[OperationKey],
    question: str = "",
    on_question: Callable[[str], bool] | None = None,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Valid operations (in order, without repeats) and the dropped ones with their reason.

    A valid operation is ``{"child", "top_k", "top_k_from", "query"}``: ``top_k`` is the one
    used, the model's (``top_k_from`` ``"model"``) or, when it gave none, the child's own
    (``"child"``); ``query`` is the text the child searches, None for the user's question.
    A dropped one keeps what the model wrote plus ``why`` in words (fed back to the model) and a
    ``code`` (``unknown_child``, ``top_k_below_1``, ``repeated``, ``off_question``) for the trace
    view to say it in the reader's language. An operation repeats when its (child, top_k, query)
    was consulted in an earlier round or chosen earlier in the same verdict. A query is off the
    question when ``on_question`` (``question_matcher``) refuses it: the packaged 0.5B planner
    searched the catalog's own words ("fusión", "recuperador por palabras clave BM25") as the
    parts of a question about rounds.
    """
    valid: list[dict[str, Any]] = []
    dropped: list[dict[str, Any]] = []
    chosen: set[OperationKey] = set()
    children = len(own_top_k)
    for operation in operations:
        child, top_k = operation.get("child"), operation.get("top_k")
        if not isinstance(child, int) or isinstance(child, bool) or not 0 <= child < children:
            dropped.append({**operation, "code": "unknown_child",
                            "why": f"no child {child} in the catalog (0 to {children - 1})"})
            continue
        top_k_from = "model"
        if top_k is None:
            top_k, top_k_from = own_top_k[child], "child"
        if not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 1:
            dropped.append({**operation, "code": "top_k_below_1", "why": f"top_k {top_k} is below 1"})
            continue
        query = query_key(operation.get("query"), question)
        key = (child, top_k, query)
        if key in consulted or key in chosen:
            searched = f'the query "{operation["query"]}"' if query is not None else "the question"
            dropped.append({**operation, "code": "repeated",
                            "why": f"child {child} was already consulted with top_k {top_k} for {searched}"})
            continue
        text = _SPACES.sub(" ", operation["query"]).strip() if query is not None else None
        if text is not None and on_question is not None and not on_question(text):
            dropped.append({**operation, "code": "off_question",
                            "why": f'the query "{text}" shares no word with the question; a query names a part '
                                   "of the question in the question's words"})
            continue
        chosen.add(key)
        valid.append({"child": child, "top_k": top_k, "top_k_from": top_k_from, "query": text})
    return valid, dropped


def question_matcher(question: str, pool: Sequence[str], language: str) -> Callable[[str], bool]:
    """Whether a search text shares a word with ``question`` or, when judging, with a passage of
    ``pool`` (a name read there may lead to the missing part); their words are found once per
    evaluation, whatever the attempts and operations."""
    # Imported here: rag.strategies imports the retrievers, so a module-level import would be a cycle.
    from rag.strategies.grounding import shares_a_term_with

    return shares_a_term_with("\n".join([question, *pool]), language)


def operation_key(operation: dict[str, Any], question: str) -> OperationKey:
    """The identity of a valid operation (as ``split_operations`` gives it)."""
    return operation["child"], operation["top_k"], query_key(operation["query"], question)


def verdict_problems(verdict: dict[str, Any], valid: Sequence[dict[str, Any]], dropped: Sequence[dict[str, Any]],
                     *, planning: bool) -> list[str]:
    """Why a verdict cannot be used, fed back to the model; empty when it can.

    A plan must choose at least one valid operation. A judgement may stop (sufficient, with no
    operation) or continue with at least one valid operation; one whose operations are all
    invalid, repeats included, is asked again whether it says sufficient or not, since a model
    that repeats a search it already made has not read what that search found.
    """
    if valid:
        return []
    reasons = [operation["why"] for operation in dropped]
    if planning:
        return ["the plan must choose at least one valid operation: " + ("; ".join(reasons) or "none was given")]
    if not verdict["operations"]:
        if verdict["sufficient"]:
            return []
        return ["an insufficient verdict must choose at least one new operation: none was given. Add a "
                "search for the missing part (an operation whose query names it), or answer sufficient true."]
    return ["every operation was already done or is invalid (" + "; ".join(reasons) + "). Either choose a "
            "search not made yet (another child, or a query naming what the pool still lacks), or answer "
            "sufficient true with no operations."]


@dataclass
class Evaluation:
    """One planning or judging call after validation: the verdict, its usable operations, what
    was dropped and why, and every attempt made."""

    verdict: dict[str, Any] | None
    operations: list[dict[str, Any]] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    attempts: list[dict[str, Any]] = field(default_factory=list)

    def summary(self) -> dict[str, Any] | None:
        if self.verdict is None:
            return None
        return {"sufficient": bool(self.verdict["sufficient"]), "reason": self.verdict["reason"]}
