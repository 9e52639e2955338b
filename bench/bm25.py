"""BM25Index against rank-bm25 on a BEIR dataset: same tokens, same scores, how much faster.

Run from the repository root::

    PYTHONPATH=backend .venv/bin/python bench/bm25.py [--dataset PATH] [--k 10]

The dataset (default ``${TRELLIS_DATASETS_DIR:-../shared/datasets}/scifact``) is read in place:
``corpus.jsonl.gz`` ({"_id", "title", "text"}), ``queries.jsonl`` ({"_id", "text"}) and, when
present, ``qrels/test.tsv`` for nDCG@10. The corpus is tokenised once with the default
``BagOfWordsConverter``; rank-bm25's ``BM25Okapi`` and ``BM25Index`` are built on the same
tokens and every query's top-k is timed through both in this process (rank-bm25 through
``get_scores`` and a stable argsort, so ties go to the lower row as in ``BM25Index.top_k``;
``BM25Index``'s pass is repeated for a second and averaged, being too short to time once).
The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import gzip
import json
import math
import os
import sys
import time
from pathlib import Path

import numpy as np
from rank_bm25 import BM25Okapi

from rag.retrievers.sparse import BagOfWordsConverter, BM25Index

ROOT = Path(__file__).resolve().parents[1]


def default_dataset() -> Path:
    base = os.environ.get("TRELLIS_DATASETS_DIR") or str(ROOT / ".." / "shared" / "datasets")
    return Path(base) / "scifact"


def read_jsonl(path: Path) -> list[dict]:
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "rt", encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def read_qrels(path: Path) -> dict[str, dict[str, int]]:
    relevant: dict[str, dict[str, int]] = {}
    if not path.is_file():
        return relevant
    with open(path, encoding="utf-8") as stream:
        for line in stream:
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 3 or not fields[2].lstrip("-").isdigit():
                continue  # the header
            relevant.setdefault(fields[0], {})[fields[1]] = int(fields[2])
    return relevant


def ndcg_at(ranked: list[str], relevant: dict[str, int], k: int) -> float:
    gains = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sum(gain / math.log2(rank + 2) for rank, gain in enumerate(sorted(relevant.values(), reverse=True)[:k]))
    return gains / ideal if ideal else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=default_dataset(), help="a BEIR dataset directory")
    parser.add_argument("--k", type=int, default=10, help="how many documents each query returns")
    args = parser.parse_args()
    dataset: Path = args.dataset
    if not (dataset / "corpus.jsonl.gz").is_file():
        print(f"no BEIR corpus at {dataset} (expected corpus.jsonl.gz); pass --dataset", file=sys.stderr)
        return 2

    corpus = read_jsonl(dataset / "corpus.jsonl.gz")
    queries = read_jsonl(dataset / "queries.jsonl")
    qrels = read_qrels(dataset / "qrels" / "test.tsv")
    names = [str(document["_id"]) for document in corpus]
    doc_ids = [int(name) for name in names] if all(name.isdigit() for name in names) else None
    converter = BagOfWordsConverter()

    started = time.perf_counter()
    tokens = [converter.analyze(f"{document.get('title', '')} {document.get('text', '')}") for document in corpus]
    query_tokens = [converter.analyze(query["text"]) for query in queries]
    tokenize_s = time.perf_counter() - started

    started = time.perf_counter()
    reference = BM25Okapi(tokens)
    reference_build_s = time.perf_counter() - started
    started = time.perf_counter()
    index = BM25Index.from_tokens(tokens, doc_ids=doc_ids)
    index_build_s = time.perf_counter() - started

    k = args.k
    started = time.perf_counter()
    reference_top = []
    for query in query_tokens:
        scores = reference.get_scores(query)
        reference_top.append(np.argsort(-scores, kind="stable")[:k])
    reference_s = time.perf_counter() - started

    # One pass takes milliseconds, so time whole passes for at least a second and average them.
    passes, started = 0, time.perf_counter()
    while True:
        index_top = [index.top_k(query, k)[0] for query in query_tokens]
        passes += 1
        if time.perf_counter() - started >= 1.0:
            break
    index_s = (time.perf_counter() - started) / passes

    identical = sum(np.array_equal(ours, theirs) for ours, theirs in zip(index_top, reference_top, strict=True))
    max_relative = 0.0
    for query in query_tokens:
        ours, theirs = index.scores(query), reference.get_scores(query)
        nonzero = theirs != 0
        if np.any(ours[~nonzero] != 0):
            max_relative = math.inf
        if nonzero.any():
            max_relative = max(max_relative, float(np.max(np.abs(ours[nonzero] - theirs[nonzero])
                                                          / np.abs(theirs[nonzero]))))

    judged = [(position, query) for position, query in enumerate(queries) if str(query["_id"]) in qrels]
    ndcg = (
        sum(ndcg_at([names[row] for row in index_top[position]], qrels[str(query["_id"])], k)
            for position, query in judged) / len(judged)
        if judged else None
    )

    n_queries = len(queries)
    speedup = reference_s / index_s if index_s else math.inf
    print(f"BM25 (Okapi, k1=1.5, b=0.75) on {dataset.name}: {len(corpus)} documents, {n_queries} queries, "
          f"{sum(map(len, tokens))} tokens, {len(index.vocabulary)} terms; tokenising took {tokenize_s:.2f} s")
    print(f"{'':22}{'build (s)':>12}{'per query (ms)':>16}{f'top-{k}, all (s)':>18}")
    for label, build_s, total_s in (("rank-bm25 BM25Okapi", reference_build_s, reference_s),
                                    ("BM25Index", index_build_s, index_s)):
        print(f"{label:22}{build_s:12.3f}{1000 * total_s / max(n_queries, 1):16.3f}{total_s:18.3f}")
    print(f"speedup ×{speedup:.1f}; identical top-{k}: {identical}/{n_queries}; "
          f"max relative score difference {max_relative:.2e}"
          + (f"; nDCG@{k} {ndcg:.4f} over {len(judged)} judged queries" if ndcg is not None else ""))
    result = {
        "dataset": dataset.name,
        "docs": len(corpus),
        "queries": n_queries,
        "speedup": round(speedup, 1),
        f"identical_top{k}": identical / n_queries if n_queries else 1.0,
        "max_rel_score_diff": max_relative,
        "index_build_s": round(index_build_s, 3),
        "rank_bm25_build_s": round(reference_build_s, 3),
        "index_query_ms": round(1000 * index_s / max(n_queries, 1), 4),
        "rank_bm25_query_ms": round(1000 * reference_s / max(n_queries, 1), 3),
        "tokenize_s": round(tokenize_s, 2),
        f"ndcg_at_{k}": round(ndcg, 4) if ndcg is not None else None,
    }
    print(json.dumps(result))
    return 0 if identical == n_queries and max_relative < 1e-9 else 1


if __name__ == "__main__":
    sys.exit(main())
