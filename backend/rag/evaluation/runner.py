"""Running pipelines over an evaluation dataset: retrieval metrics per query, answer metrics on a
subset, confidence intervals, and paired comparisons.

Results are plain JSON-ready dicts (stored as they are by the app, printed by the command):

``evaluate`` returns ``{"dataset", "settings", "pipelines": [...], "comparisons": [...]}`` where
each pipeline entry holds ``metrics`` (means), ``ci`` (95 % bootstrap intervals),
``recall_curve``, ``latency_ms`` (p50/p95/mean), ``llm_calls_per_query``, ``failures``,
``answers`` (or None) and ``per_query`` rows.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rag.components import load_components
from rag.core import ConfigObject, TrellisError, build, readable_error, validate_or_raise
from rag.embeddings import default_embedding_for_language
from rag.llms import LLM
from rag.presets import PRESETS
from rag.retrievers import BaseRetriever
from rag.retrievers.dense import DenseEmbeddingRetriever
from rag.retrievers.sparse import BM25Retriever
from rag.strategies import Strategy
from rag.tracing import TraceRecorder, recording

from .answers import (
    answer_contains,
    citation_precision,
    concise_contains,
    exact_match,
    judge_faithfulness,
    strip_citations,
    token_f1,
    verbatim_copy,
)
from .corpus import EvaluationCorpus, MemoryStores, build_corpus
from .datasets import EvaluationDataset
from .depth import deepen
from .metrics import RECALL_CURVE_KS, RETRIEVAL_METRICS, document_ranking, mean, query_metrics, recall_curve
from .statistics import bootstrap_ci, compare_paired, percentile

logger = logging.getLogger(__name__)

Progress = Callable[[int, int], None]
"""Called as ``progress(done, total)`` after each query (retrieval and answering alike)."""

ANSWER_METRICS: tuple[str, ...] = ("exact_match", "f1", "contains", "concise_contains", "verbatim_copy",
                                   "citation_precision", "faithfulness")
KEPT_RESULTS = 10
QUERY_TEXT_KEPT = 300  # enough to recognise a query in the per-query table


@dataclass(frozen=True)
class PipelineSpec:
    """A pipeline to evaluate: a display name and a strategy reference."""

    name: str
    config: dict[str, Any]


@dataclass(frozen=True)
class RunOptions:
    """How queries are run.

    Parameters
    ----------
    depth : int or None
        How many results every retriever of the tree is asked for at least (``top_k``, children
        of composites included: ``deepen``), 100 by default as BEIR evaluates; None keeps each
        pipeline's own ``top_k``. Parts that cannot honour it (an LLM choosing the pool) are
        named in the result's ``depth.limits``. Answers always use the pipeline as configured.
    answer_queries : int
        How many of the queries (the first ones) are also answered by the whole strategy, for
        the answer metrics; 0 evaluates retrieval only.
    seed : int
        Seed of the bootstrap intervals and significance tests.
    max_seconds : float or None
        Stop a pipeline's queries once this much time has gone (after at least one query);
        the result then says ``truncated``.
    """

    depth: int | None = 100
    answer_queries: int = 0
    seed: int = 0
    resamples: int = 2000
    permutations: int = 10000
    max_seconds: float | None = None


def strategy_config(spec: str | Path | Mapping[str, Any]) -> dict[str, Any]:
    """A strategy reference from a preset name (run by NaiveRAG), a pipeline JSON file or
    document, a strategy reference, or a retriever reference (wrapped in NaiveRAG)."""
    if isinstance(spec, (str, Path)) and Path(spec).suffix == ".json":
        path = Path(spec)
        if not path.is_file():
            raise ValueError(f"no pipeline file {path}")
        spec = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(spec, (str, Path)):
        presets = {preset.name: preset for preset in PRESETS}
        if str(spec) not in presets:
            raise ValueError(f"unknown preset {str(spec)!r}; presets: {', '.join(presets)}")
        return {"component": "NaiveRAG", "params": {"retriever": presets[str(spec)].config()}}
    if not isinstance(spec, Mapping):
        raise ValueError("a pipeline is a preset name, a JSON file or a configuration dict")
    reference = spec["strategy"] if "strategy" in spec and "component" not in spec else spec
    component = load_components().get(reference.get("component", ""))
    if component.KIND == "retriever":
        return {"component": "NaiveRAG", "params": {"retriever": dict(reference)}}
    return dict(reference)


def default_embedding(dataset: EvaluationDataset) -> dict[str, Any]:
    """The packaged embedding model for the dataset's language (all-MiniLM-L6-v2 for English,
    multilingual-e5-small otherwise)."""
    return default_embedding_for_language(dataset.language)


def evaluate_pipeline(
    dataset: EvaluationDataset,
    pipeline: PipelineSpec,
    corpus: EvaluationCorpus,
    *,
    options: RunOptions = RunOptions(),
    judge: ConfigObject | None = None,
    credentials: Any = None,
    progress: Progress | None = None,
    progress_offset: int = 0,
    progress_total: int | None = None,
) -> dict[str, Any]:
    """Run one pipeline over every query of ``dataset`` and score it.

    The retriever of the strategy is asked each query (timed, its LLM calls counted); its chunk
    ranking becomes a document ranking scored against the judgements. The first
    ``options.answer_queries`` queries are then answered by the whole strategy.
    """
    registry = load_components()
    persistence = corpus.infra.get("persistence")
    if isinstance(persistence, MemoryStores):
        persistence.register_pipeline(pipeline.config)
    normalised = validate_or_raise(pipeline.config, registry=registry, kind="strategy")
    retriever_config = normalised["params"].get("retriever")
    if not isinstance(retriever_config, Mapping):
        raise TrellisError(f"{normalised['component']} has no single retriever to evaluate")
    answered = min(options.answer_queries, len(dataset.queries))
    depth_limits: list[str] = []
    if options.depth:
        retriever_config, depth_limits = deepen(retriever_config, options.depth, registry)
    started = time.perf_counter()
    # Retrieval needs only the retriever tree; the whole strategy (and its LLM) is built only to
    # answer.
    retriever = build(retriever_config, kind=BaseRetriever, registry=registry, infra=corpus.infra,
                      credentials=credentials)
    try:
        warm_up(retriever)
    except Exception:
        retriever.close()
        raise
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    total = progress_total if progress_total is not None else len(dataset.queries) + answered
    # No depth: the pipeline as it answers in the chat (the strategy's top_k override, else the
    # retriever's own), and the result says how many that was.
    depth = options.depth or normalised["params"].get("top_k") or retriever.default_top_k
    rows: list[dict[str, Any]] = []
    curves: list[dict[int, float]] = []
    errors: list[str] = []
    truncated = False
    try:
        for query in dataset.queries:
            if options.max_seconds is not None and rows and time.perf_counter() - started > options.max_seconds:
                truncated = True
                break
            judgements = dataset.relevant(query.id)
            with recording(TraceRecorder()) as recorder:
                began = time.perf_counter()
                try:
                    hits, _ = retriever.search(query.text, depth)
                    error = None
                except Exception as exc:  # a failed query scores 0 and is reported, the run goes on
                    if not isinstance(exc, TrellisError):
                        logger.error("query %s failed", query.id, exc_info=exc)
                    hits, error = [], readable_error(exc).message
                elapsed_ms = (time.perf_counter() - began) * 1000
            ranking = document_ranking((hit.chunk for hit in hits), corpus.corpus_id_of)
            row: dict[str, Any] = {"query_id": query.id, "query": query.text[:QUERY_TEXT_KEPT],
                                   **query_metrics(ranking, judgements),
                                   "latency_ms": round(elapsed_ms, 3), "llm_calls": recorder.llm_calls,
                                   "returned": len(ranking), "retrieved": ranking[:KEPT_RESULTS]}
            if error is not None:
                row["error"] = error
                errors.append(f"{query.id}: {error}")
            rows.append(row)
            curves.append(recall_curve(ranking, judgements))
            if progress is not None:
                progress(progress_offset + len(rows), total)
    finally:
        retriever.close()
    answers = None
    if answered and not truncated:
        strategy = build(normalised, kind=Strategy, registry=registry, infra=corpus.infra, credentials=credentials)
        try:
            answers = _answer(dataset, strategy, corpus, rows[:answered], judge, progress,
                              progress_offset + len(rows), total)
        finally:
            strategy.close()
    summary = _summary(pipeline, rows, curves, answers, errors, truncated, len(dataset.queries), build_s, options)
    returned = [row["returned"] for row in rows]
    summary["depth"] = {"asked": depth, "limits": depth_limits,
                        "returned_p50": percentile(returned, 50) if returned else 0,
                        "returned_max": max(returned, default=0)}
    return summary


def warm_up(component: ConfigObject) -> None:
    """Load what retrievers load lazily on their first query (BM25 indices, document vectors,
    the query embedding model), so the first timed query is not charged for it."""
    for child in component.sub_components():
        warm_up(child)
    if isinstance(component, BM25Retriever):
        component.index()
    elif isinstance(component, DenseEmbeddingRetriever):
        embedder = component.embedder()
        embedder.embed_query("warm-up")
        persistence = component.persistence
        if callable(getattr(persistence, "vectors", None)):
            persistence.vectors(embedder.model_key, component.params.similarity_metric)
        else:
            component.get_chunk_vectors([])


def _answer(dataset: EvaluationDataset, strategy: Any, corpus: EvaluationCorpus, rows: list[dict[str, Any]],
            judge: ConfigObject | None, progress: Progress | None, offset: int, total: int) -> dict[str, Any]:
    queries = {query.id: query for query in dataset.queries}
    latencies, first_tokens, calls = [], [], []
    for done, row in enumerate(rows, start=1):
        query = queries[row["query_id"]]
        state, first_token_ms, total_ms = streamed_answer(strategy, query.text)
        row["answer_latency_ms"] = round(total_ms, 3)
        latencies.append(row["answer_latency_ms"])
        if first_token_ms is not None:
            row["first_token_ms"] = round(first_token_ms, 3)
            first_tokens.append(first_token_ms)
        trace = state.get("trace") or {}
        row["answer_llm_calls"] = trace.get("llm_calls", 0)
        calls.append(row["answer_llm_calls"])
        answer = state.get("response") or ""
        row["answer"] = answer[:2000]
        if state.get("error"):
            row["answer_error"] = state["error"]
        passages = [chunk["text"] for chunk in state.get("chunks_sent") or []]
        if query.answers:
            prose = strip_citations(answer)
            row["exact_match"] = exact_match(prose, query.answers, dataset.language)
            row["f1"] = token_f1(prose, query.answers, dataset.language)
            row["contains"] = answer_contains(prose, query.answers, dataset.language)
            row["concise_contains"] = concise_contains(answer, query.answers, dataset.language)
            # Whether the passages the model read held a reference: tells a miss of the context
            # (what retrieval and the budget sent) from a miss of the model.
            row["context_contains"] = answer_contains("\n".join(passages), query.answers, dataset.language)
        if answer.strip():
            row["verbatim_copy"] = verbatim_copy(answer, passages, dataset.language)
        cited = [corpus.corpus_id_of(citation["document_id"]) for citation in state.get("citations") or []]
        precision = citation_precision(cited, dataset.relevant(query.id))
        if precision is not None:
            row["citation_precision"] = precision
        if judge is not None and answer.strip():
            score, details = judge_faithfulness(judge, query.text, answer, passages)
            if score is not None:
                row["faithfulness"] = score
            elif details.get("error"):
                row["faithfulness_error"] = details["error"]
        if progress is not None:
            progress(offset + done, total)
    summary: dict[str, Any] = {"queries": len(rows), "latency_ms": _latency(latencies),
                               "first_token_ms": _latency(first_tokens) if first_tokens else None,
                               "llm_calls_per_query": mean(calls)}
    for name in ANSWER_METRICS:
        values = [row[name] for row in rows if name in row]
        summary[name] = mean(values) if values else None
        summary[f"{name}_queries"] = len(values)
    return summary


def streamed_answer(strategy: Any, question: str, history: Sequence[dict[str, str]] = ()
                    ) -> tuple[dict[str, Any], float | None, float]:
    """The run's final state (``error`` set when it failed), the milliseconds until the first
    token of the answer arrived (as a chat user waits for it), and the milliseconds in all."""
    began = time.perf_counter()
    first_token_ms = None
    state: dict[str, Any] = {}
    for event in strategy.stream(question, history=list(history)):
        if event["type"] == "generation.delta" and first_token_ms is None:
            first_token_ms = (time.perf_counter() - began) * 1000
        elif event["type"] == "answer.completed":
            state = event["state"]
        elif event["type"] == "run.failed":
            state = {**event["state"], "error": event["error"]}
    return state, first_token_ms, (time.perf_counter() - began) * 1000


def _latency(values: Sequence[float]) -> dict[str, float]:
    return {"p50": percentile(values, 50), "p95": percentile(values, 95), "mean": mean(values)}


def _summary(pipeline: PipelineSpec, rows: list[dict[str, Any]], curves: list[dict[int, float]],
             answers: dict[str, Any] | None, errors: list[str], truncated: bool, planned: int, build_s: float,
             options: RunOptions) -> dict[str, Any]:
    metrics = {name: mean(row[name] for row in rows) for name in RETRIEVAL_METRICS}
    ci = {name: list(bootstrap_ci([row[name] for row in rows], resamples=options.resamples, seed=options.seed))
          for name in RETRIEVAL_METRICS}
    return {
        "name": pipeline.name,
        "config": pipeline.config,
        "queries": len(rows),
        "planned_queries": planned,
        "truncated": truncated,
        "failures": len(errors),
        "errors": errors[:10],
        "metrics": metrics,
        "ci": ci,
        "recall_curve": {str(k): mean(curve[k] for curve in curves) for k in RECALL_CURVE_KS},
        "latency_ms": _latency([row["latency_ms"] for row in rows]),
        "llm_calls_per_query": mean(row["llm_calls"] for row in rows),
        "setup_s": round(build_s, 3),
        "answers": answers,
        "per_query": rows,
    }


def compare(pipelines: Sequence[Mapping[str, Any]], *, seed: int = 0, permutations: int = 10000,
            resamples: int = 2000, metrics: Sequence[str] = RETRIEVAL_METRICS) -> list[dict[str, Any]]:
    """Every pair of pipelines (``a`` before ``b``) on the queries both ran: per metric, the
    means, the difference ``a - b`` with its bootstrap interval, and the p-values of the paired
    randomisation and paired bootstrap tests."""
    comparisons = []
    for first in range(len(pipelines)):
        for second in range(first + 1, len(pipelines)):
            a, b = pipelines[first], pipelines[second]
            rows_b = {row["query_id"]: row for row in b["per_query"]}
            shared = [(row, rows_b[row["query_id"]]) for row in a["per_query"] if row["query_id"] in rows_b]
            comparisons.append({
                "a": a["name"], "b": b["name"], "queries": len(shared),
                "metrics": {name: compare_paired([pair[0][name] for pair in shared], [pair[1][name] for pair in shared],
                                                 seed=seed, permutations=permutations, resamples=resamples)
                            for name in metrics},
            })
    return comparisons


def evaluate(
    dataset: EvaluationDataset,
    pipelines: Sequence[PipelineSpec],
    *,
    corpus: EvaluationCorpus | None = None,
    chunker: Mapping[str, Any] | None = None,
    embedding: Mapping[str, Any] | None = None,
    cache_dir: str | Path | None = None,
    limit: int | None = None,
    options: RunOptions = RunOptions(),
    judge: Mapping[str, Any] | ConfigObject | None = None,
    credentials: Any = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """Evaluate ``pipelines`` on ``dataset`` (its first ``limit`` queries) and compare them.

    Without ``corpus`` the dataset is loaded into memory (``build_corpus``) with ``chunker``
    (None: one chunk per document) and ``embedding`` as the dense default (the packaged model
    for the dataset's language when None).
    """
    if not pipelines:
        raise ValueError("evaluate needs at least one pipeline")
    dataset = dataset.limited(limit)
    embedding = dict(embedding) if embedding else default_embedding(dataset)
    if corpus is None:
        corpus = build_corpus(dataset, default_embedding=embedding, chunker=chunker, cache_dir=cache_dir)
    if judge is not None and not isinstance(judge, ConfigObject):
        judge = build(judge, kind=LLM, registry=load_components(), credentials=credentials,
                      infra={"outbound": corpus.infra.get("outbound")})
    per_pipeline = len(dataset.queries) + min(options.answer_queries, len(dataset.queries))
    total = per_pipeline * len(pipelines)
    results = []
    for index, pipeline in enumerate(pipelines):
        results.append(evaluate_pipeline(dataset, pipeline, corpus, options=options, judge=judge,
                                         credentials=credentials, progress=progress,
                                         progress_offset=index * per_pipeline, progress_total=total))
    persistence = corpus.infra.get("persistence")
    return clean({
        "dataset": dataset.summary(),
        "settings": {"depth": options.depth, "limit": limit, "seed": options.seed,
                     "answer_queries": options.answer_queries, "bootstrap_resamples": options.resamples,
                     "permutations": options.permutations, **corpus.details,
                     "embedded": getattr(persistence, "embedded", None)},
        "pipelines": results,
        "comparisons": compare(results, seed=options.seed, permutations=options.permutations,
                               resamples=options.resamples),
    })


SUMMARY_KEYS = ("name", "queries", "metrics", "ci", "latency_ms", "llm_calls_per_query", "failures", "truncated",
                "answers", "depth")


def pipeline_summaries(result: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per pipeline: its name and averaged figures, without the per-query rows (small enough to
    list many evaluations)."""
    return [{key: pipeline.get(key) for key in SUMMARY_KEYS} for pipeline in result.get("pipelines", [])]


def flat_summary(result: Mapping[str, Any], index: int = 0) -> dict[str, Any]:
    """One pipeline's result with its averaged metrics at the top level (``ndcg@10``,
    ``recall@1``… ``map``) beside ``per_query``: what ``evaluate --json`` prints."""
    pipeline = result["pipelines"][index]
    return {
        **pipeline["metrics"],
        "per_query": pipeline["per_query"],
        "pipeline": pipeline["name"],
        "dataset": result["dataset"],
        "queries": pipeline["queries"],
        "ci": pipeline["ci"],
        "recall_curve": pipeline["recall_curve"],
        "latency_ms": pipeline["latency_ms"],
        "llm_calls_per_query": pipeline["llm_calls_per_query"],
        "failures": pipeline["failures"],
        "answers": pipeline["answers"],
        "settings": result["settings"],
        "pipelines": [{key: value for key, value in entry.items() if key != "per_query"}
                      for entry in result["pipelines"]],
        "comparisons": result["comparisons"],
    }


def clean(value: Any) -> Any:
    """``value`` with NaN and infinities replaced by None (JSON has neither) and tuples as lists."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, Mapping):
        return {key: clean(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean(item) for item in value]
    return value


