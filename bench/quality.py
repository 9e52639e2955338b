"""Retrieval quality of the presets on every BEIR dataset, beside a plain rank-bm25 baseline;
regenerates ``bench/quality.md`` (``make bench-quality``).

Run from the repository root::

    .venv/bin/python bench/quality.py [--datasets scifact,cranfield,...] [--llm-queries 10]
                                      [--agentic-queries 50] [--llm-datasets scifact,cranfield]
                                      [--llm-presets agentic,hybrid-llm-rerank] [--budget-min 100]
                                      [--planner qwen2.5-1.5b-instruct]
                                      [--output bench/quality.md] [--no-cache]

Every dataset folder of the shared datasets folder (``rag.locations.datasets_dir``) is read in place
(nothing is copied) by ``rag.evaluation.load_beir`` and loaded into memory with chunking off
(one chunk per document, as BEIR scores documents). The presets run through the same engine as
``manage.py evaluate`` (``rag.evaluation``): each query asks the retriever for 100 results; the
ranking is scored against ``qrels/test.tsv`` (graded gains for nDCG; a hit is never dropped for
having the query's id). The dense model is all-MiniLM-L6-v2 for English and multilingual-e5-small
for Spanish and Chinese (the knowledge-base defaults); document vectors are cached under
``~/.cache/trellis-bench`` (keyed by model and texts), so a second run embeds nothing.

* **rank-bm25**: ``BM25Okapi`` (k1 1.5, b 0.75) over lower-cased ``\\w+`` tokens, Chinese split
  into single characters — the datasets' README baseline, computed again in this run.
* **keyword / semantic / hybrid**: every judged query.
* **hybrid before**: the Hybrid preset until 2026-12-03 (its BM25 child counting words as written),
  beside today's (the BM25 child stems in the knowledge base's language), with a paired test and the
  difference on each half of the queries.
* **LLM presets** (``agentic``, ``hybrid-llm-rerank``; the packaged Qwen2.5 0.5B through
  llama.cpp; ``--planner`` names the agentic tree's planning model, else the preset's own), on ``--llm-datasets`` (SciFact and Cranfield): the first ``--agentic-queries`` (50)
  queries for the agentic tree and ``--llm-queries`` (10) for the re-ranker, fewer when the
  wall-time budget (``--budget-min``) runs out — what is left of it after the fast presets goes two thirds
  to the agentic tree, one third to the re-ranker, split over the datasets; their row also gives
  hybrid's nDCG@10 on the same queries and the paired test against it.
* **SciFact**: the published BEIR figures (BM25 0.665; BM25 + ms-marco-MiniLM-L-6-v2 cross-encoder
  0.688 nDCG@10) for reference; no local cross-encoder weights ship, so the latter is not rerun.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import time
from pathlib import Path

from _common import ROOT, datasets_dir, emit, machine, percentile, wall_s

os.environ.setdefault("TRELLIS_MODELS_DIR", str(Path.home() / ".cache" / "trellis" / "models"))

import numpy as np  # noqa: E402

from rag.evaluation import (  # noqa: E402
    RETRIEVAL_METRICS,
    PipelineSpec,
    RunOptions,
    available_datasets,
    bootstrap_ci,
    build_corpus,
    compare_paired,
    default_embedding,
    evaluate_pipeline,
    load_beir,
    query_metrics,
    strategy_config,
)
from rag.evaluation.metrics import mean  # noqa: E402

FAST_PRESETS = ("keyword", "semantic", "hybrid")
BEFORE = "hybrid before (BM25 words as written)"
"""The Hybrid preset until 2026-12-03: the same fusion, its BM25 child not stemming."""
BEFORE_TREE = {"component": "EnsembleRetriever", "params": {
    "fusion": "weighted", "top_k": 10,
    "children": [{"component": "BM25Retriever", "params": {"top_k": 100}},
                 {"component": "DenseEmbeddingRetriever", "params": {"top_k": 100}}]}}
PUBLISHED = {"scifact": [("BEIR paper: BM25 (Elasticsearch)", 0.665),
                         ("BEIR paper: BM25 + ms-marco-MiniLM-L-6-v2", 0.688)]}
CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "trellis-bench"
_WORD = re.compile(r"\w+")
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")


def plain_tokens(text: str) -> list[str]:
    """Lower-cased ``\\w+`` tokens, each CJK ideograph a token of its own."""
    tokens = []
    for word in _WORD.findall(text.lower()):
        if _CJK.search(word):
            pieces = re.split(f"({_CJK.pattern})", word)
            tokens.extend(piece for piece in pieces if piece)
        else:
            tokens.append(word)
    return tokens


def rank_bm25_baseline(dataset, depth: int = 100) -> dict:
    from rank_bm25 import BM25Okapi

    ids = [document.id for document in dataset.corpus]
    bm25 = BM25Okapi([plain_tokens(f"{document.title} {document.text}") for document in dataset.corpus])
    rows, latencies = [], []
    for query in dataset.queries:
        started = time.perf_counter()
        scores = bm25.get_scores(plain_tokens(query.text))
        order = np.argsort(-scores, kind="stable")[:depth]
        latencies.append((time.perf_counter() - started) * 1000)
        rows.append(query_metrics([ids[row] for row in order], dataset.relevant(query.id)))
    return summarise("rank-bm25 (plain)", rows, latencies, [0] * len(rows))


def summarise(name: str, rows: list[dict], latencies: list[float], calls: list[int], **extra) -> dict:
    return {"name": name, "queries": len(rows),
            "metrics": {metric: mean(row[metric] for row in rows) for metric in RETRIEVAL_METRICS},
            "ci": {metric: bootstrap_ci([row[metric] for row in rows]) for metric in RETRIEVAL_METRICS},
            "p50": percentile(latencies, 50), "p95": percentile(latencies, 95),
            "llm_calls": mean(calls) if calls else 0.0, **extra}


def from_pipeline(result: dict, **extra) -> dict:
    rows = result["per_query"]
    return summarise(result["name"], rows, [row["latency_ms"] for row in rows], [row["llm_calls"] for row in rows],
                     failures=result["failures"], truncated=result["truncated"],
                     planned=result["planned_queries"], **extra)


def paired(ours_result: dict, theirs_result: dict, label: str) -> str:
    """The paired nDCG@10 test of one run against another on the queries both ran, and the
    difference on each half of them (odd and even positions), so a gain that only one half of the
    queries shows is visible: ``label`` names the other run ("vs before", "vs hybrid")."""
    ours = {row["query_id"]: row["ndcg@10"] for row in ours_result["per_query"]}
    theirs = {row["query_id"]: row["ndcg@10"] for row in theirs_result["per_query"]}
    ids = [query_id for query_id in ours if query_id in theirs]
    test = compare_paired([ours[i] for i in ids], [theirs[i] for i in ids])
    halves = [mean(ours[i] - theirs[i] for i in ids[start::2]) for start in (0, 1)]
    return (f"{label}: Δ {test['difference']:+.3f} [{test['ci'][0]:+.3f}, {test['ci'][1]:+.3f}], "
            f"p {test['p_randomization']:.3f}; halves Δ {halves[0]:+.3f} / {halves[1]:+.3f}")


def fmt(value, digits: int = 3) -> str:
    return "—" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


def ms(value) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def table(sections: list[dict]) -> str:
    header = ["Dataset", "System", "Queries", "nDCG@10", "95% CI", "R@1", "R@5", "R@10", "R@100", "MRR@10", "MAP",
              "p50 ms", "p95 ms", "LLM calls/q", "Notes"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for section in sections:
        first = True
        for row in section["rows"]:
            label = f"**{section['name']}**" if first else ""
            first = False
            if "published" in row:
                lines.append(f"| {label} | {row['name']} | | {row['published']:.3f} | | | | | | | | | | | published |")
                continue
            metrics, ci = row["metrics"], row["ci"]["ndcg@10"]
            queries = str(row["queries"])
            if row.get("truncated"):
                queries += f" of {row['planned']}"
            notes = row.get("notes", "")
            if row.get("failures"):
                notes = (notes + "; " if notes else "") + f"{row['failures']} failed"
            lines.append("| " + " | ".join([
                label, row["name"], queries, fmt(metrics["ndcg@10"]), f"[{fmt(ci[0])}, {fmt(ci[1])}]",
                *(fmt(metrics[name]) for name in RETRIEVAL_METRICS[1:]), ms(row["p50"]), ms(row["p95"]),
                fmt(row["llm_calls"], 1), notes]) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", default="", help="comma-separated dataset names (default: every one)")
    parser.add_argument("--limit", type=int, default=None, help="queries per dataset for the fast presets")
    parser.add_argument("--llm-queries", type=int, default=10, help="queries of each dataset for the LLM re-ranker")
    parser.add_argument("--agentic-queries", type=int, default=50, help="queries of each dataset for the agentic tree")
    parser.add_argument("--llm-datasets", default="scifact,cranfield",
                        help="datasets the LLM presets run on (comma-separated; empty: every one)")
    parser.add_argument("--llm-presets", default="agentic,hybrid-llm-rerank")
    parser.add_argument("--planner", help="the packaged model that plans and judges in the agentic tree "
                                          "(default: the Agentic preset's own)")
    parser.add_argument("--budget-min", type=float, default=100.0,
                        help="wall-time budget; the LLM presets share what is left of it when they start")
    parser.add_argument("--output", type=Path, default=ROOT / "bench" / "quality.md")
    parser.add_argument("--no-cache", action="store_true", help="embed every corpus again")
    args = parser.parse_args()

    root = datasets_dir()
    wanted = [name.strip() for name in args.datasets.split(",") if name.strip()] or available_datasets(root)
    if not wanted:
        print(f"no BEIR dataset under {root}; set TRELLIS_DATASETS_DIR", file=sys.stderr)
        return 2
    llm_presets = [name.strip() for name in args.llm_presets.split(",") if name.strip()]
    sections, loaded, embedded = [], {}, {}
    for name in wanted:
        dataset = load_beir(root / name)
        embedding = default_embedding(dataset)
        corpus = build_corpus(dataset, default_embedding=embedding, cache_dir=None if args.no_cache else CACHE)
        loaded[name] = (dataset, corpus)
        print(f"{name}: {len(dataset.corpus)} documents, {len(dataset.queries)} queries, language "
              f"{dataset.language}, dense model {embedding['component']}", flush=True)
        rows = [*({"name": label, "published": value} for label, value in PUBLISHED.get(name, []))]
        rows.append({**rank_bm25_baseline(dataset.limited(args.limit)),
                     "notes": "README baseline tokens" + (" (CJK characters)" if dataset.language == "zh" else "")})
        results = {}
        for preset in FAST_PRESETS:
            started = time.perf_counter()
            result = evaluate_pipeline(dataset.limited(args.limit), PipelineSpec(preset, strategy_config(preset)),
                                       corpus, options=RunOptions(depth=100, resamples=1000))
            results[preset] = result
            rows.append(from_pipeline(result))
            print(f"  {preset:10} nDCG@10 {result['metrics']['ndcg@10']:.3f} "
                  f"({time.perf_counter() - started:.0f} s)", flush=True)
        before = evaluate_pipeline(dataset.limited(args.limit), PipelineSpec(BEFORE, strategy_config(BEFORE_TREE)),
                                   corpus, options=RunOptions(depth=100, resamples=1000))
        rows.append(from_pipeline(before))
        hybrid_row = next(row for row in rows if row.get("name") == "hybrid")
        hybrid_row["notes"] = paired(results["hybrid"], before, "vs before")
        print(f"  {'before':10} nDCG@10 {before['metrics']['ndcg@10']:.3f}; hybrid {hybrid_row['notes']}", flush=True)
        embedded[name] = corpus.infra["persistence"].embedded
        sections.append({"name": name, "rows": rows, "hybrid": results["hybrid"]})

    llm_datasets = {name.strip() for name in args.llm_datasets.split(",") if name.strip()}
    pairs = [(section, preset) for preset in llm_presets for section in sections
             if not llm_datasets or section["name"] in llm_datasets]
    if pairs:
        from rag.llms import local_models

        local_models.ensure("qwen2.5-0.5b-instruct")
        if args.planner:
            local_models.ensure(args.planner)
    # What is left of the budget goes to the LLM presets in order of priority (the first one, the
    # agentic tree, gets two thirds when there are two), split evenly over the datasets; time a
    # pair does not use rolls over to the next.
    weights = [2.0 if index == 0 and len(llm_presets) > 1 else 1.0 for index in range(len(llm_presets))]
    llm_started, llm_budget = wall_s(), max(args.budget_min * 60 - wall_s(), 0.0)
    for index, (section, preset) in enumerate(pairs):
        position = llm_presets.index(preset)
        allotted = llm_budget * sum(weights[: position + 1]) / sum(weights)
        pairs_left = sum(1 for _, other in pairs[index:] if other == preset)
        share = (allotted - (wall_s() - llm_started)) / pairs_left
        if share < 20:
            section["rows"].append({"name": preset, "queries": 0, "metrics": {m: None for m in RETRIEVAL_METRICS},
                                    "ci": {"ndcg@10": [None, None]}, "p50": None, "p95": None, "llm_calls": None,
                                    "notes": "skipped: the time budget was spent"})
            continue
        dataset, corpus = loaded[section["name"]]
        subset = dataset.limited(args.agentic_queries if preset == "agentic" else args.llm_queries)
        config = strategy_config(preset)
        if preset == "agentic" and args.planner:
            config["params"]["retriever"]["params"]["llm_model"] = {"component": "LocalLLM",
                                                                    "params": {"model": args.planner}}
        result = evaluate_pipeline(subset, PipelineSpec(preset, config), corpus,
                                   options=RunOptions(depth=100, resamples=1000, max_seconds=share))
        ran = {row["query_id"] for row in result["per_query"]}
        planner = f"; planner {args.planner}" if preset == "agentic" and args.planner else ""
        if ran:
            hybrid = mean(row["ndcg@10"] for row in section["hybrid"]["per_query"] if row["query_id"] in ran)
            notes = f"first {len(ran)} queries; hybrid on them: {hybrid:.3f}; " \
                    f"{paired(result, section['hybrid'], 'vs hybrid')}{planner}"
        else:
            notes = "no query finished within the time budget" + planner
        section["rows"].append(from_pipeline(result, notes=notes))
        print(f"  {section['name']}/{preset}: {len(ran)} queries, nDCG@10 {result['metrics']['ndcg@10']:.3f} "
              f"({notes}), {wall_s():.0f} s so far", flush=True)

    total = wall_s()
    cached = all(entry.get("cached") for models in embedded.values() for entry in models.values())
    facts = machine()
    document = "\n".join([
        "# Retrieval quality (`make bench-quality`)",
        "",
        f"Generated by `bench/quality.py` on {time.strftime('%Y-%m-%d')}: **{total / 60:.1f} min** wall time on "
        f"{facts['cores']} CPU cores (1-minute load average {facts['load_1m'][0]} at the start, {facts['load_1m'][1]} "
        f"at the end; other work shared the machine), document vectors "
        + ("all from the cache." if cached else "embedded in this run (a second run reads them from the cache).")
        ,
        "",
        "Every judged query of each dataset (`qrels/test.tsv`), each corpus document one chunk, 100 results "
        "asked of each retriever; nDCG@10 with graded gains and its 95% bootstrap CI (1,000 resamples, seed 0); "
        "latency per query through `retrieve` (rank-bm25: `get_scores` + sort). Dense retrieval uses "
        "all-MiniLM-L6-v2 for the English datasets and multilingual-e5-small for XQuAD es/zh; the keyword preset "
        "uses the default `BagOfWordsConverter` (words as written, Chinese segmented with jieba), and the hybrid "
        "preset's BM25 child stems in the dataset's language (Snowball English, or Spanish for XQuAD-es; "
        "Chinese is not stemmed). LLM presets run the packaged Qwen2.5 "
        f"0.5B{f' (the agentic tree plans with {args.planner})' if args.planner else ''} on {', '.join(sorted(llm_datasets)) or 'every dataset'} only: the agentic tree on the first "
        f"{args.agentic_queries} queries, the re-ranker on the first {args.llm_queries} (fewer when the "
        f"{args.budget_min:g}-minute budget ran short), so compare them with the hybrid figure on the same "
        "queries in their notes (with the paired difference against it), not with the full-set rows. The hybrid preset adds its children's min–max "
        "normalised scores over their top 100 each; the row before it is the Hybrid preset until 2026-12-03, "
        "the same tree with its BM25 child counting words as written, and the hybrid row's notes give the "
        "paired difference (bootstrap 95% CI, randomisation p) and the difference on each half of the queries "
        "(odd and even positions). The rank-bm25 rows recompute the datasets' README baselines (same tokens, "
        "same formula) and should match them. `hybrid-cross-encoder` needs cross-encoder weights that no "
        "package here ships; the published SciFact figure stands in for it.",
        "",
        table(sections),
        "",
        "Reproduce: `make bench-quality` (or `.venv/bin/python bench/quality.py --help` for subsets). The "
        "engine behind it is `rag.evaluation`, also run by `python manage.py evaluate` and the "
        "`/api/v1/evaluations/` endpoints.",
        "",
    ])
    args.output.write_text(document, encoding="utf-8")
    print(table(sections))
    print(f"wrote {args.output} in {total:.0f} s")
    emit({"datasets": {section["name"]: {row["name"]: round(row["metrics"]["ndcg@10"], 4)
                                         for row in section["rows"]
                                         if "metrics" in row and row["metrics"]["ndcg@10"] is not None}
                       for section in sections},
          "vectors_cached": cached, **facts})
    return 0


if __name__ == "__main__":
    sys.exit(main())
