"""Answer metrics: exact match and token F1 against reference answers, whether the answer
contains a reference (and does so concisely), whether it copies a passage instead of answering,
citation precision, and an LLM-judged faithfulness score.

Answers are compared after a language-aware normalisation in the manner of the SQuAD and MLQA
evaluation scripts: lower case, punctuation removed, the language's articles removed, spaces
collapsed. Chinese (and any text holding CJK ideographs) is compared character by character:
each ideograph is a token of its own, other runs of letters and digits stay whole words.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

ARTICLES: dict[str, frozenset[str]] = {
    "en": frozenset({"a", "an", "the"}),
    "es": frozenset({"el", "la", "lo", "los", "las", "un", "una", "unos", "unas"}),
    "de": frozenset({"der", "die", "das", "des", "dem", "den", "ein", "eine", "einer", "eines", "einem", "einen"}),
    "fr": frozenset({"le", "la", "les", "l", "un", "une", "des"}),
}
_CJK_CHARACTER = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_ASCII_PUNCTUATION = frozenset(string.punctuation)
_CITATION = re.compile(r"\s*\[\d+(?:\s*[,，、]\s*\d+)*\]")

FAITHFULNESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "statements": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"statement": {"type": "string"}, "supported": {"type": "boolean"}},
                "required": ["statement", "supported"],
            },
        },
    },
    "required": ["statements"],
}


def primary_language(language: str | None) -> str:
    return (language or "").strip().replace("_", "-").split("-", 1)[0].lower()


def _is_punctuation(character: str) -> bool:
    return character in _ASCII_PUNCTUATION or unicodedata.category(character).startswith("P")


def strip_citations(text: str) -> str:
    """The answer without its ``[1]``, ``[2, 3]`` chunk citations, which no reference holds."""
    return _CITATION.sub("", text or "")


def normalize_answer(text: str, language: str | None = None) -> str:
    """Lower case, no punctuation, no articles of ``language``, single spaces."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    text = "".join(" " if _is_punctuation(character) else character for character in text)
    articles = ARTICLES.get(primary_language(language), frozenset())
    return " ".join(word for word in text.split() if word not in articles)


def answer_tokens(text: str, language: str | None = None) -> list[str]:
    """The normalised answer's tokens: words, and each CJK ideograph on its own."""
    tokens: list[str] = []
    for word in normalize_answer(text, language).split():
        if _CJK_CHARACTER.search(word) is None:
            tokens.append(word)
            continue
        pending = ""
        for character in word:
            if _CJK_CHARACTER.match(character):
                if pending:
                    tokens.append(pending)
                    pending = ""
                tokens.append(character)
            else:
                pending += character
        if pending:
            tokens.append(pending)
    return tokens


def exact_match(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """1.0 when the normalised prediction equals a normalised reference, else 0.0."""
    predicted = answer_tokens(prediction, language)
    return float(any(predicted == answer_tokens(reference, language) for reference in references))


def token_f1(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """The best token-overlap F1 of the prediction against any reference."""
    predicted = answer_tokens(prediction, language)
    best = 0.0
    for reference in references:
        expected = answer_tokens(reference, language)
        if not predicted or not expected:
            best = max(best, float(predicted == expected))
            continue
        common = sum((Counter(predicted) & Counter(expected)).values())
        if common:
            precision, recall = common / len(predicted), common / len(expected)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def answer_contains(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """1.0 when some normalised reference appears, token for token, inside the normalised
    prediction: the fair test for a generated sentence against a short reference answer."""
    predicted = answer_tokens(prediction, language)
    for reference in references:
        expected = answer_tokens(reference, language)
        if expected and any(predicted[start:start + len(expected)] == expected
                            for start in range(len(predicted) - len(expected) + 1)):
            return 1.0
    return 0.0


CONCISE_WORDS = 40
CONCISE_CJK_CHARACTERS = 80
COPIED_SPAN_WORDS = 25


def answer_length(text: str) -> tuple[int, str]:
    """The answer's length without its citations: ``(count, unit)``, in characters (spaces
    excluded) when it holds CJK ideographs, else in words."""
    prose = strip_citations(text).strip()
    if _CJK_CHARACTER.search(prose):
        return sum(1 for character in prose if not character.isspace()), "characters"
    return len(prose.split()), "words"


def concise_contains(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """1.0 when the answer contains a reference and is short: at most 40 words, or 80
    characters for CJK text, citations not counted. A passage pasted back often contains the
    reference too; this is the measure of an answer."""
    count, unit = answer_length(prediction)
    limit = CONCISE_CJK_CHARACTERS if unit == "characters" else CONCISE_WORDS
    return answer_contains(strip_citations(prediction), references, language) if count <= limit else 0.0


def longest_shared_span(answer: str, passages: Sequence[str], language: str | None = None) -> int:
    """The most consecutive tokens (words; each CJK ideograph one token) the answer shares with
    any one passage, after normalisation and with citations stripped."""
    tokens = answer_tokens(strip_citations(answer), language)
    best = 0
    for passage in passages:
        other = answer_tokens(passage, language)
        if tokens and other:
            matcher = SequenceMatcher(None, tokens, other, autojunk=False)
            best = max(best, matcher.find_longest_match(0, len(tokens), 0, len(other)).size)
    return best


def verbatim_copy(answer: str, passages: Sequence[str], language: str | None = None) -> float:
    """1.0 when the answer repeats more than 25 consecutive tokens of a passage it was given."""
    return float(longest_shared_span(answer, passages, language) > COPIED_SPAN_WORDS)


def citation_precision(cited_corpus_ids: Sequence[str | None], judgements: Mapping[str, int]) -> float | None:
    """Share of the cited chunks whose document is relevant; None when nothing was cited."""
    if not cited_corpus_ids:
        return None
    return sum(1 for corpus_id in cited_corpus_ids
               if corpus_id is not None and judgements.get(corpus_id, 0) > 0) / len(cited_corpus_ids)


def faithfulness_messages(question: str, answer: str, passages: Sequence[str],
                          passage_characters: int = 1200) -> list[dict[str, str]]:
    numbered = "\n\n".join(f"[{number}] {text[:passage_characters]}" for number, text in enumerate(passages, start=1))
    return [
        {"role": "system", "content": (
            "You check whether an answer is supported by the passages it was written from. Split the answer "
            "into its factual statements. For each statement say whether the passages support it "
            "(supported: true) or not (supported: false). Judge only against the passages, not your own "
            "knowledge.")},
        {"role": "user", "content": f"Question: {question}\n\nPassages:\n{numbered or '(none)'}\n\nAnswer: {answer}"},
    ]


def judge_faithfulness(llm: Any, question: str, answer: str, passages: Sequence[str], *,
                       max_trials: int = 3) -> tuple[float | None, dict[str, Any]]:
    """Share of the answer's statements the judge LLM finds supported by ``passages``.

    Returns ``(score, details)``; the score is None for an empty answer or when the judge gave
    no usable verdict in ``max_trials`` attempts (``details["error"]`` says why).
    """
    if not answer.strip():
        return None, {"error": "the answer is empty"}

    def check(arguments: dict[str, Any]) -> list[str]:
        return [] if arguments["statements"] else ["list at least one statement of the answer"]

    arguments, attempts = llm.call_function_with_retries(
        faithfulness_messages(question, answer, passages), FAITHFULNESS_SCHEMA, check=check,
        max_trials=max_trials, name="judge_statements",
        description="the answer's statements and whether the passages support each",
    )
    if arguments is None:
        problems = "; ".join(attempts[-1].problems) if attempts else "no attempt was made"
        return None, {"error": f"the judge gave no usable verdict after {len(attempts)} attempt(s): {problems}",
                      "attempts": len(attempts)}
    statements = arguments["statements"]
    supported = sum(1 for statement in statements if statement["supported"])
    return supported / len(statements), {"statements": statements, "attempts": len(attempts)}
