"""The answer side of two-fact questions alone: given the two passages that hold the answers, how
often does the packaged answer model's reply hold both (issue 39)?

Run from the repository root::

    nice .venv/bin/python bench/two_part_answers.py [--datasets xquad-es,xquad-zh] [--questions 15]
                                                    [--seed 0] [--rows FILE]

The two-fact questions of ``bench/_twofacts.py`` (two XQuAD questions about different articles
joined in one sentence), each answered by ``ResponseSynthesizer`` on the packaged 1.5B with no
retrieval: the passages are the two XQuAD paragraphs holding the answers, in the questions' order,
each tagged as found by its own search text so the model reads its default once per part, as after
an agentic plan that searched each part. The answer goes through the answer check as in a
pipeline (``grounding.check``: a declined answer holds nothing; re-pointed citations).

- ``joined``: the question as asked, both passages (what a pipeline does today);
- ``each_part``: each half asked alone over its own paragraph, the two replies put together (an
  answer written part by part; not built, measured here to see what it would give).

Per language and way: ``both_facts``, ``any_fact``, ``declined`` and the mean answer time; one JSON
line per language. Retrieval plays no part: this is the ceiling the answer model sets for
bench/agentic.py's ``both_facts``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from _twofacts import build as build_set

from _common import dataset_language, datasets_dir, emit, machine, mean_of, read_corpus, read_qrels, read_queries
from rag.documents.models import Chunk
from rag.evaluation.answers import answer_contains, strip_citations
from rag.llms import ANSWER_MODEL, LocalLLM
from rag.retrievers.base import Hit
from rag.strategies import ResponseSynthesizer, grounding


def answered(synthesizer: ResponseSynthesizer, question: str, hits: list[Hit]) -> tuple[str, str | None, float]:
    """The reply as a pipeline gives it (empty when declined), who declined it, and the seconds taken."""
    prepared = synthesizer.prepare(question, hits)
    started = time.perf_counter()
    draft = synthesizer.answer(prepared)
    seconds = time.perf_counter() - started
    checked = synthesizer.ground(draft, prepared)
    if checked.declined_by is not None:
        return "", checked.declined_by, seconds
    return grounding.repointed(draft, checked), None, seconds


def measure(name: str, synthesizer: ResponseSynthesizer, options: argparse.Namespace) -> dict[str, Any]:
    path = datasets_dir() / name
    language = dataset_language(name)
    corpus = read_corpus(path)
    paragraphs = {record["_id"]: record["text"] for record in corpus}
    queries, qrels = read_queries(path), read_qrels(path / "qrels" / "test.tsv")
    dev = build_set(corpus, queries, qrels, language, two_fact=options.questions, seed=options.seed)
    rows: dict[str, list[dict[str, Any]]] = {"joined": [], "each_part": []}
    for item in dev.questions:
        facts = item["facts"]
        hits = [Hit(Chunk(number, number, 0, paragraphs[next(iter(qrels[fact["id"]]))]), 1.0 / number,
                    ({"query": fact["question"]},))
                for number, fact in enumerate(facts, start=1)]
        joined, declined, seconds = answered(synthesizer, item["question"], hits)
        rows["joined"].append({"replies": [joined], "declined": [declined], "seconds": seconds})
        parts = [answered(synthesizer, fact["question"], [Hit(hit.chunk, 1.0)]) for fact, hit in zip(facts, hits, strict=True)]
        rows["each_part"].append({"replies": [reply for reply, _, _ in parts], "declined": [by for _, by, _ in parts],
                                  "seconds": sum(seconds for _, _, seconds in parts)})
        for way in rows:
            row = rows[way][-1]
            text = strip_citations(" ".join(row["replies"]))
            row["facts"] = [bool(answer_contains(text, fact["answers"], language)) for fact in facts]
            if options.rows is not None:
                with options.rows.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"dataset": name, "way": way, "question": item["question"],
                                          "answers": [fact["answers"] for fact in facts], **row}, ensure_ascii=False) + "\n")
        print(f"  {name} {len(rows['joined'])}/{len(dev.questions)}: joined {rows['joined'][-1]['facts']} "
              f"each part {rows['each_part'][-1]['facts']}", file=sys.stderr, flush=True)
    return {"dataset": name, "language": language, "questions": len(dev.questions), "answer_model": ANSWER_MODEL,
            "ways": {way: {"both_facts": mean_of([float(all(row["facts"])) for row in way_rows]),
                           "any_fact": mean_of([float(any(row["facts"])) for row in way_rows]),
                           "declined": mean_of([float(any(row["declined"])) for row in way_rows]),
                           "answer_s": mean_of([row["seconds"] for row in way_rows])}
                     for way, way_rows in rows.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="xquad-es,xquad-zh")
    parser.add_argument("--questions", type=int, default=15, help="two-fact questions per language")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=Path, help="append one JSON row per question and way to this file")
    options = parser.parse_args()
    synthesizer = ResponseSynthesizer(llm=LocalLLM(model=ANSWER_MODEL))
    for name in (dataset.strip() for dataset in options.datasets.split(",") if dataset.strip()):
        emit({**measure(name, synthesizer, options), "machine": machine()})


if __name__ == "__main__":
    main()
