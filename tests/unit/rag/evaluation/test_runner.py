"""Running pipelines over a dataset in memory: scoring, chunk → document mapping, the vector
cache, answers, comparisons, the JSON summary and the report."""

import json

import pytest

from rag.evaluation import (
    RETRIEVAL_METRICS,
    PipelineSpec,
    RunOptions,
    build_corpus,
    evaluate,
    flat_summary,
    markdown_report,
    strategy_config,
    write_report,
)
from tests.support.scripted_openai import chat_stream, tool_call_response

from .conftest import garden

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"
KEYWORD = PipelineSpec("keyword", strategy_config("keyword"))


def scripted_embedding(server):
    return {"component": "OpenAICompatibleEmbedding", "params": {"base_url": server.base_url, "model": "e"}}


def scripted_llm(server):
    return {"component": "OpenAICompatibleLLM", "params": {"base_url": server.base_url, "model": "m",
                                                           "function_calling": "tools"}}


def test_keyword_scores_every_query_and_counts_a_document_whose_id_is_the_querys():
    progress = []
    result = evaluate(garden(), [KEYWORD], progress=lambda done, total: progress.append((done, total)))
    [pipeline] = result["pipelines"]
    rows = {row["query_id"]: row for row in pipeline["per_query"]}
    assert rows["1"]["retrieved"][0] == "1" and rows["1"]["recall@1"] == 1.0
    assert rows["q3"]["retrieved"][0] == "5"
    assert rows["1"]["query"] == "how much sun do tomatoes need"
    assert set(RETRIEVAL_METRICS) <= set(rows["q2"])
    assert pipeline["metrics"]["ndcg@10"] == pytest.approx(sum(row["ndcg@10"] for row in rows.values()) / 3)
    low, high = pipeline["ci"]["ndcg@10"]
    assert low <= pipeline["metrics"]["ndcg@10"] <= high
    assert pipeline["llm_calls_per_query"] == 0 and pipeline["failures"] == 0
    assert progress == [(1, 3), (2, 3), (3, 3)]
    assert result["dataset"]["documents"] == 5 and result["settings"]["depth"] == 100


def test_with_chunking_each_document_ranks_once_at_its_best_chunk():
    dataset = garden()
    corpus = build_corpus(dataset, default_embedding={"component": "AllMiniLML6V2Embedding", "params": {}},
                          chunker={"component": "RecursiveCharacterChunker",
                                   "params": {"chunk_size": 50, "chunk_overlap": 0}})
    assert corpus.chunk_count > len(dataset.corpus)
    result = evaluate(dataset, [KEYWORD], corpus=corpus)
    for row in result["pipelines"][0]["per_query"]:
        assert len(row["retrieved"]) == len(set(row["retrieved"]))
    assert result["pipelines"][0]["per_query"][0]["retrieved"][0] == "1"


def test_document_vectors_are_embedded_once_and_then_read_from_the_cache(scripted_openai, tmp_path):
    semantic = PipelineSpec("semantic", strategy_config("semantic"))
    embedding = scripted_embedding(scripted_openai)
    first = evaluate(garden(), [semantic], embedding=embedding, cache_dir=tmp_path)
    calls = len(scripted_openai.requests_to(EMBEDDINGS))
    [(model_key, embedded)] = first["settings"]["embedded"].items()
    assert embedded == {"chunks": 5, "seconds": embedded["seconds"], "cached": False}
    second = evaluate(garden(), [semantic], embedding=embedding, cache_dir=tmp_path)
    assert second["settings"]["embedded"][model_key]["cached"] is True
    document_batches = [request for request in scripted_openai.requests_to(EMBEDDINGS)[calls:]
                        if isinstance(request.body["input"], list) and len(request.body["input"]) == 5]
    assert document_batches == []
    assert second["pipelines"][0]["per_query"] == [
        {**row, "latency_ms": again["latency_ms"]}
        for row, again in zip(first["pipelines"][0]["per_query"], second["pipelines"][0]["per_query"], strict=True)]
    assert list(tmp_path.glob("vectors-*.npy"))


def test_answers_are_scored_against_references_citations_and_the_judge(scripted_openai):
    strategy = {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": scripted_llm(scripted_openai)}}}}
    scripted_openai.enqueue(CHAT, chat_stream(["Tomatoes need full sun and deep watering [1]. Compost helps them too [2]."]))
    scripted_openai.enqueue(CHAT, tool_call_response("judge_statements", {"statements": [
        {"statement": "full sun", "supported": True}, {"statement": "compost", "supported": False}]}))
    scripted_openai.enqueue(CHAT, chat_stream(["Prune them in ", "late winter [1]."]))
    scripted_openai.enqueue(CHAT, tool_call_response("judge_statements", {"statements": [
        {"statement": "late winter", "supported": True}]}))
    result = evaluate(garden(), [PipelineSpec("naive", strategy)], judge=scripted_llm(scripted_openai),
                      options=RunOptions(answer_queries=2))
    pipeline = result["pipelines"][0]
    first, second, third = pipeline["per_query"]
    assert first["answer"] == "Tomatoes need full sun and deep watering [1]. Compost helps them too [2]."
    assert "exact_match" not in first  # query "1" has no reference answer
    assert first["faithfulness"] == 0.5
    assert second["exact_match"] == 0.0 and second["contains"] == 1.0
    assert second["f1"] == pytest.approx(2 * (2 / 5) * 1 / (2 / 5 + 1))  # [prune, them, in, late, winter] vs [late, winter]
    assert second["citation_precision"] == 1.0 and second["faithfulness"] == 1.0
    assert second["context_contains"] == 1.0  # the passages sent held "late winter"
    assert "answer" not in third
    answers = pipeline["answers"]
    assert answers["queries"] == 2 and answers["faithfulness"] == 0.75 and answers["contains"] == 1.0
    assert answers["llm_calls_per_query"] == 1.0
    assert scripted_openai.pending(CHAT) == 0


def test_two_pipelines_are_compared_on_their_shared_queries_and_summarised_for_json():
    weak = PipelineSpec("weak", {"component": "NaiveRAG", "params": {"retriever": {
        "component": "BM25Retriever", "params": {"top_k": 1, "k1": 0.1}}}})
    result = evaluate(garden(), [KEYWORD, weak], options=RunOptions(depth=None))
    [comparison] = result["comparisons"]
    assert (comparison["a"], comparison["b"], comparison["queries"]) == ("keyword", "weak", 3)
    entry = comparison["metrics"]["recall@5"]
    assert entry["difference"] == pytest.approx(entry["mean_a"] - entry["mean_b"])
    assert 0 < entry["p_randomization"] <= 1 and 0 < entry["p_bootstrap"] <= 1
    summary = json.loads(json.dumps(flat_summary(result)))
    assert {"ndcg@10", "recall@1", "recall@5", "recall@10", "recall@100", "mrr@10", "map", "per_query"} <= set(summary)
    assert summary["pipeline"] == "keyword" and len(summary["per_query"]) == 3
    assert [entry["name"] for entry in summary["pipelines"]] == ["keyword", "weak"]


def test_the_report_has_the_tables_and_two_png_plots(tmp_path):
    weak = PipelineSpec("weak", strategy_config({"component": "BM25Retriever", "params": {"top_k": 1}}))
    result = evaluate(garden(), [KEYWORD, weak], options=RunOptions(depth=None))
    paths = write_report(result, tmp_path / "report")
    for kind in ("metrics", "recall"):
        assert paths[kind].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    markdown = paths["markdown"].read_text()
    assert markdown == markdown_report(result)
    assert "| keyword | 3 |" in markdown and "| weak | 3 |" in markdown
    assert "| keyword | weak | nDCG@10 |" in markdown and "![metrics](metrics.png)" in markdown
    assert json.loads(paths["json"].read_text())["pipelines"][1]["name"] == "weak"


def test_a_strategy_without_a_retriever_is_refused():
    with pytest.raises(ValueError, match="unknown preset 'nope'"):
        strategy_config("nope")


@pytest.mark.parametrize("metric", ["cosine", "ip", "l2"])
def test_the_in_memory_collection_ranks_as_chroma_measures_distance(metric):
    import numpy as np

    from rag.evaluation import MemoryVectorCollection
    from rag.retrievers.dense.retriever import distances_to

    rng = np.random.default_rng(1)
    vectors = rng.normal(size=(40, 6)).astype(np.float32)
    vectors[7] = vectors[3]  # a tie: the lower row comes first
    query = rng.normal(size=6).astype(np.float32)
    ids = np.arange(100, 140)
    matches = MemoryVectorCollection(ids, vectors, metric).query(query, 12)
    expected = distances_to(query, vectors, metric)
    order = sorted(range(40), key=lambda row: (round(float(expected[row]), 5), row))[:12]
    assert [match.chunk_id for match in matches] == [int(ids[row]) for row in order]
    assert [match.distance for match in matches] == pytest.approx([float(expected[row]) for row in order], abs=1e-5)
