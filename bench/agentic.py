"""Two-fact questions: the agentic ensemble against the Hybrid pipeline (issue 39).

Run from the repository root (``nice``: every question is several local-model calls)::

    nice .venv/bin/python bench/agentic.py [--datasets xquad-es,xquad-zh] [--questions 25]
                                           [--other-child 25] [--planner MODEL[,MODEL]]
                                           [--tree issue|preset|FILE.json] [--reading-tokens N]
                                           [--max-passages N] [--seed 0] [--rows FILE]

**The set** (``bench/_twofacts.py``): a knowledge base of every XQuAD article, one document per
article cut by the default chunker; ``--questions`` two-fact questions (two questions about
different articles joined in one sentence, both answers required) and ``--other-child`` more
whose one fact only a child other than the agentic tree's first finds (each child asked the
joined question at its own ``top_k``).

**The pipelines**, over the same questions and the same answer synthesizer (``ResponseSynthesizer``
on the packaged 1.5B, ``--reading-tokens`` and ``--max-passages`` when given, else the model's
reading defaults: both pipelines read the same way):

- ``hybrid``: NaiveRAG over the Hybrid preset (BM25, stemming, and dense retrieval, their scores
  normalised and added; the default of a new pipeline);
- ``agentic <planner>``, one per ``--planner`` model: NaiveRAG over the agentic tree, its
  ``llm_model`` the planner. ``--tree issue`` (default) is the tree the issue watched,
  ``[BM25 top_k 5, Hybrid]``; ``--tree preset`` is the Agentic preset (``[Hybrid, BM25, dense]``),
  whose first child is the Hybrid preset itself: it finds both articles of nearly every two-fact
  question (1.0 es, 0.96 zh of 25), so hardly any pair has a fact only a later child finds (2 es,
  3 zh in the whole stream of ~460 pairs); a ``.json`` file is any agentic retriever tree.

**Figures** per language and pipeline: ``both_facts`` (the answer holds both references,
``answer_contains`` per fact; a declined answer holds none), ``any_fact``,
``passages_hold_both`` (the passages given to the answer model, ``chunks_sent``, hold both),
``retrieved_hold_both`` (the retriever's whole output does: a pipeline whose passages miss what
it retrieved lost it to the reading budget), ``llm_calls`` per question (mean, every call of the
run: planning, judging, answering, checking), first token and answer p50 (ms; each pipeline's
first question warms it and is not counted), and ``both_facts`` per kind. Each agentic pipeline
is compared with hybrid on ``both_facts`` and ``passages_hold_both``: the paired difference, its
95% bootstrap CI and the randomisation p (``rag.evaluation.statistics.compare_paired``).

One JSON line per language. ``--rows FILE`` appends one JSON row per question and pipeline
(question, answers, results, passages sent, answer, the draft and the answer check's verdict, the plan's and
verdicts' reasons, LLM calls).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from answers import ask, knowledge_base

from _common import (
    answer_check_fields,
    dataset_language,
    datasets_dir,
    emit,
    machine,
    mean_of,
    p50,
    read_corpus,
    read_qrels,
    read_queries,
    wall_s,
)
from rag.llms import ANSWER_MODEL

TREES = ("issue", "preset")


def agentic_tree(tree: str, planner: str | None) -> dict[str, Any]:
    """The agentic retriever tree named by ``--tree``, planning and judging with ``planner``
    (None: the tree's own model)."""
    from rag.presets import preset

    if tree == "preset":
        config = preset("agentic").config()
    elif tree == "issue":
        config = {"component": "AgenticEnsembleRetriever", "params": {
            "children": [{"component": "BM25Retriever", "params": {"top_k": 5}}, preset("hybrid").config()]}}
    else:
        config = json.loads(Path(tree).read_text(encoding="utf-8"))
        if config.get("component") != "AgenticEnsembleRetriever":
            raise SystemExit(f"{tree}: an AgenticEnsembleRetriever tree is needed, not {config.get('component')}")
    if planner is not None:
        config.setdefault("params", {})["llm_model"] = {"component": "LocalLLM", "params": {"model": planner}}
    return config


def tree_planner(tree: str) -> str:
    """The model the tree plans with when ``--planner`` is not given."""
    from rag.components import load_components
    from rag.evaluation.corpus import validate_or_raise

    normalised = validate_or_raise({"component": "NaiveRAG", "params": {"retriever": agentic_tree(tree, None)}},
                                   registry=load_components())
    llm = normalised["params"]["retriever"]["params"]["llm_model"]
    return str(llm["params"].get("model") or llm["params"].get("gguf_path") or llm["component"])


def synthesizer(reading_tokens: int | None, max_passages: int | None) -> dict[str, Any]:
    llm: dict[str, Any] = {"model": ANSWER_MODEL}
    if reading_tokens is not None:
        llm["reading_tokens"] = reading_tokens
    params: dict[str, Any] = {"llm": {"component": "LocalLLM", "params": llm}}
    if max_passages is not None:
        params["max_passages"] = max_passages
    return {"component": "ResponseSynthesizer", "params": params}


def reading_settings(reading_tokens: int | None, max_passages: int | None) -> dict[str, Any]:
    """What the answer model reads, as the report states it."""
    from rag.llms import local_models

    packaged = local_models.PACKAGED[ANSWER_MODEL]
    # The model's defaults apply only when the pipeline names no passage count (ResponseSynthesizer.prepare).
    defaults = max_passages is None
    return {"answer_model": ANSWER_MODEL,
            "max_passages": max_passages if max_passages is not None else f"model default ({packaged.default_passages})",
            "reading_tokens": reading_tokens if reading_tokens is not None
            else f"model default ({packaged.default_reading_tokens})" if defaults else "none (input budget only)"}


def pipelines(options: argparse.Namespace) -> dict[str, dict[str, Any]]:
    from rag.presets import default_retriever

    answer = synthesizer(options.reading_tokens, options.max_passages)
    configs = {"hybrid": {"component": "NaiveRAG", "params": {"retriever": default_retriever(),
                                                              "response_synthesizer": answer}}}
    for planner in options.planners:
        configs[f"agentic {planner}"] = {"component": "NaiveRAG", "params": {
            "retriever": agentic_tree(options.tree, planner), "response_synthesizer": answer}}
    return configs


def document_names(infra: dict[str, Any]) -> dict[int, str]:
    """Document id → the set's document name (``article-AA``)."""
    return {document_id: document.name.removesuffix(".txt") for document_id, document in infra["documents"].items()}


def child_searchers(tree: dict[str, Any], infra: dict[str, Any]) -> list[Callable[[str], set[str]]]:
    """The tree's children as the set builder asks them: a question → the documents of the
    child's results at its own ``top_k``."""
    from rag.components import load_components
    from rag.core import build
    from rag.retrievers import BaseRetriever

    infra["persistence"].register_pipeline({"component": "NaiveRAG", "params": {"retriever": tree}})
    names = document_names(infra)
    children = [build(child, kind=BaseRetriever, registry=load_components(), infra=infra)
                for child in tree["params"]["children"]]

    def searcher(child: Any) -> Callable[[str], set[str]]:
        return lambda question: {names[hit.chunk.document_id] for hit in child.search(question)[0]}

    return [searcher(child) for child in children]


def agentic_account(state: dict[str, Any]) -> dict[str, Any] | None:
    """The plan and each round of the run's agentic retriever, as its trace node records them."""
    stack = [step.get("node") for step in (state.get("trace") or {}).get("steps", []) if step.get("node")]
    while stack:
        node = stack.pop()
        if node.get("class") == "AgenticEnsembleRetriever":
            plan = (node.get("details") or {}).get("plan") or {}
            return {
                "plan": {key: plan.get(key) for key in ("reason", "operations", "fallback", "dropped", "attempts")},
                "rounds": [{"round": entry.get("round"), "operations": entry.get("operations"),
                            "verdict": entry.get("verdict"), "dropped": entry.get("dropped"),
                            "fallback": entry.get("fallback"), "attempts": entry.get("attempts")}
                           for entry in node.get("rounds") or []],
            }
        stack.extend(node.get("children") or [])
    return None


def holds(text: str, fact: dict[str, Any], language: str) -> bool:
    from rag.evaluation.answers import answer_contains

    return bool(answer_contains(text, fact["answers"], language))


def scored(turn: dict[str, Any], item: dict[str, Any], language: str, names: dict[int, str]) -> dict[str, Any]:
    """One question answered by one pipeline: what each fact is found in, and what the run did."""
    from rag.evaluation.answers import strip_citations

    state = turn["state"]
    answer = state.get("response") or ""
    declined = state.get("declined") is not None
    sent = [chunk["text"] for chunk in state.get("chunks_sent") or []]
    retrieved = state.get("chunks") or []
    facts = item["facts"]
    in_answer = [not declined and holds(strip_citations(answer), fact, language) for fact in facts]
    in_sent = [holds("\n".join(sent), fact, language) for fact in facts]
    in_retrieved = [holds("\n".join(chunk["text"] for chunk in retrieved), fact, language) for fact in facts]
    return {
        "id": item["id"], "kind": item["kind"], "question": item["question"],
        "answers": [fact["answers"] for fact in facts], "articles": [fact["article"] for fact in facts],
        "found_by": item.get("found_by"),
        "answer": answer, "declined": declined, **answer_check_fields(state),
        "both_facts": float(all(in_answer)), "any_fact": float(any(in_answer)),
        "passages_hold_both": float(all(in_sent)), "retrieved_hold_both": float(all(in_retrieved)),
        "facts_in_answer": in_answer, "facts_in_passages": in_sent, "facts_in_retrieved": in_retrieved,
        "results": [{"document": names.get(chunk["document_id"]), "chunk_id": chunk["chunk_id"], "text": chunk["text"]}
                    for chunk in retrieved],
        "passages": sent,
        "agentic": agentic_account(state),
        "llm_calls": (state.get("trace") or {}).get("llm_calls", 0),
        "first_token_ms": turn["first_token_ms"], "total_ms": turn["total_ms"],
        "error": state.get("error"),
    }


def figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    kinds = sorted({row["kind"] for row in rows})
    return {
        "questions": len(rows),
        **{name: mean_of([row[name] for row in rows])
           for name in ("both_facts", "any_fact", "passages_hold_both", "retrieved_hold_both")},
        "llm_calls": mean_of([float(row["llm_calls"]) for row in rows]),
        "first_token_p50_ms": p50([row["first_token_ms"] for row in rows]),
        "answer_p50_ms": p50([row["total_ms"] for row in rows]),
        "both_facts_by_kind": {kind: mean_of([row["both_facts"] for row in rows if row["kind"] == kind]) for kind in kinds},
        "failed": sum(1 for row in rows if row["error"]),
    }


def paired(ours: list[dict[str, Any]], hybrid: list[dict[str, Any]]) -> dict[str, Any]:
    """The agentic pipeline against hybrid on the same questions: difference, CI, p."""
    from rag.evaluation.statistics import compare_paired

    comparison = {}
    for name in ("both_facts", "passages_hold_both"):
        test = compare_paired([row[name] for row in ours], [row[name] for row in hybrid])
        comparison[name] = {"difference": round(test["difference"], 3), "ci": [round(value, 3) for value in test["ci"]],
                            "p_randomization": round(test["p_randomization"], 4)}
    return comparison


def measure(name: str, options: argparse.Namespace) -> dict[str, Any]:
    from _twofacts import build as build_set
    from _twofacts import facts_of

    from rag.components import load_components
    from rag.core import build
    from rag.strategies import Strategy

    path = datasets_dir() / name
    language = dataset_language(name)
    corpus, queries, qrels = read_corpus(path), read_queries(path), read_qrels(path / "qrels" / "test.tsv")
    empty = build_set(corpus, queries, qrels, language, two_fact=0)
    infra = knowledge_base(empty)
    children = child_searchers(agentic_tree(options.tree, options.planners[0]), infra)
    dev = build_set(corpus, queries, qrels, language, two_fact=options.questions, other_child=options.other_child,
                    seed=options.seed, children=children)
    print(f"{name}: {len(dev.documents)} articles, {sum(len(c) for c in infra['chunks'].values())} chunks, "
          f"{len(dev.of_kind('two_fact'))} two_fact and {len(dev.of_kind('other_child'))} other_child questions",
          file=sys.stderr, flush=True)
    names = document_names(infra)
    asked = {fact["id"] for item in dev.questions for fact in item["facts"]}
    warm_up = next(fact["question"] for fact in facts_of(queries, qrels, language) if fact["id"] not in asked)
    rows: dict[str, list[dict[str, Any]]] = {}
    for pipeline, config in pipelines(options).items():
        infra["persistence"].register_pipeline(config)
        strategy = build(config, kind=Strategy, registry=load_components(), infra=infra)
        ask(strategy, warm_up)  # loads the models and the indices; not counted
        rows[pipeline] = []
        for number, item in enumerate(dev.questions, start=1):
            row = scored(ask(strategy, item["question"]), item, language, names)
            rows[pipeline].append(row)
            print(f"  {pipeline} {number}/{len(dev.questions)}: both {row['both_facts']:.0f} "
                  f"passages {row['passages_hold_both']:.0f} calls {row['llm_calls']} "
                  f"first token {row['first_token_ms'] or 0:.0f} ms ({wall_s():.0f} s)", file=sys.stderr, flush=True)
            if options.rows is not None:
                with options.rows.open("a", encoding="utf-8") as out:
                    out.write(json.dumps({"dataset": name, "pipeline": pipeline, **row}, ensure_ascii=False) + "\n")
        strategy.close()
    return {
        "dataset": name, "language": language, "articles": len(dev.documents),
        "questions": {"two_fact": len(dev.of_kind("two_fact")), "other_child": len(dev.of_kind("other_child"))},
        "tree": options.tree, "seed": options.seed,
        "reading": reading_settings(options.reading_tokens, options.max_passages),
        "pipelines": {pipeline: figures(pipeline_rows) for pipeline, pipeline_rows in rows.items()},
        "agentic_minus_hybrid": {pipeline: paired(pipeline_rows, rows["hybrid"])
                                 for pipeline, pipeline_rows in rows.items() if pipeline != "hybrid"},
    }


def table(result: dict[str, Any]) -> str:
    lines = [f"\n{result['dataset']} ({result['questions']}; answers read {result['reading']})",
             "  pipeline                          both_facts  passages  retrieved  llm_calls  first_token_p50_ms"]
    for pipeline, entry in result["pipelines"].items():
        lines.append(f"  {pipeline:32}  {entry['both_facts']!s:10}  {entry['passages_hold_both']!s:8}  "
                     f"{entry['retrieved_hold_both']!s:9}  {entry['llm_calls']!s:9}  {entry['first_token_p50_ms']}")
    for pipeline, tests in result["agentic_minus_hybrid"].items():
        for metric, test in tests.items():
            lines.append(f"  {pipeline} − hybrid, {metric}: {test['difference']:+.3f} "
                         f"(95% CI {test['ci'][0]:+.3f} to {test['ci'][1]:+.3f}, p {test['p_randomization']:.3f})")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="xquad-es,xquad-zh")
    parser.add_argument("--questions", type=int, default=25, help="two-fact questions per language")
    parser.add_argument("--other-child", type=int, default=25,
                        help="two-fact questions per language whose one fact only a child other than the first finds")
    parser.add_argument("--planner", help="the agentic tree's planning model (default: the tree's own); several, "
                                          "comma-separated, run side by side")
    parser.add_argument("--tree", default="issue", help="the agentic tree: issue, preset, or a JSON file")
    parser.add_argument("--reading-tokens", type=int, help="the answer model's reading budget (both pipelines)")
    parser.add_argument("--max-passages", type=int, help="passages the answer model reads (both pipelines)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rows", type=Path, help="append one JSON row per question and pipeline to this file")
    options = parser.parse_args()
    if options.tree not in TREES and not options.tree.endswith(".json"):
        parser.error(f"--tree is one of {', '.join(TREES)} or a .json file")
    options.planners = [model.strip() for model in (options.planner or tree_planner(options.tree)).split(",")
                        if model.strip()]
    if not options.planners:
        parser.error("--planner names no model")
    for name in (dataset.strip() for dataset in options.datasets.split(",") if dataset.strip()):
        result = measure(name, options)
        print(table(result), file=sys.stderr, flush=True)
        emit({**result, "machine": machine()})


if __name__ == "__main__":
    main()
