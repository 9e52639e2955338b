"""The relevance floor: how close a question must be to its best passage to be answered.

Run from the repository root::

    .venv/bin/python bench/relevance_floor.py [--datasets xquad-es,xquad-zh] [--passages 3] [--lost 0.01]

Over the conversation development set (``bench/_devset.py``: every other XQuAD article in one
knowledge base, one document per article, cut by the default chunker), the default retriever
(Hybrid) retrieves for every question, and ``rag.strategies.relevance`` measures the question's
similarity to its best passage among the first ``--passages`` (what the packaged answer model
reads) under the knowledge base's embedding model, as a pipeline does before answering.

- ``answerable``: questions about articles in the knowledge base whose passages hold a reference
  answer: a floor above their similarity loses a right answer;
- ``absent``: questions about articles left out: a floor above their similarity says "not in your
  documents" without asking the model, which is the right answer.

The floor is chosen on the questions ``bench/answers.py`` does not ask (all but the first
``--questions`` of each kind): the highest one, in steps of 0.005, that loses at most ``--lost``
of the answerable questions. The figures are then given on both halves; the chosen floors are
``MultilingualE5SmallEmbedding.RELEVANCE_FLOORS``.
"""

from __future__ import annotations

import argparse
import sys

from _common import dataset_language, datasets_dir, emit, read_corpus, read_qrels, read_queries


def similarities(name: str, passages: int) -> tuple[str, dict[str, list[dict]]]:
    from _devset import build as build_devset
    from answers import knowledge_base

    from rag.components import load_components
    from rag.core import build
    from rag.evaluation.answers import answer_contains
    from rag.presets import default_retriever
    from rag.retrievers import BaseRetriever
    from rag.strategies.relevance import measure

    path = datasets_dir() / name
    language = dataset_language(name)
    dev = build_devset(read_corpus(path), read_queries(path), read_qrels(path / "qrels" / "test.tsv"), language,
                       questions=10_000, conversations=0)
    infra = knowledge_base(dev)
    infra["persistence"].register_pipeline({"component": "NaiveRAG", "params": {"retriever": default_retriever()}})
    retriever = build(default_retriever(), kind=BaseRetriever, registry=load_components(), infra=infra)
    retriever.init_model()
    measured: dict[str, list[dict]] = {}
    for kind in ("present", "absent"):
        rows = []
        for position, item in enumerate(getattr(dev, kind)):
            chunks, _ = retriever.retrieve(item["question"])
            texts = [chunk.text for chunk in chunks[:passages]]
            relevance = measure(item["question"], chunks[:passages], language, retriever, 1.0)
            rows.append({"position": position, "best": relevance.best if relevance else 0.0,
                         "model": relevance.model if relevance else None,
                         "holds": any(answer_contains(text, item["answers"], language) for text in texts)})
        measured[kind] = rows
    retriever.close()
    return language, measured


def shares(rows: dict[str, list[dict]], floor: float) -> dict[str, float | int]:
    answerable = [row for row in rows["present"] if row["holds"]]
    return {"answerable": len(answerable), "answerable_lost": round(sum(row["best"] < floor for row in answerable)
                                                                    / len(answerable), 3),
            "absent": len(rows["absent"]), "absent_below": round(sum(row["best"] < floor for row in rows["absent"])
                                                                 / len(rows["absent"]), 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="xquad-es,xquad-zh")
    parser.add_argument("--passages", type=int, default=3, help="passages the answer model reads")
    parser.add_argument("--questions", type=int, default=60, help="questions of each kind bench/answers.py asks")
    parser.add_argument("--lost", type=float, default=0.01, help="the share of answerable questions a floor may lose")
    options = parser.parse_args()
    figures = {}
    for name in options.datasets.split(","):
        language, rows = similarities(name, options.passages)
        held_out = {kind: [row for row in found if row["position"] >= options.questions] for kind, found in rows.items()}
        asked = {kind: [row for row in found if row["position"] < options.questions] for kind, found in rows.items()}
        floor = 0.5
        while shares(held_out, round(floor + 0.005, 3))["answerable_lost"] <= options.lost:
            floor = round(floor + 0.005, 3)
        figures[name] = {"language": language, "model": rows["present"][0]["model"], "floor": floor,
                         "held_out": shares(held_out, floor), "asked_by_answers_py": shares(asked, floor)}
        print(name, figures[name], file=sys.stderr, flush=True)
    emit({"passages": options.passages, "lost_at_most": options.lost, **figures})


if __name__ == "__main__":
    main()
