import pytest

from rag.evaluation.live import GoldenQuestion, quality_summary, question_scores
from rag.retrievers.sparse import BM25Retriever
from tests.unit.rag.retrievers.corpus import corpus_chunks

pytestmark = pytest.mark.unit


def bm25(**params):
    retriever = BM25Retriever(**params)
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


def by_document(document_id: int) -> str:
    return f"doc{document_id}"


QUESTIONS = [
    GoldenQuestion("q1", "Rust memory safety without a garbage collector", {"doc2": 1}),
    GoldenQuestion("q2", "When was the Eiffel Tower completed?", {"doc3": 1}),
    GoldenQuestion("q3", "What does the mitochondria produce?", {"doc1": 1, "doc2": 0}),
    GoldenQuestion("unjudged", "Photosynthesis", {"doc1": 0}),
]


def test_each_judged_question_is_scored_by_the_documents_the_tree_returns():
    rows = question_scores(bm25(top_k=3), QUESTIONS, by_document)
    assert [row["id"] for row in rows] == ["q1", "q2", "q3"]
    assert all(row["ndcg_at_10"] == 1.0 and row["recall_at_10"] == 1.0 for row in rows)
    assert rows[0]["returned"][0] == "doc2" and rows[0]["llm_calls"] == 0


def test_a_question_whose_document_does_not_come_back_scores_zero():
    rows = question_scores(bm25(top_k=1), [GoldenQuestion("q", "Rust memory safety", {"doc3": 2})], by_document)
    assert rows[0]["ndcg_at_10"] == 0.0 and rows[0]["recall_at_10"] == 0.0


def rows(values):
    return [{"id": f"q{index}", "ndcg_at_10": value, "recall_at_10": value} for index, value in enumerate(values)]


def test_the_summary_gives_each_metric_with_an_interval_that_holds_its_mean():
    summary = quality_summary(rows([1.0, 0.5, 0.0, 1.0]))
    ndcg = summary["metrics"]["ndcg_at_10"]
    assert summary["questions"] == 4 and ndcg["value"] == pytest.approx(0.625)
    assert ndcg["ci"][0] < 0.625 < ndcg["ci"][1]
    assert summary["change"] is None


def test_a_change_the_questions_cannot_tell_apart_is_within_noise():
    before = rows([1.0, 0.0] * 10)
    after = rows([0.0, 1.0] * 10)  # same mean; one better, one worse on each pair
    change = quality_summary(after, before)["change"]["ndcg_at_10"]
    assert change["difference"] == pytest.approx(0.0) and change["within_noise"]


def test_a_change_most_questions_agree_on_is_not_noise():
    before = rows([0.2] * 30)
    after = rows([0.8] * 27 + [0.2] * 3)
    change = quality_summary(after, before)["change"]["recall_at_10"]
    assert change["difference"] == pytest.approx(0.54)
    assert change["ci"][0] > 0 and not change["within_noise"]


def test_a_baseline_scored_on_other_questions_is_refused():
    with pytest.raises(ValueError, match="other questions"):
        quality_summary(rows([1.0, 0.0]), rows([1.0]))
