"""The two-fact development set: questions one retrieval is not enough for (issue 39;
bench/agentic.py).

- **Knowledge base.** Every XQuAD article, one document per article (``article-AA``: its
  paragraphs ``xquad-AA-PP`` joined by blank lines, as ``bench/_devset.py`` makes them), parsed and
  cut by the default chunker as an upload is (``bench/answers.py``'s ``knowledge_base``).
- **Facts.** XQuAD questions with a short reference answer (at most ``MAX_ANSWER_WORDS`` words, or
  ``MAX_ANSWER_CHARACTERS`` characters in Chinese), written as one plain question ("¿…?" with no
  lead-in clause before the "¿" in Spanish; no second question mark in either language), so two
  of them read as one sentence and an answer can hold both; not one that holds its own answer
  ("¿… en color o en blanco y negro?").
- **Two facts in one sentence**, both answers required, the facts about different articles:
  Spanish ``¿A y B?`` — the second question's first word lower-cased unless it is a name (a word
  the questions never write in lower case), "y" becoming "e" before an /i/ sound ("¿Cuántos
  puntos cedieron los Panthers y quién diseñó el puente?"); Chinese ``A，以及B？``.
- **two_fact**: the first ``two_fact`` pairs of a seeded stream: the facts shuffled by
  ``random.Random(seed)``, each paired with the next fact of another article, no fact used twice.
- **other_child**: the stream continues (no fact of a two_fact question reused), keeping the pairs
  where the first child of the agentic tree, asked the joined question at its own ``top_k``,
  misses one fact's article and another child finds it. The children are searched as the
  pipeline searches them (deterministic: BM25 and cached dense vectors), so the same seed, data and
  tree give the same set.

Nothing here loads a model: ``build`` takes the children as functions from a question to the
articles they return.
"""

from __future__ import annotations

import itertools
import random
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from _devset import ARTICLE

MAX_ANSWER_WORDS = 5
MAX_ANSWER_CHARACTERS = 12
"""A two-fact answer holds two short facts: longer references (a clause, a list) are left out, so
whether an answer holds both is a fair check."""
SPANISH_QUESTION_WORDS = frozenset({
    "qué", "quién", "quiénes", "cuál", "cuáles", "cuánto", "cuánta", "cuántos", "cuántas", "cuán", "dónde",
    "adónde", "cuándo", "cómo", "por", "para", "en", "de", "del", "a", "al", "con", "el", "la", "los", "las",
})
_WORD = re.compile(r"\w+")
_ENDS = "?？。.!！ \t\n"
_I_SOUND = re.compile(r"(?:[ií]|h[ií](?![aeoáéó]))", re.IGNORECASE)


@dataclass
class TwoFactSet:
    """The knowledge base's documents and the two-fact questions."""

    language: str
    documents: dict[str, str]
    """Document name (``article-AA``) → its text: every article."""
    questions: list[dict[str, Any]] = field(default_factory=list)
    """``{"id", "kind", "question", "facts": [fact, fact], "found_by"}``; a fact is ``{"id",
    "question", "answers", "article"}``; ``found_by`` (other_child only) names the fact the first
    child missed and the children that found its article."""

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [question for question in self.questions if question["kind"] == kind]


def joinable(question: str, language: str) -> bool:
    """Whether ``question`` is one plain question that can be half of a joined sentence."""
    text = question.strip()
    if language.startswith("zh"):
        body = text.rstrip(_ENDS)
        return bool(body) and text[-1:] in "?？" and "?" not in body and "？" not in body
    body = text[1:].rstrip(_ENDS)
    return text.startswith("¿") and text.endswith("?") and bool(body) and not any(mark in body for mark in "¿?")


def lowercase_words(questions: Iterable[str]) -> frozenset[str]:
    """Words the questions write in lower case somewhere: a capitalised first word that is one of
    them is capitalised only because it starts the sentence."""
    return frozenset(word for question in questions for word in _WORD.findall(question) if word.islower())


def join_spanish(first: str, second: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """``¿A?`` and ``¿B?`` as ``¿A y B?``."""
    a = first.strip()[1:].rstrip(_ENDS)
    b = second.strip()[1:].rstrip(_ENDS)
    word = _WORD.match(b)
    if word and word.group().lower() in SPANISH_QUESTION_WORDS | vocabulary and not word.group().isupper():
        b = b[0].lower() + b[1:]
    conjunction = "e" if _I_SOUND.match(b) else "y"
    return f"¿{a} {conjunction} {b}?"


def join_chinese(first: str, second: str) -> str:
    """``A？`` and ``B？`` as ``A，以及B？``."""
    return f"{first.strip().rstrip(_ENDS)}，以及{second.strip().rstrip(_ENDS)}？"


def join(first: str, second: str, language: str, vocabulary: frozenset[str] = frozenset()) -> str:
    """Two questions as one sentence in ``language`` (``es`` or Chinese)."""
    if language.startswith("zh"):
        return join_chinese(first, second)
    if language == "es":
        return join_spanish(first, second, vocabulary)
    raise ValueError(f"no rule joins two questions in {language!r} (es and zh only)")


def short_answer(answers: Sequence[str], language: str) -> bool:
    if not answers:
        return False
    if language.startswith("zh"):
        return all(len(answer.strip()) <= MAX_ANSWER_CHARACTERS for answer in answers)
    return all(len(answer.split()) <= MAX_ANSWER_WORDS for answer in answers)


def given_away(question: str, answers: Sequence[str]) -> bool:
    """Whether the question holds its own answer ("…添加颜色，还是仍旧保持黑白？" → "黑白"): an answer
    could then hold it without reading any passage."""
    text = question.casefold()
    return any(answer.strip().casefold() in text for answer in answers if answer.strip())


def article_documents(corpus: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Every article as one document: its paragraphs in order, joined by blank lines."""
    paragraphs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for record in corpus:
        match = ARTICLE.match(record["_id"])
        if match:
            paragraphs[match.group(1)].append((record["_id"], record["text"]))
    return {f"article-{article}": "\n\n".join(text for _, text in sorted(paragraphs[article]))
            for article in sorted(paragraphs)}


def facts_of(queries: Iterable[dict[str, Any]], qrels: dict[str, dict[str, int]], language: str) -> list[dict[str, Any]]:
    """The questions fit to be half of a two-fact question, in id order."""
    facts = []
    for query in queries:
        relevant = list(qrels.get(query["_id"], {}))
        match = ARTICLE.match(relevant[0]) if relevant else None
        answers = list(query.get("answers") or [])
        if match and short_answer(answers, language) and joinable(query["text"], language) \
                and not given_away(query["text"], answers):
            facts.append({"id": query["_id"], "question": query["text"].strip(), "answers": answers,
                          "article": f"article-{match.group(1)}"})
    return sorted(facts, key=lambda fact: fact["id"])


def pairs(facts: Sequence[dict[str, Any]], seed: int) -> Iterator[tuple[dict[str, Any], dict[str, Any]]]:
    """Pairs of facts about different articles, no fact twice: the facts shuffled by the seed, each
    unused one paired with the next unused fact of another article."""
    order = list(facts)
    random.Random(seed).shuffle(order)
    used = [False] * len(order)
    for index, fact in enumerate(order):
        if used[index]:
            continue
        partner = next((other for other in range(index + 1, len(order))
                        if not used[other] and order[other]["article"] != fact["article"]), None)
        if partner is None:
            continue
        used[index] = used[partner] = True
        yield fact, order[partner]


def only_another_child(facts: Sequence[dict[str, Any]], found: Sequence[set[str]]) -> dict[str, Any] | None:
    """The first fact whose article the first child's results (``found[0]``) miss and another
    child's hold, with the children that hold it; None when there is none."""
    for index, fact in enumerate(facts):
        others = [child for child in range(1, len(found)) if fact["article"] in found[child]]
        if fact["article"] not in found[0] and others:
            return {"fact": index, "article": fact["article"], "children": others}
    return None


def build(corpus: Sequence[dict[str, Any]], queries: Sequence[dict[str, Any]], qrels: dict[str, dict[str, int]],
          language: str, *, two_fact: int, other_child: int = 0, seed: int = 0,
          children: Sequence[Callable[[str], set[str]]] = ()) -> TwoFactSet:
    """The two-fact set of one language (see the module's docstring).

    Parameters
    ----------
    two_fact, other_child : int
        How many questions of each kind (fewer when the facts run out).
    children : sequence of callables
        The agentic tree's children in catalog order, each a question → the documents
        (``article-AA``) of its results at its own ``top_k``; needed for ``other_child``.
    """
    if other_child and len(children) < 2:
        raise ValueError("other_child questions need the agentic tree's children (two or more)")
    facts = facts_of(queries, qrels, language)
    vocabulary = lowercase_words(query["text"] for query in queries) if language == "es" else frozenset()
    dev = TwoFactSet(language, article_documents(corpus))
    stream = pairs(facts, seed)
    for first, second in itertools.islice(stream, two_fact):
        dev.questions.append(_question("two_fact", first, second, language, vocabulary))
    kept = 0
    for first, second in stream if other_child else ():
        question = _question("other_child", first, second, language, vocabulary)
        found_by = only_another_child(question["facts"], [child(question["question"]) for child in children])
        if found_by is not None:
            dev.questions.append({**question, "found_by": found_by})
            kept += 1
            if kept == other_child:
                break
    return dev


def _question(kind: str, first: dict[str, Any], second: dict[str, Any], language: str,
              vocabulary: frozenset[str]) -> dict[str, Any]:
    return {"id": f"{first['id']}+{second['id']}", "kind": kind,
            "question": join(first["question"], second["question"], language, vocabulary),
            "facts": [first, second], "found_by": None}
