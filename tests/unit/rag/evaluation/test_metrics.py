"""Retrieval metrics against hand-computed values, and against trec_eval (pytrec_eval) on the
same run file."""

import math
import random

import pytest
import pytrec_eval

from rag.components import load_components
from rag.core import build
from rag.documents.models import Chunk
from rag.evaluation import (
    RETRIEVAL_METRICS,
    average_precision,
    build_corpus,
    document_ranking,
    mrr_at,
    ndcg_at,
    query_metrics,
    recall_at,
)

from .conftest import cranfield_sample

pytestmark = pytest.mark.unit

RANKING = ["d1", "d2", "d3", "d4"]
JUDGED = {"d2": 2, "d4": 1, "d9": 3, "d5": 0}
TREC_MEASURES = {"ndcg_cut.10", "recall.1,5,10,100", "map", "recip_rank"}


def test_ndcg_uses_the_grade_as_gain_and_the_ideal_order_of_every_judged_document():
    found = 2 / math.log2(3) + 1 / math.log2(5)
    ideal = 3 / math.log2(2) + 2 / math.log2(3) + 1 / math.log2(4)
    assert ndcg_at(RANKING, JUDGED, 10) == pytest.approx(found / ideal, abs=1e-12)
    assert ndcg_at(RANKING, JUDGED, 1) == 0.0
    assert ndcg_at(["d9", "d2", "d4"], JUDGED, 10) == pytest.approx(1.0)


def test_recall_counts_relevant_documents_found_within_k_over_all_relevant_ones():
    assert recall_at(RANKING, JUDGED, 1) == 0.0
    assert recall_at(RANKING, JUDGED, 2) == pytest.approx(1 / 3)
    assert recall_at(RANKING, JUDGED, 4) == pytest.approx(2 / 3)
    assert recall_at(RANKING, JUDGED, 100) == pytest.approx(2 / 3)


def test_mrr_is_the_reciprocal_rank_of_the_first_relevant_result_within_k():
    assert mrr_at(RANKING, JUDGED, 10) == 0.5
    assert mrr_at(RANKING, JUDGED, 1) == 0.0
    assert mrr_at(["d5", "d7"], JUDGED, 10) == 0.0  # grade 0 is not relevant


def test_average_precision_averages_precision_at_each_relevant_hit_over_every_relevant_document():
    assert average_precision(RANKING, JUDGED) == pytest.approx((1 / 2 + 2 / 4) / 3)
    assert average_precision([], JUDGED) == 0.0


def test_query_metrics_reports_every_metric_by_its_published_name():
    row = query_metrics(RANKING, JUDGED)
    assert tuple(row) == RETRIEVAL_METRICS
    assert row["map"] == pytest.approx(1 / 3) and row["mrr@10"] == 0.5


def test_a_document_ranks_where_its_best_chunk_ranks():
    chunks = [Chunk(1, 10, 0, "a"), Chunk(2, 20, 0, "b"), Chunk(3, 10, 1, "c"), Chunk(4, 99, 0, "x"),
              Chunk(5, 30, 0, "d")]
    names = {10: "A", 20: "B", 30: "C"}
    assert document_ranking(chunks, names.get) == ["A", "B", "C"]


def test_a_hit_whose_id_equals_the_query_id_still_counts():
    # Classic collections number queries and documents independently: query 1 may judge doc 1.
    assert query_metrics(["1", "2"], {"1": 1})["recall@1"] == 1.0


def _trec_rows(ranking):
    # Strictly decreasing scores: trec_eval orders by score, so the order is exactly ours.
    return {doc: float(len(ranking) - rank) for rank, doc in enumerate(ranking)}


def _write_run(path, run):
    with open(path, "w") as stream:
        for query_id, ranking in run.items():
            for rank, doc in enumerate(ranking, start=1):
                stream.write(f"{query_id} Q0 {doc} {rank} {len(ranking) - rank + 1} trellis\n")


def _read_run(path):
    run = {}
    with open(path) as stream:
        for line in stream:
            query_id, _, doc, rank, _, _ = line.split()
            run.setdefault(query_id, []).append((int(rank), doc))
    return {query_id: [doc for _, doc in sorted(rows)] for query_id, rows in run.items()}


def _cross_check(qrels, run_file):
    run = _read_run(run_file)
    with open(run_file) as stream:
        trec_run = pytrec_eval.parse_run(stream)
    reference = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(trec_run)
    cut = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(
        {query_id: _trec_rows(ranking[:10]) for query_id, ranking in run.items()})
    checked = 0
    for query_id, ranking in run.items():
        ours = query_metrics(ranking, qrels[query_id])
        theirs = reference[query_id]
        expected = {"ndcg@10": theirs["ndcg_cut_10"], "recall@1": theirs["recall_1"], "recall@5": theirs["recall_5"],
                    "recall@10": theirs["recall_10"], "recall@100": theirs["recall_100"],
                    "mrr@10": cut[query_id]["recip_rank"], "map": theirs["map"]}
        for name, value in expected.items():
            assert ours[name] == pytest.approx(value, abs=1e-6), f"query {query_id}, {name}: {ours[name]} vs trec_eval {value}"
            checked += 1
    return checked


def test_metrics_agree_with_trec_eval_on_a_random_graded_run_file(tmp_path):
    generator = random.Random(7)
    documents = [f"doc{number}" for number in range(400)]
    qrels, run = {}, {}
    for number in range(150):
        query_id = str(number)
        judged = generator.sample(documents, generator.randint(1, 40))
        qrels[query_id] = {doc: generator.choice((0, 1, 1, 2, 3)) for doc in judged}
        if not any(grade > 0 for grade in qrels[query_id].values()):
            qrels[query_id][judged[0]] = 1
        pool = judged[: generator.randint(0, len(judged))] + generator.sample(documents, 150)
        run[query_id] = list(dict.fromkeys(generator.sample(pool, len(pool))))[: generator.randint(1, 150)]
    path = tmp_path / "run.trec"
    _write_run(path, run)
    assert _cross_check(qrels, path) == 150 * 7


def test_metrics_agree_with_trec_eval_on_bm25_over_a_graded_collection(tmp_path):
    dataset = cranfield_sample(documents=400, queries=60)
    corpus = build_corpus(dataset, default_embedding={"component": "AllMiniLML6V2Embedding", "params": {}})
    retriever = build({"component": "BM25Retriever", "params": {"top_k": 100}}, kind="retriever",
                      registry=load_components(), infra=corpus.infra)
    run = {query.id: document_ranking(retriever.retrieve(query.text)[0], corpus.corpus_id_of)
           for query in dataset.queries}
    path = tmp_path / "bm25.trec"
    _write_run(path, run)
    assert any(grade > 1 for judged in dataset.qrels.values() for grade in judged.values())
    assert _cross_check(dataset.qrels, path) == 60 * 7
