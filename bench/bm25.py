"""BM25Retriever and BM25Index against rank-bm25 on ≥ 50,000 real chunks: same scores, same top-10, how much faster.

Run from the repository root::

    .venv/bin/python bench/bm25.py [--dataset PATH] [--chunk-size 200] [--queries 200] [--k 10]

Corpus: a BEIR dataset (default ``<shared datasets>/scifact``, found as ``rag.locations.datasets_dir`` finds them, read in
place) whose records (title as its own paragraph, then the abstract) are cut by the project's
``RecursiveCharacterChunker`` at ``chunk_size=200, chunk_overlap=0``: about one or two sentences a
chunk, 58,447 chunks for scifact's 5,183 abstracts. ``--pool cacm,cranfield,medline`` adds other
datasets' records. Queries: the first ``--queries`` of ``queries.jsonl``.

Every chunk is tokenised once with the default ``BagOfWordsConverter``; rank-bm25's ``BM25Okapi``
is built on those tokens and queried with ``get_scores`` + a stable argsort (ties to the lower
row). ``BM25Retriever`` is built by the factory with the chunks injected (no persistence, so it
indexes them itself, in the same row order) and queried through ``retrieve(question)``, which
also analyses the question and records a trace node; the bare ``BM25Index.top_k`` on the same
tokens is timed too. Both fast passes repeat for at least a second and are averaged.

Ties: both sides break exact ties the same way (lower row first, rows in the same order). The
index sums a query's term weights in another order than rank-bm25, so two chunks within ~1e-15
of each other may swap; a top-k counts as identical when, rank by rank, the ids are equal or
carry the same rank-bm25 score (to 1e-9 relative), which is "equal as sets up to ties".
``exact_top10`` counts byte-identical id lists. The retriever omits chunks sharing no word with
the question (score 0), so rank-bm25's list is cut to positive scores before comparing.

The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from _common import (
    chunk_corpus,
    default_dataset,
    documents_of,
    emit,
    machine,
    ndcg_at,
    read_corpus,
    read_qrels,
    read_queries,
    wall_s,
)
from rag.components import load_components
from rag.core import build
from rag.retrievers.sparse import BagOfWordsConverter


def same_up_to_ties(ours: list[int], theirs: list[int], scores: np.ndarray) -> bool:
    """Rank by rank, the same row or one with the same reference score."""
    if len(ours) != len(theirs) or len(set(ours)) != len(ours):
        return False
    for mine, reference in zip(ours, theirs, strict=True):
        if mine != reference:
            a, b = float(scores[mine]), float(scores[reference])
            if abs(a - b) > 1e-9 * max(abs(a), abs(b), 1e-300):
                return False
    return True


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=default_dataset(), help="a BEIR dataset directory")
    parser.add_argument("--pool", default="", help="other datasets (names under the same directory, comma "
                        "separated) whose records join the corpus")
    parser.add_argument("--chunk-size", type=int, default=200)
    parser.add_argument("--chunk-overlap", type=int, default=0)
    parser.add_argument("--queries", type=int, default=200, help="how many queries (the first ones)")
    parser.add_argument("--k", type=int, default=10, help="how many chunks each query returns")
    parser.add_argument("--min-chunks", type=int, default=50_000, help="fail below this corpus size")
    parser.add_argument("--target-speedup", type=float, default=50.0,
                        help="issue 4's target for BM25Retriever over rank-bm25 (reported, not enforced: "
                             "timings vary with the machine's load)")
    args = parser.parse_args()
    dataset: Path = args.dataset
    k = args.k

    records = read_corpus(dataset)
    corpus = chunk_corpus(records, chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap)
    pooled = [dataset.name]
    for name in filter(None, (part.strip() for part in args.pool.split(","))):
        extra = chunk_corpus(read_corpus(dataset.parent / name), chunk_size=args.chunk_size,
                             chunk_overlap=args.chunk_overlap, prefix=f"{name}:")
        offset_doc, offset_chunk = max(corpus.names), len(corpus)
        from rag.documents.models import Chunk
        for document_id, positions in extra.chunks.items():
            corpus.chunks[document_id + offset_doc] = {
                position: Chunk(chunk.id + offset_chunk, chunk.document_id + offset_doc, position, chunk.text)
                for position, chunk in positions.items()
            }
        corpus.names.update({document_id + offset_doc: value for document_id, value in extra.names.items()})
        corpus.documents += extra.documents
        pooled.append(name)
    ordered = corpus.ordered
    chunk_ids = np.array([chunk.id for chunk in ordered], dtype=np.int64)
    queries = read_queries(dataset)[: args.queries]
    qrels = read_qrels(dataset / "qrels" / "test.tsv")
    converter = BagOfWordsConverter()

    started = time.perf_counter()
    tokens = [converter.analyze(chunk.text) for chunk in ordered]
    query_tokens = [converter.analyze(query["text"]) for query in queries]
    tokenize_s = time.perf_counter() - started

    started = time.perf_counter()
    reference = BM25Okapi(tokens)
    reference_build_s = time.perf_counter() - started

    # The real retriever: built by the factory, chunks injected, index built from them on first use.
    retriever = build({"component": "BM25Retriever", "params": {"top_k": k}}, kind="retriever",
                      registry=load_components(), infra={"chunks": corpus.chunks})
    started = time.perf_counter()
    index = retriever.index()
    retriever_build_s = time.perf_counter() - started
    if not np.array_equal(index.doc_ids, chunk_ids):
        print("the retriever's index rows are not in chunk order; the tie comparison would be unfair",
              file=sys.stderr)
        return 1

    started = time.perf_counter()
    reference_scores, reference_top = [], []
    for query in query_tokens:
        scores = reference.get_scores(query)
        reference_scores.append(scores)
        reference_top.append(np.argsort(-scores, kind="stable")[:k])
    reference_s = time.perf_counter() - started

    def timed_passes(run) -> tuple[float, list]:
        passes, started = 0, time.perf_counter()
        while True:
            result = run()
            passes += 1
            if time.perf_counter() - started >= 1.0:
                return (time.perf_counter() - started) / passes, result

    retriever.retrieve(queries[0]["text"])  # warm caches (chunks_by_id) outside the clock
    retriever_s, retrieved = timed_passes(lambda: [retriever.retrieve(query["text"])[0] for query in queries])
    index_s, index_top = timed_passes(lambda: [index.top_k(query, k)[0] for query in query_tokens])

    row_of = {int(chunk_id): row for row, chunk_id in enumerate(chunk_ids)}
    exact = tied = index_exact = 0
    for chunks, rows, scores, top in zip(retrieved, index_top, reference_scores, reference_top, strict=True):
        theirs = [int(row) for row in top if scores[row] > 0]
        ours = [row_of[chunk.id] for chunk in chunks]
        exact += ours == theirs
        tied += same_up_to_ties(ours, theirs, scores)
        index_exact += same_up_to_ties([int(row) for row in rows], [int(row) for row in top], scores)

    max_relative = 0.0
    for query, theirs in zip(query_tokens, reference_scores, strict=True):
        ours = index.scores(query)
        nonzero = theirs != 0
        if np.any(ours[~nonzero] != 0):
            max_relative = math.inf
        if nonzero.any():
            max_relative = max(max_relative, float(np.max(np.abs(ours[nonzero] - theirs[nonzero])
                                                          / np.abs(theirs[nonzero]))))

    judged = [(position, query) for position, query in enumerate(queries) if str(query["_id"]) in qrels]
    ndcg = (
        sum(ndcg_at(documents_of(retrieved[position], corpus.names), qrels[str(query["_id"])], k)
            for position, query in judged) / len(judged)
        if judged else None
    )

    n_queries = len(queries)
    speedup = reference_s / retriever_s if retriever_s else math.inf
    index_speedup = reference_s / index_s if index_s else math.inf
    print(f"BM25 (Okapi, k1=1.5, b=0.75) on {'+'.join(pooled)}: {corpus.documents} documents → {len(ordered)} "
          f"chunks (RecursiveCharacterChunker {args.chunk_size}/{args.chunk_overlap}), {n_queries} queries, "
          f"{sum(map(len, tokens))} tokens, {len(index.vocabulary)} terms; tokenising took {tokenize_s:.2f} s")
    print(f"{'':32}{'build (s)':>10}{'ms/query':>10}{'queries/s':>11}{'speedup':>9}")
    for label, build_s, total_s in (("rank-bm25 get_scores+argsort", reference_build_s + tokenize_s, reference_s),
                                    ("BM25Retriever.retrieve()", retriever_build_s, retriever_s),
                                    ("BM25Index.top_k (bare)", None, index_s)):
        build_text = f"{build_s:10.2f}" if build_s is not None else f"{'':>10}"
        print(f"{label:32}{build_text}{1000 * total_s / n_queries:10.3f}{n_queries / total_s:11.1f}"
              f"{reference_s / total_s:8.1f}×")
    print(f"identical top-{k} (up to ties): {tied}/{n_queries} (byte-identical {exact}/{n_queries}; bare index "
          f"{index_exact}/{n_queries}); max relative score difference {max_relative:.2e}"
          + (f"; nDCG@{k} (docs of the top-{k} chunks) {ndcg:.4f} over {len(judged)} judged queries"
             if ndcg is not None else "")
          + f"; wall {wall_s():.0f} s")
    print(f"target: BM25Retriever ≥ {args.target_speedup:g}× rank-bm25 → "
          + ("met" if speedup >= args.target_speedup else f"NOT met (×{speedup:.1f})"))
    emit({
        "dataset": "+".join(pooled),
        "docs": corpus.documents,
        "chunks": len(ordered),
        "chunk_size": args.chunk_size,
        "queries": n_queries,
        "speedup": round(speedup, 1),
        "target_speedup_met": speedup >= args.target_speedup,
        f"identical_top{k}": tied / n_queries if n_queries else 1.0,
        f"exact_top{k}": exact / n_queries if n_queries else 1.0,
        "max_rel_score_diff": max_relative,
        "retriever_qps": round(n_queries / retriever_s, 1),
        "rank_bm25_qps": round(n_queries / reference_s, 2),
        "index_speedup": round(index_speedup, 1),
        "retriever_query_ms": round(1000 * retriever_s / n_queries, 4),
        "index_query_ms": round(1000 * index_s / n_queries, 4),
        "rank_bm25_query_ms": round(1000 * reference_s / n_queries, 3),
        "retriever_build_s": round(retriever_build_s, 3),
        "rank_bm25_build_s": round(reference_build_s, 3),
        "tokenize_s": round(tokenize_s, 2),
        f"ndcg_at_{k}": round(ndcg, 4) if ndcg is not None else None,
        **machine(),
    })
    ok = tied == n_queries and max_relative < 1e-9 and len(ordered) >= args.min_chunks
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
