"""Answer quality and speed of the default pipeline with each packaged local model.

Run from the repository root::

    .venv/bin/python bench/answers.py [--datasets xquad-es,xquad-zh] [--questions 100]
                                      [--models qwen2.5-1.5b-instruct,qwen2.5-0.5b-instruct]
                                      [--judge] [--rows FILE]

For each dataset (the shared XQuAD Spanish and Chinese sets: 240 paragraphs, questions with
reference answers) and each model: the default pipeline (NaiveRAG over the Hybrid preset, the
knowledge base's default chunker and embedding model — multilingual-e5-small for these
languages — and ``ResponseSynthesizer`` on ``LocalLLM`` with that model; by default both packaged
models side by side, the default answer model first) answers the first ``--questions`` questions
through ``rag.evaluation.evaluate``, streamed as the chat streams them.

Figures per dataset and model: ``concise_contains`` (the answer contains a reference and is at
most 40 words, 80 characters for Chinese, citations not counted; a number in digits matches the
reference's number in words, "4" for "cuatro"), ``contains``, ``context_contains`` (the
passages the model read held a reference: a miss with it is the model's, without it the
context's), token ``f1``,
``verbatim_copy`` (share of answers repeating more than 25 consecutive tokens of a passage they
were given), ``faithfulness`` (with ``--judge``: the share of the answer's statements the local
0.5B model finds supported by the passages), answer latency p50/p95 and time to first token p50
(the model is loaded, and the vectors embedded, before the first question is timed: the
first question of each model warms it and is not counted; ``first_token_new_passage_p50_ms``
counts only the questions whose best document differs from the previous question's, since the
passages come before the question and a question over the previous passage finds it in the
model's prompt cache), and ``reading_tokens_per_s``, the
prompt tokens a second the model reads on this machine right after the run (the time to first
token is mostly that reading: 46 to 150 tokens/s for the 0.5B and 18 to 50 for the 1.5B on two
idle cores, depending on the machine, and the answer's reading budget follows it; a run on a busy machine states how busy it was). ``--rows FILE`` appends every question, answer and figure.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from _common import datasets_dir, emit, machine
from rag.evaluation import PipelineSpec, RunOptions, evaluate, load_beir
from rag.llms import ANSWER_MODEL

DEFAULT_CHUNKER = {"component": "RecursiveCharacterChunker", "params": {}}
JUDGE = {"component": "LocalLLM", "params": {}}
FIGURES = ("concise_contains", "contains", "context_contains", "f1", "verbatim_copy", "faithfulness")


def pipeline(model: str) -> dict:
    from rag.presets import default_retriever

    return {"component": "NaiveRAG", "params": {
        "retriever": default_retriever(),
        "response_synthesizer": {"component": "ResponseSynthesizer",
                                 "params": {"llm": {"component": "LocalLLM", "params": {"model": model}}}},
    }}


def measure(dataset_name: str, models: list[str], questions: int, judge: bool, rows_out: Path | None = None) -> dict:
    dataset = load_beir(datasets_dir() / dataset_name)
    # One more question than measured: the first warms the model and is dropped.
    specs = [PipelineSpec(model, pipeline(model)) for model in models]
    result = evaluate(dataset, specs, chunker=DEFAULT_CHUNKER, limit=questions + 1,
                      options=RunOptions(depth=None, answer_queries=questions + 1, resamples=200, permutations=200),
                      judge=JUDGE if judge else None)
    figures = {}
    for entry in result["pipelines"]:
        rows = [row for row in entry["per_query"] if "answer_latency_ms" in row][1:]
        figures[entry["name"]] = {**summarise(rows), "reading_tokens_per_s": reading_speed(entry["name"])}
        if rows_out is not None:
            texts = {query.id: query for query in dataset.queries}
            with rows_out.open("a", encoding="utf-8") as out:
                for row in rows:
                    query = texts[row["query_id"]]
                    out.write(json.dumps({"dataset": dataset_name, "model": entry["name"], "question": query.text,
                                          "references": list(query.answers), **row}, ensure_ascii=False) + "\n")
    return figures


def reading_speed(model: str, trials: int = 3) -> float:
    """Prompt tokens a second the model reads on this machine now (median of ``trials`` uncached
    reads of ~900 tokens): what the time to first token scales with, so runs on a busy machine
    can be compared with an idle one."""
    import secrets

    from rag.llms import LocalLLM
    from rag.strategies.answer_prompts import EXAMPLES

    llm = LocalLLM(model=model)
    text = " ".join(passage for examples in EXAMPLES.values() for _, passages, _ in examples for passage in passages)
    speeds = sorted(llm.prefill([{"role": "user", "content": f"{secrets.token_hex(8)} {text}"}])["prompt_per_second"]
                    for _ in range(trials))
    return round(speeds[len(speeds) // 2], 1)


def top_document(row: dict) -> str | None:
    return row["retrieved"][0] if row.get("retrieved") else None


def summarise(rows: list[dict]) -> dict:
    from rag.evaluation.statistics import percentile

    def share(name: str) -> float | None:
        values = [row[name] for row in rows if name in row]
        return round(sum(values) / len(values), 3) if values else None

    first_tokens = [row["first_token_ms"] for row in rows if "first_token_ms" in row]
    # XQuAD asks several questions of each paragraph in a row: the next question's passage is
    # then still in llama.cpp's prompt cache. Its first word, when the best document is new:
    new_passage = [row["first_token_ms"] for previous, row in zip([None, *rows], rows, strict=False)
                   if "first_token_ms" in row and (previous is None or top_document(previous) != top_document(row))]
    latencies = [row["answer_latency_ms"] for row in rows]
    return {
        "questions": len(rows),
        **{name: share(name) for name in FIGURES},
        "answer_p50_ms": round(percentile(latencies, 50)),
        "answer_p95_ms": round(percentile(latencies, 95)),
        "first_token_p50_ms": round(percentile(first_tokens, 50)) if first_tokens else None,
        "first_token_new_passage_p50_ms": round(percentile(new_passage, 50)) if new_passage else None,
        "failed": sum(1 for row in rows if row.get("answer_error")),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="xquad-es,xquad-zh")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--models", default=f"{ANSWER_MODEL},qwen2.5-0.5b-instruct")
    parser.add_argument("--judge", action="store_true", help="measure faithfulness with the local 0.5B model")
    parser.add_argument("--rows", type=Path, help="append each question, its answer and its figures to this JSONL file")
    options = parser.parse_args()
    models = [model.strip() for model in options.models.split(",") if model.strip()]
    results = {}
    for name in (dataset.strip() for dataset in options.datasets.split(",") if dataset.strip()):
        results[name] = measure(name, models, options.questions, options.judge, options.rows)
        print(f"\n{name}", file=sys.stderr)
        for model, figures in results[name].items():
            print(f"  {model}: " + ", ".join(f"{key} {value}" for key, value in figures.items()), file=sys.stderr)
    emit({"answers": results, "machine": machine()})


if __name__ == "__main__":
    main()
