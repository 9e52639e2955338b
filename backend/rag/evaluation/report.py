"""The evaluation report: Markdown tables and PNG plots (matplotlib, Agg backend).

``write_report`` writes ``report.md`` (the tables, linking the plots), ``metrics.png`` (one
group of bars per metric, a bar per pipeline, 95 % CI error bars), ``recall.png`` (recall@k
against k per pipeline) and ``results.json`` (the whole result) into a folder.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .metrics import RETRIEVAL_METRICS

REPORT_FILES = {"markdown": "report.md", "metrics": "metrics.png", "recall": "recall.png", "json": "results.json"}
COMPARED_METRICS = ("ndcg@10", "recall@10", "recall@100", "mrr@10", "map")
_LABELS = {"ndcg@10": "nDCG@10", "recall@1": "R@1", "recall@5": "R@5", "recall@10": "R@10", "recall@100": "R@100",
           "mrr@10": "MRR@10", "map": "MAP"}


def _number(value: Any, digits: int = 3) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _ms(value: Any) -> str:
    if value is None:
        return "—"
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def _p(value: Any) -> str:
    if value is None:
        return "—"
    return "<0.001" if value < 0.001 else f"{value:.3f}"


def metrics_table(pipelines: Sequence[Mapping[str, Any]]) -> str:
    """One row per pipeline: every retrieval metric (nDCG@10 with its 95 % CI), latency, LLM calls."""
    header = ["Pipeline", "Queries", "nDCG@10", "95% CI", *(_LABELS[name] for name in RETRIEVAL_METRICS[1:]),
              "p50 ms", "p95 ms", "LLM calls/q"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for pipeline in pipelines:
        metrics, ci = pipeline["metrics"], pipeline["ci"]["ndcg@10"]
        queries = f"{pipeline['queries']}" + (f" of {pipeline['planned_queries']}" if pipeline.get("truncated") else "")
        if pipeline.get("failures"):
            queries += f" ({pipeline['failures']} failed)"
        cells = [pipeline["name"], queries, _number(metrics["ndcg@10"]),
                 f"[{_number(ci[0])}, {_number(ci[1])}]",
                 *(_number(metrics[name]) for name in RETRIEVAL_METRICS[1:]),
                 _ms(pipeline["latency_ms"]["p50"]), _ms(pipeline["latency_ms"]["p95"]),
                 _number(pipeline["llm_calls_per_query"], 1)]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def depth_notes(pipelines: Sequence[Mapping[str, Any]]) -> list[str]:
    """One sentence per pipeline whose retriever could not return as many results as the depth
    asked for: its Recall@k beyond that many is not comparable with a deeper pipeline's."""
    notes = []
    for pipeline in pipelines:
        depth = pipeline.get("depth") or {}
        if depth.get("limits"):
            notes.append(f"{pipeline['name']}: depth {depth['asked']} asked, at most {depth['returned_max']} "
                         f"results returned (median {_number(depth['returned_p50'], 0)}) — "
                         + "; ".join(depth["limits"]) + ". Recall beyond that depth is capped.")
    return notes


def answers_table(pipelines: Sequence[Mapping[str, Any]]) -> str | None:
    rows = [pipeline for pipeline in pipelines if pipeline.get("answers")]
    if not rows:
        return None
    header = ["Pipeline", "Answered", "Exact match", "Token F1", "Contains answer", "Concise and correct",
              "Copies a passage", "Citation precision", "Faithfulness", "p50 ms", "LLM calls/q"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for pipeline in rows:
        answers = pipeline["answers"]
        lines.append("| " + " | ".join([
            pipeline["name"], str(answers["queries"]), _number(answers["exact_match"]), _number(answers["f1"]),
            _number(answers["contains"]), _number(answers.get("concise_contains")),
            _number(answers.get("verbatim_copy")), _number(answers["citation_precision"]),
            _number(answers["faithfulness"]), _ms(answers["latency_ms"]["p50"]),
            _number(answers["llm_calls_per_query"], 1)]) + " |")
    return "\n".join(lines)


def comparison_table(comparisons: Sequence[Mapping[str, Any]], metrics: Sequence[str] = COMPARED_METRICS) -> str | None:
    if not comparisons:
        return None
    header = ["A", "B", "Metric", "A", "B", "Δ (A − B)", "95% CI of Δ", "p (randomisation)", "p (bootstrap)"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for comparison in comparisons:
        for name in metrics:
            entry = comparison["metrics"][name]
            lines.append("| " + " | ".join([
                comparison["a"], comparison["b"], _LABELS[name], _number(entry["mean_a"]), _number(entry["mean_b"]),
                f"{entry['difference']:+.3f}" if entry["difference"] is not None else "—",
                f"[{_number(entry['ci'][0])}, {_number(entry['ci'][1])}]",
                _p(entry["p_randomization"]), _p(entry["p_bootstrap"])]) + " |")
    return "\n".join(lines)


def markdown_report(result: Mapping[str, Any], *, title: str | None = None, images: bool = True) -> str:
    """The report as Markdown: dataset, settings, the metrics table, answers, comparisons."""
    dataset, settings = result["dataset"], result["settings"]
    parts = [f"# {title or 'Evaluation on ' + dataset['name']}", "",
             f"Dataset **{dataset['name']}**: {dataset['documents']:,} documents, {dataset['queries']:,} queries, "
             f"{dataset['judgements']:,} judgements, language `{dataset['language']}`. "
             f"Retrieval depth {settings.get('depth') or 'each pipeline’s own top_k'}; "
             f"chunking {'off (one chunk per document)' if not settings.get('chunker') else settings['chunker']}; "
             f"95% CIs from {settings.get('bootstrap_resamples')} bootstrap resamples (seed {settings.get('seed')}).",
             "", metrics_table(result["pipelines"])]
    capped = depth_notes(result["pipelines"])
    if capped:
        parts += ["", *(f"- {note}" for note in capped)]
    answers = answers_table(result["pipelines"])
    if answers:
        parts += ["", "## Answers", "", answers]
    comparison = comparison_table(result["comparisons"])
    if comparison:
        parts += ["", "## Comparisons", "",
                  f"Paired over the queries both pipelines ran; randomisation test with {settings.get('permutations')} "
                  "sign flips (exact when fewer cover every one), bootstrap test with the differences centred on 0.",
                  "", comparison]
    errors = [(pipeline["name"], error) for pipeline in result["pipelines"] for error in pipeline.get("errors", [])[:3]]
    if errors:
        parts += ["", "## Failed queries", "", *(f"- {name}: {error}" for name, error in errors)]
    if images:
        parts += ["", f"![metrics]({REPORT_FILES['metrics']})", "", f"![recall@k]({REPORT_FILES['recall']})"]
    return "\n".join(parts) + "\n"


def plot_metrics(pipelines: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Grouped bars: each retrieval metric, one bar per pipeline, 95 % CI error bars."""
    plt = _pyplot()
    import numpy as np

    figure, axes = plt.subplots(figsize=(max(7.0, 1.3 * len(RETRIEVAL_METRICS) + 0.4 * len(pipelines)), 4.2))
    positions = np.arange(len(RETRIEVAL_METRICS))
    width = 0.8 / max(len(pipelines), 1)
    for index, pipeline in enumerate(pipelines):
        means = np.array([pipeline["metrics"][name] or 0.0 for name in RETRIEVAL_METRICS])
        lows = np.array([(pipeline["ci"][name][0] if pipeline["ci"][name][0] is not None else m)
                         for name, m in zip(RETRIEVAL_METRICS, means, strict=True)])
        highs = np.array([(pipeline["ci"][name][1] if pipeline["ci"][name][1] is not None else m)
                          for name, m in zip(RETRIEVAL_METRICS, means, strict=True)])
        axes.bar(positions + (index - (len(pipelines) - 1) / 2) * width, means, width,
                 yerr=np.vstack([np.clip(means - lows, 0, None), np.clip(highs - means, 0, None)]),
                 capsize=3, label=pipeline["name"])
    axes.set_xticks(positions, [_LABELS[name] for name in RETRIEVAL_METRICS])
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("mean over queries (95% CI)")
    axes.grid(axis="y", alpha=0.3)
    axes.legend(fontsize="small", ncols=min(len(pipelines), 4))
    return _save(figure, path)


def plot_recall_curve(pipelines: Sequence[Mapping[str, Any]], path: str | Path) -> Path:
    """Mean recall@k against k (log scale), one line per pipeline."""
    plt = _pyplot()
    figure, axes = plt.subplots(figsize=(6.4, 4.2))
    for pipeline in pipelines:
        curve = sorted((int(k), value) for k, value in pipeline["recall_curve"].items() if value is not None)
        axes.plot([k for k, _ in curve], [value for _, value in curve], marker="o", label=pipeline["name"])
    axes.set_xscale("log")
    ticks = sorted({int(k) for pipeline in pipelines for k in pipeline["recall_curve"]})
    axes.set_xticks(ticks, [str(k) for k in ticks])
    axes.minorticks_off()
    axes.set_xlabel("k")
    axes.set_ylabel("recall@k")
    axes.set_ylim(0, 1.02)
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    return _save(figure, path)


def write_report(result: Mapping[str, Any], output_dir: str | Path, *, title: str | None = None,
                 labels: Mapping[str, str] | None = None) -> dict[str, Path]:
    """Write the report files into ``output_dir`` (created); returns their paths by kind.

    ``labels`` maps a pipeline's name to how the figures and the Markdown show it (a preset's
    display name for its slug); ``results.json`` keeps the names, which the API's rows use."""
    folder = Path(output_dir)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {kind: folder / name for kind, name in REPORT_FILES.items()}
    shown = relabelled(result, labels or {})
    plot_metrics(shown["pipelines"], paths["metrics"])
    plot_recall_curve(shown["pipelines"], paths["recall"])
    paths["markdown"].write_text(markdown_report(shown, title=title), encoding="utf-8")
    paths["json"].write_text(json.dumps(result, ensure_ascii=False, indent=1), encoding="utf-8")
    return paths


def relabelled(result: Mapping[str, Any], labels: Mapping[str, str]) -> dict[str, Any]:
    """``result`` with its pipelines and comparisons named by ``labels`` (names it lacks kept)."""
    def label(name: str) -> str:
        return labels.get(name, name)

    return {**result,
            "pipelines": [{**pipeline, "name": label(pipeline["name"])} for pipeline in result["pipelines"]],
            "comparisons": [{**comparison, "a": label(comparison["a"]), "b": label(comparison["b"])}
                            for comparison in result.get("comparisons", [])]}


def _pyplot():
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _save(figure: Any, path: str | Path) -> Path:
    path = Path(path)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    _pyplot().close(figure)
    return path
