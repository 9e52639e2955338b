"""The sentences of a text that a question is about: what a passage shows when it must be cut
(the answer model's passages, the agentic judge's pool)."""

from __future__ import annotations

import math
import re
from collections.abc import Callable

from rag.llms.base import estimate_tokens

from .sentences import ends_a_sentence

_IDEOGRAPHS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W_]+")
# A sentence ends at . ! ? (followed by a space; not after an initial, ``sentences``), at their CJK
# forms, or at a line break.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")


def question_terms(question: str) -> set[str]:
    """What a sentence is matched on: the question's words of three letters or more (lowercased;
    in Chinese, those written between ideographs too: "支持LOR", "1998年") and, for Chinese, each
    pair of adjacent ideographs."""
    terms = {word.casefold() for word in _WORD.findall(_IDEOGRAPHS.sub(" ", question)) if len(word) >= 3}
    runs = _IDEOGRAPHS.findall(question)
    terms.update(run[i:i + 2] for run in runs for i in range(len(run) - 1))
    if not terms:
        terms.update("".join(runs))
    return terms


def sentence_bounds(text: str) -> list[tuple[int, int]]:
    bounds, start = [], 0
    for match in _SENTENCE_END.finditer(text):
        if not ends_a_sentence(text, match):
            continue
        if match.end() > start and text[start:match.start()].strip():
            bounds.append((start, match.start() if match.group().isspace() else match.end()))
        start = match.end()
    if text[start:].strip():
        bounds.append((start, len(text)))
    return bounds or [(0, len(text))]


def sentence_scores(sentences: list[str], terms: set[str]) -> list[float]:
    """Each sentence's match with the question: its terms weighted by how few sentences of the
    passage hold them (a word in every sentence, like "the", tells nothing)."""
    lowered = [sentence.casefold() for sentence in sentences]
    held = {term: [term in sentence for sentence in lowered] for term in terms}
    weights = {term: math.log((len(sentences) + 1) / sum(flags)) for term, flags in held.items() if any(flags)}
    return [sum(weight for term, weight in weights.items() if held[term][index]) for index in range(len(sentences))]


def focus(text: str, question: str, room: int, *, clip: bool = False,
          count: Callable[[str], int] = estimate_tokens) -> str:
    """The consecutive sentences of ``text`` around the one sharing the most terms with
    ``question``, as many as fit in ``room`` tokens (counted by ``count``; the next sentence
    chosen on the side that matches more, after it on a tie); "" when not even that
    sentence fits, unless ``clip``: then as much of that sentence as fits, from its start."""
    bounds = sentence_bounds(text)
    terms = question_terms(question)
    scores = sentence_scores([text[start:end] for start, end in bounds], terms)
    best = max(range(len(bounds)), key=lambda index: (scores[index], -index))
    low = high = best

    def cost(first: int, last: int) -> int:
        return count(text[bounds[first][0]:bounds[last][1]])

    if cost(low, high) > room:
        if not clip:
            return ""
        sentence = text[bounds[best][0]:bounds[best][1]]
        while sentence and count(sentence) > room:
            sentence = sentence[: int(len(sentence) * 0.9)]
        return sentence.strip()
    while True:
        after = high + 1 < len(bounds) and cost(low, high + 1) <= room
        before = low > 0 and cost(low - 1, high) <= room
        if after and (not before or scores[high + 1] >= scores[low - 1]):
            high += 1
        elif before:
            low -= 1
        else:
            break
    return text[bounds[low][0]:bounds[high][1]].strip()
