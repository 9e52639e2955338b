"""Latency (p50/p95) and nDCG@10 of every retriever preset over a real Chroma store and BM25 index.

Run from the repository root::

    .venv/bin/python bench/retrieval.py [--dataset PATH] [--docs 200] [--queries 100] [--llm-queries 10]
                                        [--presets keyword,semantic,...] [--no-cache]

Corpus: scifact (default ``<shared datasets>/scifact``, found as ``rag.locations.datasets_dir`` finds them, read in place)
cut exactly as ``bench/bm25.py`` cuts it (``RecursiveCharacterChunker`` 200/0, one or two
sentences a chunk), restricted so the dense index can be embedded within the time limit: every
abstract judged relevant to the first ``--queries`` queries, then the first abstracts of the
corpus as distractors until ``--docs`` abstracts. nDCG@10 on this subset is therefore higher than
on the full 5,183 abstracts; compare presets with each other, not with published figures.

Stores: the production ones, in a temporary directory. ``KnowledgeBaseStores`` over a Chroma
``PersistentClient`` (vectors of all-MiniLM-L6-v2 int8, the English knowledge-base default, computed
by the component's ``embed_documents`` and upserted by ``VectorCollection.upsert``) and the BM25
index it builds and saves on first use. Each preset of ``rag.presets.PRESETS`` is validated
with ``check_availability`` (an unavailable one is reported as skipped with the validator's
reason), built with ``rag.core.build(preset.config(), infra=...)`` exactly as a chat builds it,
warmed (non-LLM presets) with 10 other judged queries, then timed through ``retrieve()`` inside
``recording(TraceRecorder())``, which also counts LLM calls. Queries run one at a time in a worker
thread, as a chat runs its strategy (``asyncio.to_thread``); latency is measured inside it.
LLM presets (LocalLLM: packaged Qwen2.5 0.5B, assembled once into ``$TRELLIS_MODELS_DIR``, default
``~/.cache/trellis/models``) run the first ``--llm-queries`` queries, fewer when ``--budget-s``
runs out (reported as ``truncated``). nDCG@10: each ranking of chunks becomes a ranking of
abstracts (each at its best chunk's rank) scored against ``qrels/test.tsv``; non-LLM presets only.

Vectors are cached between runs under ``~/.cache/trellis-bench`` (keyed by the texts' digest);
``--no-cache`` embeds again. The last line printed is one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from _common import (
    ChunkCorpus,
    chunk_corpus,
    default_dataset,
    documents_of,
    emit,
    machine,
    ndcg_at,
    percentile,
    read_corpus,
    read_qrels,
    read_queries,
    wall_s,
)

os.environ.setdefault("TRELLIS_MODELS_DIR", str(Path.home() / ".cache" / "trellis" / "models"))

import numpy as np  # noqa: E402

from rag.components import load_components  # noqa: E402
from rag.core import build, validate_tree  # noqa: E402
from rag.presets import PRESETS  # noqa: E402
from rag.tracing import TraceRecorder, recording  # noqa: E402

EMBEDDING = {"component": "AllMiniLML6V2OnnxEmbedding", "params": {}}  # the English default
LLM_COMPONENTS = {"LocalLLM", "OpenAICompatibleLLM", "LLMRerankRetriever", "AgenticEnsembleRetriever"}


def uses_llm(config: dict) -> bool:
    if config.get("component") in LLM_COMPONENTS:
        return True
    params = config.get("params") or {}
    return any(uses_llm(value) for value in params.values() if isinstance(value, dict)) or any(
        uses_llm(child) for value in params.values() if isinstance(value, list)
        for child in value if isinstance(child, dict))


def subset(records: list[dict], queries: list[dict], qrels: dict, docs: int) -> list[dict]:
    """Every record relevant to ``queries``, then leading records, ``docs`` in all, in corpus order."""
    wanted = {doc for query in queries for doc in qrels.get(str(query["_id"]), {})}
    chosen = {str(record["_id"]) for record in records if str(record["_id"]) in wanted}
    for record in records:
        if len(chosen) >= docs:
            break
        chosen.add(str(record["_id"]))
    return [record for record in records if str(record["_id"]) in chosen]


def vectors_for(corpus: ChunkCorpus, embedding, use_cache: bool) -> tuple[np.ndarray, float, bool]:
    texts = [chunk.text for chunk in corpus.ordered]
    digest = hashlib.sha256("\x00".join([f"{embedding.NAME}:{embedding.model_key}", *texts]).encode()).hexdigest()[:20]
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trellis-bench" / f"vectors-{digest}.npy"
    if use_cache and cache.is_file():
        return np.load(cache), 0.0, True
    started = time.perf_counter()
    vectors = embedding.embed_documents(texts)
    elapsed = time.perf_counter() - started
    if use_cache:
        cache.parent.mkdir(parents=True, exist_ok=True)
        np.save(cache, vectors)
    return vectors, elapsed, False


def timed_query(retriever, text: str) -> tuple[list, float, int, str | None]:
    """One ``retrieve`` with its own trace recorder: (chunks, milliseconds, LLM calls, error)."""
    with recording(TraceRecorder()) as recorder:
        started = time.perf_counter()
        try:
            chunks, error = retriever.retrieve(text)[0], None
        except Exception as exc:  # a failed query is counted, and its time kept
            chunks, error = [], f"{type(exc).__name__}: {exc}"
        elapsed_ms = 1000 * (time.perf_counter() - started)
    return chunks, elapsed_ms, recorder.llm_calls, error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, default=default_dataset(), help="a BEIR dataset directory")
    parser.add_argument("--chunk-size", type=int, default=200)
    parser.add_argument("--chunk-overlap", type=int, default=0)
    parser.add_argument("--docs", type=int, default=200, help="abstracts in the corpus (relevant ones first)")
    parser.add_argument("--queries", type=int, default=100, help="queries for presets without an LLM")
    parser.add_argument("--llm-queries", type=int, default=10, help="queries for presets with an LLM")
    parser.add_argument("--presets", default="", help="comma-separated preset names (default: all)")
    parser.add_argument("--no-cache", action="store_true", help="embed the corpus again")
    parser.add_argument("--budget-s", type=float, default=160.0,
                        help="wall-time budget: what is left of it when the LLM presets start is shared "
                             "equally by them, and one stops early (after ≥ 1 query) when its next query "
                             "would overrun its share; the JSON then says truncated")
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()

    records = read_corpus(args.dataset)
    qrels = read_qrels(args.dataset / "qrels" / "test.tsv")
    queries = [query for query in read_queries(args.dataset) if str(query["_id"]) in qrels][: args.queries]
    corpus = chunk_corpus(subset(records, queries, qrels, args.docs),
                          chunk_size=args.chunk_size, chunk_overlap=args.chunk_overlap)
    ordered = corpus.ordered
    registry = load_components()

    from rag.documents.models import SourceDocument
    from rag.stores import ChromaStore, KnowledgeBaseStores

    judged = [query for query in read_queries(args.dataset) if str(query["_id"]) in qrels]
    warm_up = [query for query in judged[::-1] if query not in queries][:10]
    # Chats run retrieval off the event loop, in a worker thread (asyncio.to_thread); so do these.
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-query")
    data_dir = Path(tempfile.mkdtemp(prefix="trellis-bench-retrieval-"))
    results: dict[str, dict] = {}
    prepare_s: float | None = None
    try:
        embedding = build(EMBEDDING, kind="embedding", registry=registry)
        embedding.embed_documents(["warm-up"])
        vectors, embed_s, cached = vectors_for(corpus, embedding, not args.no_cache)
        stores = KnowledgeBaseStores(knowledge_base_id=1, data_dir=data_dir,
                                     chroma=ChromaStore(path=data_dir / "chroma"), content_version=1,
                                     chunks=corpus.chunks, default_embedding=EMBEDDING)
        started = time.perf_counter()
        stores.vectors(embedding.model_key, "cosine").upsert(
            [chunk.id for chunk in ordered], vectors,
            [{"document_id": chunk.document_id, "position": chunk.position} for chunk in ordered])
        upsert_s = time.perf_counter() - started
        infra = {
            "env_path": stores.index_dir,
            "chunks": corpus.chunks,
            "persistence": stores,
            "documents": {document_id: SourceDocument(document_id, name) for document_id, name in corpus.names.items()},
            "language": "en",
        }
        print(f"Corpus: {len(corpus.names)} {args.dataset.name} abstracts (of {len(records)}) → "
              f"{len(ordered)} chunks (RecursiveCharacterChunker {args.chunk_size}/{args.chunk_overlap}); embedded "
              + ("from cache" if cached else f"in {embed_s:.1f} s ({len(ordered) / embed_s:.0f}/s)")
              + f", Chroma upsert {upsert_s:.1f} s; {len(queries)} queries, {args.llm_queries} for LLM presets")

        wanted = {name.strip() for name in args.presets.split(",") if name.strip()}
        selected = [preset for preset in PRESETS if not wanted or preset.name in wanted]
        problems = {preset.name: validate_tree(preset.config(), registry=registry, kind="retriever",
                                               check_availability=True)[1] for preset in selected}
        llm_left = sum(1 for preset in selected if not problems[preset.name] and uses_llm(preset.config()))
        for preset in selected:
            config = preset.config()
            errors = problems[preset.name]
            if errors:
                reason = "; ".join(str(error) for error in errors)
                results[preset.name] = {"skipped": reason}
                continue
            llm = uses_llm(config)
            share, preset_started = float("inf"), time.perf_counter()
            if llm:
                # What is left of the budget, shared equally by the LLM presets still to run.
                share = (args.budget_s - wall_s()) / max(llm_left, 1)
                llm_left -= 1
                preset_started = time.perf_counter()  # the share covers preparing and loading the LLM too
                if share <= 0:
                    results[preset.name] = {"skipped": f"the --budget-s {args.budget_s:g} s was spent before it "
                                                       "started (embedding the corpus?); run again, the vectors "
                                                       "are cached now"}
                    continue
            if llm and prepare_s is None:
                from rag.llms import local_models

                started = time.perf_counter()
                local_models.ensure("qwen2.5-0.5b-instruct")  # assembles the GGUF on the first run only
                prepare_s = time.perf_counter() - started
            started = time.perf_counter()
            retriever = build(config, kind="retriever", registry=registry, infra=infra)
            if not llm:
                # Loads the BM25 index, opens the collection, warms the model on other questions.
                for query in warm_up:
                    worker.submit(timed_query, retriever, query["text"]).result()
            build_s = time.perf_counter() - started
            chosen = queries[: args.llm_queries] if llm else queries
            latencies, calls, ndcgs, failures, truncated = [], [], [], 0, False
            for query in chosen:
                expected_end = time.perf_counter() - preset_started + statistics.fmean(latencies or [0]) / 1000
                if latencies and expected_end > share:
                    truncated = True
                    break
                chunks, elapsed_ms, llm_calls, error = worker.submit(timed_query, retriever, query["text"]).result()
                if error is not None:
                    failures += 1
                    print(f"{preset.name}: query {query['_id']} failed: {error}", file=sys.stderr)
                latencies.append(elapsed_ms)
                calls.append(llm_calls)
                ndcgs.append(ndcg_at(documents_of(chunks, corpus.names), qrels[str(query["_id"])], args.k))
            entry = {"p50_ms": round(percentile(latencies, 50), 2), "p95_ms": round(percentile(latencies, 95), 2),
                     "queries": len(latencies), "setup_s": round(build_s, 2)}
            if truncated:
                entry["truncated"] = f"{len(latencies)} of {len(chosen)} queries within --budget-s {args.budget_s:g}"
            if llm:
                entry["llm_calls_per_query"] = round(statistics.fmean(calls), 2)
            else:
                entry["ndcg_at_10"] = round(statistics.fmean(ndcgs), 4)
            if failures:
                entry["failures"] = failures
            results[preset.name] = entry
            retriever.close()

        print(f"{'preset':22}{'queries':>8}{'p50 ms':>10}{'p95 ms':>10}{'nDCG@10':>9}{'LLM calls/q':>12}")
        for name, entry in results.items():
            if "skipped" in entry:
                print(f"{name:22}  skipped: {entry['skipped']}")
                continue
            ndcg = f"{entry['ndcg_at_10']:.4f}" if "ndcg_at_10" in entry else "—"
            calls = f"{entry['llm_calls_per_query']:.1f}" if "llm_calls_per_query" in entry else "—"
            print(f"{name:22}{entry['queries']:8d}{entry['p50_ms']:10.1f}{entry['p95_ms']:10.1f}{ndcg:>9}{calls:>12}")
        print(f"wall {wall_s():.0f} s")
        emit({
            "presets": results,
            "dataset": args.dataset.name,
            "docs": len(corpus.names),
            "chunks": len(ordered),
            "chunk_size": args.chunk_size,
            "store": "chroma-persistent+bm25-saved",
            "embedded_s": round(embed_s, 1),
            "vectors_cached": cached,
            "llm_prepare_s": round(prepare_s, 1) if prepare_s is not None else None,
            **machine(),
        })
        return 0
    finally:
        worker.shutdown()
        shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
