"""Latency of the retrieval playground and of live scoring in the builder, over the production stores.

Run from the repository root::

    .venv/bin/python bench/playground.py [--dataset PATH] [--docs 200] [--queries 50] [--no-cache]

Corpus: scifact (as ``bench/retrieval.py`` cuts and restricts it: every abstract judged relevant
to the first ``--queries`` queries, then leading abstracts up to ``--docs``), in a Chroma store and
a BM25 index in a temporary directory, the vectors of all-MiniLM-L6-v2 (cached between runs under
``~/.cache/trellis-bench``; ``--no-cache`` embeds again).

Playground: each non-LLM kind of node (BM25, dense, fusion of both: the Keyword, Semantic and
Hybrid presets) answers each query as the playground does, ``search`` then ``explain``; the
baseline in the same process is ``search`` alone, so ``explain_overhead`` is what explaining costs.
Live scoring: ``rag.evaluation.live`` scores the Hybrid tree on the queries against the Keyword tree
as the saved version (nDCG@10 and Recall@10, intervals, the paired change), cold (nothing scored
yet) and then again after an edit of BM25's ``k1`` (the saved version's scores kept, as the
builder keeps them); the baseline is the same retrievals without scoring. The last line printed
is one JSON object.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

from _common import chunk_corpus, default_dataset, emit, machine, percentile, read_corpus, read_qrels, read_queries

os.environ.setdefault("TRELLIS_MODELS_DIR", str(Path.home() / ".cache" / "trellis" / "models"))

from retrieval import EMBEDDING, subset, vectors_for  # noqa: E402

from rag.components import load_components  # noqa: E402
from rag.core import build  # noqa: E402
from rag.evaluation.live import GoldenQuestion, quality_summary, question_scores  # noqa: E402
from rag.presets import preset  # noqa: E402
from rag.tracing import TraceRecorder, recording  # noqa: E402


def with_k1(tree: dict, k1: float) -> dict:
    """``tree`` with every BM25 retriever's ``k1`` set: the edit the builder scores."""
    if tree.get("component") == "BM25Retriever":
        return {**tree, "params": {**tree.get("params", {}), "k1": k1}}
    params = dict(tree.get("params", {}))
    if isinstance(params.get("children"), list):
        params["children"] = [with_k1(child, k1) for child in params["children"]]
    return {**tree, "params": params}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=default_dataset(), help="a BEIR dataset directory")
    parser.add_argument("--docs", type=int, default=200, help="abstracts in the corpus (relevant ones first)")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--no-cache", action="store_true", help="embed the corpus again")
    args = parser.parse_args()

    records = read_corpus(args.dataset)
    qrels = read_qrels(args.dataset / "qrels" / "test.tsv")
    queries = [query for query in read_queries(args.dataset) if str(query["_id"]) in qrels][: args.queries]
    corpus = chunk_corpus(subset(records, queries, qrels, args.docs), chunk_size=200, chunk_overlap=0)
    registry = load_components()

    from rag.documents.models import SourceDocument
    from rag.stores import ChromaStore, KnowledgeBaseStores

    data_dir = Path(tempfile.mkdtemp(prefix="trellis-bench-playground-"))
    try:
        embedding = build(EMBEDDING, kind="embedding", registry=registry)
        vectors, _, _ = vectors_for(corpus, embedding, not args.no_cache)
        stores = KnowledgeBaseStores(knowledge_base_id=1, data_dir=data_dir, chroma=ChromaStore(path=data_dir / "chroma"),
                                     content_version=1, chunks=corpus.chunks, default_embedding=EMBEDDING)
        ordered = corpus.ordered
        stores.vectors(embedding.model_key, "cosine").upsert(
            [chunk.id for chunk in ordered], vectors,
            [{"document_id": chunk.document_id, "position": chunk.position} for chunk in ordered])
        infra = {"env_path": stores.index_dir, "chunks": corpus.chunks, "persistence": stores, "language": "en",
                 "documents": {document: SourceDocument(document, name) for document, name in corpus.names.items()}}
        print(f"Corpus: {len(corpus.names)} {args.dataset.name} abstracts → {len(ordered)} chunks; "
              f"{len(queries)} queries")

        playground: dict[str, dict] = {}
        trees = {"bm25": preset("keyword").config(), "dense": preset("semantic").config(),
                 "fusion": preset("hybrid").config()}
        built = {name: build(tree, kind="retriever", registry=registry, infra=infra) for name, tree in trees.items()}
        for name, retriever in built.items():
            for query in queries[:5]:  # warm: models loaded, index read
                retriever.search(query["text"])
            plain, explained = [], []
            for query in queries:
                with recording(TraceRecorder()):
                    started = time.perf_counter()
                    hits, _ = retriever.search(query["text"])
                    searched = time.perf_counter()
                    retriever.explain(query["text"], hits)
                    done = time.perf_counter()
                plain.append((searched - started) * 1000)
                explained.append((done - started) * 1000)
            playground[name] = {"p50_ms": round(percentile(explained, 50), 2), "p95_ms": round(percentile(explained, 95), 2),
                                "search_p50_ms": round(percentile(plain, 50), 2),
                                "explain_overhead": round(percentile(explained, 50) / percentile(plain, 50), 2)}
            print(f"  playground {name:7} p50 {playground[name]['p50_ms']:7.2f} ms  p95 {playground[name]['p95_ms']:7.2f} ms"
                  f"  (search alone p50 {playground[name]['search_p50_ms']:.2f} ms)")

        names = {document: name for document, name in corpus.names.items()}
        questions = [GoldenQuestion(str(query["_id"]), query["text"], qrels[str(query["_id"])]) for query in queries]
        saved = built["bm25"]

        started = time.perf_counter()
        for question in questions:
            built["fusion"].search(question.text)
            saved.search(question.text)
        retrieval_only_s = time.perf_counter() - started

        started = time.perf_counter()
        saved_rows = question_scores(saved, questions, names.get)
        edited_rows = question_scores(built["fusion"], questions, names.get)
        cold = quality_summary(edited_rows, saved_rows)
        cold_s = time.perf_counter() - started

        edited = build(with_k1(trees["fusion"], 1.6), kind="retriever", registry=registry, infra=infra)
        started = time.perf_counter()
        after_edit = quality_summary(question_scores(edited, questions, names.get), saved_rows)
        edit_s = time.perf_counter() - started
        change = after_edit["change"]["ndcg_at_10"]
        print(f"  live scoring of {len(questions)} questions: {cold_s:.2f} s cold (both versions), {edit_s:.2f} s after "
              f"an edit; retrieval alone {retrieval_only_s:.2f} s; nDCG@10 {cold['metrics']['ndcg_at_10']['value']:.3f} "
              f"(change vs keyword {cold['change']['ndcg_at_10']['difference']:+.3f}), after k1=1.6 change "
              f"{change['difference']:+.3f} {'within noise' if change['within_noise'] else ''}")
        emit({"playground": playground, "live_questions": len(questions), "live_cold_s": round(cold_s, 2),
              "live_after_edit_s": round(edit_s, 2), "live_overhead": round(cold_s / retrieval_only_s, 2),
              "ndcg_at_10": round(cold["metrics"]["ndcg_at_10"]["value"], 4), **machine()})
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
