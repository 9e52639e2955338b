"""The conversation development set: XQuAD articles as documents, and the questions a user of a
half-filled knowledge base asks (bench/answers.py --absent, --conversation).

- **Articles.** XQuAD's paragraphs are ``xquad-AA-PP``: paragraph PP of article AA. Each article
  becomes one document, its paragraphs joined by blank lines, parsed and cut by the default
  chunker as an upload would be. Every other article (AA even) goes into the knowledge base; the
  rest stay out.
- **present**: questions about articles in the knowledge base, taken round-robin over the
  articles so every article is asked about.
- **absent**: the same for articles left out: the right answer is "not in your documents".
- **unrelated**: two-turn conversations whose second question is a *present* question about
  another article than the first question's; scored against the same question asked alone.
- **pronoun**: two-turn conversations about one article whose two questions name the same thing
  (a capitalised phrase in Spanish, two or more shared ideographs in Chinese). In the second
  question that name becomes a pronoun ("los Panthers" → "ellos", "黑豹隊" → "它"); scored
  against the second question written out in full, asked alone.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

TOPIC_QUESTIONS = 3
"""A name the pronoun stands for is what an article is about: named in this many of its questions."""
ARTICLE = re.compile(r"^xquad-(\d+)-\d+$")
_SPANISH_NAME = re.compile(r"(?:\b(el|la|los|las|del|al)\s+)?((?:[A-ZÁÉÍÓÚÑ][\w\-]+)(?:\s+(?:de\s+|del\s+|la\s+)?"
                           r"[A-ZÁÉÍÓÚÑ][\w\-]+)*)")
_PRONOUN = {"el": "él", "la": "ella", "los": "ellos", "las": "ellas", "del": "de él", "al": "a él", None: "él"}
_IDEOGRAPHS = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]{2,}")
_BEFORE_NAME = set("，,、。？?在于於对對从從和与與将將被是了听聽让讓给給把由") | set("0123456789 ")
_AFTER_NAME = set("的是在于於有，,？?。、被和与與对對将將从從曾已")
_PARTICLES = set("了的是在有和與与及於于為为被把對对從从到這这那哪什麼么幾几多少誰谁何")
_QUESTION_WORDS = {"什麼", "什么", "多少", "哪個", "哪个", "哪裡", "哪里", "為什麼", "为什么", "如何", "誰", "谁", "哪些",
                   "甚麼", "是什麼", "是什么", "何時", "何时", "哪一", "幾", "几"}


@dataclass
class DevSet:
    """The documents of the knowledge base and the questions, by kind."""

    language: str
    documents: dict[str, str]
    """Article id → its text (only the articles in the knowledge base)."""
    present: list[dict[str, Any]] = field(default_factory=list)
    absent: list[dict[str, Any]] = field(default_factory=list)
    unrelated: list[dict[str, Any]] = field(default_factory=list)
    pronoun: list[dict[str, Any]] = field(default_factory=list)


def _round_robin(groups: dict[str, list[dict[str, Any]]], count: int) -> list[dict[str, Any]]:
    order = sorted(groups)
    taken: list[dict[str, Any]] = []
    depth = 0
    while len(taken) < count and any(depth < len(groups[key]) for key in order):
        for key in order:
            if depth < len(groups[key]) and len(taken) < count:
                taken.append(groups[key][depth])
        depth += 1
    return taken


def spanish_followup(first: str, second: str, topic: Callable[[str], bool]) -> str | None:
    """``second`` with a name it shares with ``first`` (and ``topic`` accepts) turned into a
    pronoun, or None."""
    for match in _SPANISH_NAME.finditer(second):
        name = match.group(2)
        if not match.group(1) or len(name) < 4 or name not in first or not topic(name) \
                or second[match.end():match.end() + 2].strip()[:1].isdigit():
            continue
        pronoun = _PRONOUN[match.group(1).lower() if match.group(1) else None]
        return second[:match.start()] + pronoun + second[match.end():]
    return None


def chinese_followup(first: str, second: str, topic: Callable[[str], bool]) -> str | None:
    """``second`` with the longest run of ideographs it shares with ``first`` (a name: no
    question word or particle in it) turned into 它."""
    taken = [False] * len(second)
    for word in _QUESTION_WORDS:
        for match in re.finditer(re.escape(word), second):
            for index in range(match.start(), match.end()):
                taken[index] = True
    best, where = "", -1
    for run in _IDEOGRAPHS.finditer(second):
        text = run.group()
        for size in range(len(text), 1, -1):
            for start in range(len(text) - size + 1):
                piece = text[start:start + size]
                at = run.start() + start
                after = second[at + size:at + size + 1]
                before = second[at - 1:at] if at else ""
                if len(piece) > len(best) and piece in first and topic(piece) and not any(taken[at:at + size]) \
                        and (not after or after in _AFTER_NAME) and (not before or before in _BEFORE_NAME) \
                        and not any(character in _PARTICLES for character in piece):
                    best, where = piece, at
    if len(best) < 2:
        return None
    return second[:where] + "它" + second[where + len(best):]


def build(corpus: list[dict[str, Any]], queries: list[dict[str, Any]], qrels: dict[str, dict[str, int]],
          language: str, *, questions: int, conversations: int) -> DevSet:
    paragraphs: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for record in corpus:
        match = ARTICLE.match(record["_id"])
        if match:
            paragraphs[match.group(1)].append((record["_id"], record["text"]))
    articles = sorted(paragraphs)
    inside = set(articles[0::2])
    documents = {f"article-{article}": "\n\n".join(text for _, text in sorted(paragraphs[article]))
                 for article in articles if article in inside}
    by_article: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for query in queries:
        relevant = list(qrels.get(query["_id"], {}))
        match = ARTICLE.match(relevant[0]) if relevant else None
        if match and query.get("answers"):
            by_article[match.group(1)].append({"id": query["_id"], "question": query["text"],
                                               "answers": list(query["answers"]), "article": match.group(1)})
    present_groups = {article: items for article, items in by_article.items() if article in inside}
    absent_groups = {article: items for article, items in by_article.items() if article not in inside}
    dev = DevSet(language, documents)
    dev.present = _round_robin(present_groups, questions)
    dev.absent = _round_robin(absent_groups, questions)
    # Unrelated: the first question about one article, the second a present question about the next.
    ordered = sorted(present_groups)
    for second in dev.present[:conversations]:
        other = ordered[(ordered.index(second["article"]) + 1) % len(ordered)]
        first = present_groups[other][-1]
        dev.unrelated.append({"first": first, "second": second})
    # Pronoun: two questions about one article that name the same thing.
    follow = chinese_followup if language.startswith("zh") else spanish_followup
    candidates: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for article in ordered:
        items = present_groups[article]

        def topic(name: str, items: list[dict[str, Any]] = items) -> bool:
            """What the article is about: named in three or more of its questions."""
            return sum(name in item["question"] for item in items) >= TOPIC_QUESTIONS

        for first in items:
            for second in items:
                if first is second:
                    continue
                rewritten = follow(first["question"], second["question"], topic)
                if rewritten and rewritten != second["question"]:
                    candidates[article].append({"first": first, "second": second, "followup": rewritten})
                    break
    dev.pronoun = _round_robin(candidates, conversations)
    return dev
