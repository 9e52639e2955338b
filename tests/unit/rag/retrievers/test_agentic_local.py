"""The agentic ensemble end to end with the packaged local model: no network, no key."""

import pytest

from rag.llms import LocalLLM
from rag.retrievers.composite import AgenticEnsembleRetriever
from rag.retrievers.dense import DenseEmbeddingRetriever
from rag.retrievers.sparse import BM25Retriever
from rag.tracing import TraceRecorder, recording

from .corpus import corpus_chunks

pytestmark = [pytest.mark.unit, pytest.mark.slow]


def test_the_local_model_plans_judges_and_finds_the_passage_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("TRELLIS_MODELS_DIR", str(tmp_path))
    retriever = AgenticEnsembleRetriever(
        children=[DenseEmbeddingRetriever(top_k=3, embedding_model={"component": "AllMiniLML6V2Embedding"}),
                  BM25Retriever(top_k=3)],
        llm_model=LocalLLM(max_tokens=200), max_iters=2, max_chunks=5,
    )
    for node in [retriever, *retriever.children]:
        node.inject_infra(chunks=corpus_chunks())
    recorder = TraceRecorder()
    with recording(recorder):
        chunks, node = retriever.retrieve("Which organelle produces ATP for the cell?")
    assert 1 <= len(chunks) <= 5
    assert 100 in [chunk.id for chunk in chunks]
    assert 1 <= len(node["rounds"]) <= 2 and node["rounds"][0]["operations"]
    assert 1 <= recorder.llm_calls <= 2 * 3
    plan = node["rounds"][0]["plan"]
    assert plan["attempts"] >= 1 and (plan["reason"] or plan["fallback"])
    retriever.close()
