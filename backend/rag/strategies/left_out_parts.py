"""A part of a several-part question the answer leaves out, asked again on its own.

Asked two things at once ("¿Qué fuerza actúa sobre una carga y cuántos cuerpos exhumó…?"), the
packaged 1.5B often answers one and leaves the other out, or only repeats it ("La fuerza magnética
y eléctrica actúan sobre una carga [1]."), even when its passages hold both answers. Asked one
thing, it answers well. So a part (``rag.retrievers.composite.agentic.parts``, the rules the
agentic ensemble splits questions by) that no supported sentence of the answer speaks to is asked
again, alone, over the same passages under the same numbers; the sentences of its answer that
the answer check holds take the place of those that only repeated the part, or follow the answer.

A sentence speaks to the part whose terms it repeats the most (and to any part it repeats a
fair weight of, ``grounding.LIGHTEST_CLAIM``); a sentence repeating no part's terms speaks to
none. A part too light to say what it asks ("Cómo", a stray quote) is never asked again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from rag.retrievers.composite.agentic.parts import question_parts

from .answer_prompts import CITATION_MARK
from .grounding import (
    LIGHTEST_CLAIM,
    Grounding,
    SentenceSupport,
    marked,
    repeated_weight,
    repointed,
    terms,
    with_mark,
)


@dataclass
class LeftOut:
    """A part of the question no supported sentence answers, and the sentences that speak to it
    without being supported (they give way to its answer)."""

    part: str
    unsupported: list[str] = field(default_factory=list)


def left_out_parts(checked: Grounding, question: str, language: str) -> list[LeftOut]:
    """The parts of ``question`` that no supported sentence of the checked answer speaks to
    (none for a question that asks one thing)."""
    parts = question_parts(question, language)
    if len(parts) < 2:
        return []
    part_terms = [terms(part, language) for part in parts]
    answered = [sum(weights.values()) < LIGHTEST_CLAIM for weights in part_terms]
    unsupported: list[list[str]] = [[] for _ in parts]
    for sentence in checked.sentences:
        spoken_to = _parts_spoken_to(sentence, part_terms, language)
        for index in spoken_to:
            if sentence.supported:
                answered[index] = True
            elif len(spoken_to) == 1:
                unsupported[index].append(sentence.text)
    return [LeftOut(part, unsupported[index]) for index, part in enumerate(parts) if not answered[index]]


def _parts_spoken_to(sentence: SentenceSupport, part_terms: list[dict[str, int]], language: str) -> list[int]:
    """The parts ``sentence`` repeats the most of, or a fair weight of; a word or two in passing
    ("这个") speaks to none."""
    weights = [repeated_weight(part, sentence.text, language) for part in part_terms]
    most = max(weights)
    return [index for index, weight in enumerate(weights)
            if _enough(weight, part_terms[index]) and (weight == most or weight >= LIGHTEST_CLAIM)]


def _enough(weight: float, part: dict[str, int]) -> bool:
    """Whether ``weight`` of ``part``'s terms is enough to speak to it: a fair weight, or a quarter
    of a light part ("secuenciaron" of "Quién secuenció el primer plastoma"; not "公民" alone of
    "哪位著名印度人士的行为被认为是公民不服从")."""
    return weight > 0 and weight >= min(LIGHTEST_CLAIM, sum(part.values()) / 4)


def supported_answer(answer: str, checked: Grounding, part: str, language: str) -> str:
    """The sentences of ``answer`` to ``part`` that the check holds and that speak to the part, each
    citing the passages that hold it ("" when none does, or the model said the passages do not
    say). A sentence repeating nothing of the part answers something else ("为了适应性免疫系统的
    进化…" for "为什么要创建这个短期组织")."""
    part_terms = terms(part, language)
    if checked.declined_by is not None:
        return ""
    # Both rewrite the sentences' records too: each then names the passages that hold it.
    if CITATION_MARK.search(answer):
        answer = repointed(answer, checked)
    else:
        answer, _ = marked(answer, checked)
    kept = []
    for sentence in checked.sentences:
        if not sentence.supported or not _enough(repeated_weight(part_terms, sentence.text, language), part_terms):
            continue
        if sentence.cites and CITATION_MARK.search(sentence.text) is None:
            # It read the mark of a sentence left out: it keeps its passages.
            with_mark(sentence.text, sentence)
        kept.append(_mark_before_stop(sentence.text))
    return _joined(kept)


_MARK_AFTER_STOP = re.compile(rf"([.!?。！？]+)\s*((?:{CITATION_MARK.pattern}\s*)+)$")


def _mark_before_stop(sentence: str) -> str:
    """``sentence`` with the marks after its full stop before it ("重力 [2]。" for "重力。 [2]"): a
    mark after a full stop cites the sentences before it, and one followed by more text would be
    read as the next sentence's."""
    found = _MARK_AFTER_STOP.search(sentence)
    if found is None:
        return sentence
    marks = " ".join(mark.group() for mark in CITATION_MARK.finditer(found.group(2)))
    return f"{sentence[:found.start()].rstrip()} {marks}{found.group(1)}"


def with_part_answered(answer: str, left_out: LeftOut, part_answer: str) -> str:
    """``answer`` with ``part_answer`` in place of the first unsupported sentence that spoke to the
    part alone (the others dropped), or after the answer when none did."""
    if not left_out.unsupported:
        return _joined([answer.strip(), part_answer])
    first, *rest = left_out.unsupported
    answer = answer.replace(first, part_answer, 1)
    for sentence in rest:
        answer = answer.replace(sentence, "", 1)
    return re.sub(r"[ \t]{2,}", " ", answer).strip()


def _joined(sentences: list[str]) -> str:
    """Sentences as one text: Chinese ones run together, others take a space; after marks standing
    behind a full stop (they cite the sentences before them), a line break, so they stay theirs."""
    text = ""
    for sentence in sentences:
        sentence = sentence.strip()
        if not sentence:
            continue
        separator = ("\n" if _MARK_AFTER_STOP.search(text) else "" if not text or _ideographic(text[-1]) else " ")
        text = f"{text}{separator}{sentence}"
    return text


def _ideographic(text: str) -> bool:
    return bool(text) and ("\u3000" <= text[-1] <= "\u9fff" or "\uff00" <= text[-1] <= "\uffef")


def trace_entry(left_out: LeftOut, answer: str, checked: Grounding, added: str) -> dict[str, Any]:
    """What the trace records of one part asked again."""
    return {"part": left_out.part, "why": "no supported sentence of the answer answers this part",
            "answer": answer, "declined_by": checked.declined_by,
            "supported": [sentence.text for sentence in checked.sentences if sentence.supported],
            "replaced": left_out.unsupported if added else [], "added": added or None}
