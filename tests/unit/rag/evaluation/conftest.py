"""Small datasets for the evaluation tests: hand-written ones, and subsets of the shared BEIR
collections (read in place from ``rag.locations.datasets_dir``)."""

from __future__ import annotations

from pathlib import Path

from rag.evaluation import CorpusDocument, EvaluationDataset, Query, load_beir
from rag.locations import datasets_dir

DATASETS = datasets_dir(Path(__file__).resolve().parents[4])
CRANFIELD = DATASETS / "cranfield"


def cranfield_sample(*, documents: int, queries: int) -> EvaluationDataset:
    """The first ``queries`` Cranfield queries over their judged documents plus leading ones."""
    return load_beir(CRANFIELD).subset(max_queries=queries, max_documents=documents)


def garden() -> EvaluationDataset:
    """Five documents, three queries; query "1" judges document "1" (ids coincide, as in the
    classic collections), query "q2" has graded judgements and a reference answer."""
    corpus = [
        CorpusDocument("1", "Tomatoes", "Tomatoes need full sun, deep watering and a sturdy trellis."),
        CorpusDocument("2", "Cucumbers", "Cucumbers climb a trellis and like warm, moist soil."),
        CorpusDocument("3", "Roses", "Prune climbing roses in late winter, before new growth starts."),
        CorpusDocument("4", "Basil", "Basil grows well beside tomatoes and repels some pests."),
        CorpusDocument("5", "Compost", "Compost feeds the soil; turn the heap every two weeks."),
    ]
    queries = [
        Query("1", "how much sun do tomatoes need"),
        Query("q2", "when should climbing roses be pruned", ("late winter",)),
        Query("q3", "how often to turn a compost heap", ("every two weeks",)),
    ]
    qrels = {"1": {"1": 1, "4": 0}, "q2": {"3": 2, "2": 1}, "q3": {"5": 1}}
    return EvaluationDataset("garden", corpus, queries, qrels, "en")
