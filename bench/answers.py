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
idle cores, depending on the machine; what the model reads does not depend on it).
``--rows FILE`` appends every question, answer and figure.

**Conversations and absent articles** (``--absent``, ``--conversation``, or both): the default
pipeline with the default answer model over a knowledge base holding every other XQuAD article,
one document per article cut by the default chunker (``bench/_devset.py``), asked:

- ``present``: ``--questions`` questions about articles in it: ``concise_contains``, ``declined``
  (wrongly), ``supported_citations`` (the share of citations whose passage holds a reference
  answer) and ``grounded_citations`` (the share the answer check itself found supported);
- ``absent`` (``--absent``): as many about articles left out: ``declined`` is the right answer;
- ``unrelated`` and ``pronoun`` (``--conversation``): ``--conversations`` two-turn conversations
  each, the second question about another article, or about the same one through a pronoun;
  ``concise_contains`` of the second turn against the same question (written out in full)
  asked alone, and how often the follow-up was rewritten (``--conversation-kinds pronoun`` holds
  only one kind);
- ``--loaded N``: the present questions again with N CPU-bound processes running beside the
  pipeline: first token p50 idle and loaded, and ``same_prompts``, the share of questions whose
  prompt (question searched, passages and their text) was the same both times.

One JSON line per language.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from _common import answer_check_fields, dataset_language, datasets_dir, emit, machine, mean_of, p50
from rag.evaluation import PipelineSpec, RunOptions, evaluate, load_beir
from rag.evaluation.runner import streamed_answer
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


def knowledge_base(dev) -> Any:
    """The dev set's articles as a knowledge base would hold them: parsed as text files, cut by
    the default chunker, in memory stores with the language's default embedding (vectors cached)."""
    from rag.components import load_components
    from rag.core import build
    from rag.documents import Chunk, SourceDocument, parse_document
    from rag.documents.chunkers import Chunker
    from rag.embeddings import default_embedding_for_language
    from rag.embeddings.vector_cache import default_vector_cache_dir
    from rag.evaluation.corpus import MemoryStores

    chunker = build(DEFAULT_CHUNKER, kind=Chunker, registry=load_components())
    chunks: dict = {}
    documents: dict = {}
    chunk_id = 0
    for document_id, (name, text) in enumerate(sorted(dev.documents.items()), start=1):
        parsed = parse_document(text.encode("utf-8"), f"{name}.txt")
        documents[document_id] = SourceDocument(document_id, f"{name}.txt", parsed.mime)
        chunks[document_id] = {}
        for draft in chunker.split(parsed.sections):
            chunk_id += 1
            chunks[document_id][draft.position] = Chunk(chunk_id, document_id, draft.position, draft.text,
                                                         draft.metadata)
    stores = MemoryStores(chunks, default_embedding_for_language(dev.language), default_vector_cache_dir())
    return {"chunks": chunks, "documents": documents, "persistence": stores, "language": dev.language}


def require_every_retriever(turn: dict) -> None:
    """Stop when a retriever of the tree failed: a fusion whose dense child fails answers from
    its keyword child alone, and the figures would describe another pipeline."""
    def errors(node: dict) -> list[str]:
        own = [f"{node.get('class')}: {node['error']}"] if node.get("error") else []
        return own + [error for child in node.get("children") or [] for error in errors(child)]

    steps = (turn["state"].get("trace") or {}).get("steps") or []
    failed = [error for step in steps if isinstance(step.get("node"), dict) for error in errors(step["node"])]
    if failed:
        raise SystemExit("a retriever failed: " + "; ".join(failed))


def ask(strategy: Any, question: str, history: list[dict[str, str]] = ()) -> dict:
    """One turn as the chat runs it: the final state, first token and total milliseconds."""
    state, first_token_ms, total_ms = streamed_answer(strategy, question, history)
    return {"state": state, "first_token_ms": first_token_ms, "total_ms": total_ms}


def prompt_key(state: dict) -> str:
    """What the model read: the question searched and the passages' text, as one digest."""
    import hashlib

    sent = [chunk["text"] for chunk in state.get("chunks_sent") or []]
    return hashlib.sha256(json.dumps([state.get("search_question"), sent], ensure_ascii=False).encode()).hexdigest()


def scored(turn: dict, item: dict, language: str) -> dict:
    """One answered question's row: the answer, whether it holds a reference, was declined, and
    how its citations stand."""
    from rag.evaluation.answers import answer_contains, concise_contains

    state = turn["state"]
    answer = state.get("response") or ""
    sent = {chunk["n"]: chunk["text"] for chunk in state.get("chunks_sent") or []}
    citations = state.get("citations") or []
    declined = state.get("declined") is not None
    return {
        "id": item["id"], "question": item["question"], "answers": item["answers"],
        "search_question": state.get("search_question"), "answered_question": state.get("answered_question"),
        "answer": answer, "declined": declined, **answer_check_fields(state),
        "concise_contains": 0.0 if declined else concise_contains(answer, item["answers"], language),
        "context_contains": answer_contains("\n".join(sent.values()), item["answers"], language),
        "citations": [{"n": citation["n"], "holds_reference": answer_contains(sent.get(citation["n"], ""),
                                                                              item["answers"], language),
                       "supported": citation.get("supported", True)} for citation in citations],
        "passages": list(sent.values()),
        "first_token_ms": turn["first_token_ms"], "total_ms": turn["total_ms"], "prompt": prompt_key(state),
        "error": state.get("error"),
    }


def answer_figures(rows: list[dict]) -> dict:
    cited = [citation for row in rows for citation in row["citations"]]
    return {
        "questions": len(rows),
        "concise_contains": mean_of([row["concise_contains"] for row in rows]),
        "declined": mean_of([float(row["declined"]) for row in rows]),
        "context_contains": mean_of([float(row["context_contains"]) for row in rows]),
        "supported_citations": mean_of([float(citation["holds_reference"]) for citation in cited]),
        "grounded_citations": mean_of([float(citation["supported"]) for citation in cited]),
        "first_token_p50_ms": p50([row["first_token_ms"] for row in rows]),
        "failed": sum(1 for row in rows if row["error"]),
    }


def burn() -> None:
    while True:
        pass


def conversation_figures(name: str, dataset_path: Path, options: argparse.Namespace, rows_out: Path | None) -> dict:
    import multiprocessing

    from _devset import build as build_devset

    from _common import read_corpus, read_qrels, read_queries
    from rag.components import load_components
    from rag.core import build
    from rag.presets import default_retriever
    from rag.strategies import Strategy

    language = dataset_language(name)
    dev = build_devset(read_corpus(dataset_path), read_queries(dataset_path), read_qrels(dataset_path / "qrels" / "test.tsv"),
                       language, questions=options.from_question + options.questions,
                       conversations=options.conversations)
    # Questions past the first ones asked are held out: what a threshold chosen on those makes of others.
    dev.present, dev.absent = dev.present[options.from_question:], dev.absent[options.from_question:]
    config = {"component": "NaiveRAG", "params": {"retriever": default_retriever()}}
    infra = knowledge_base(dev)
    infra["persistence"].register_pipeline(config)
    strategy = build(config, kind=Strategy, registry=load_components(), infra=infra)
    require_every_retriever(ask(strategy, dev.present[-1]["question"]))  # loads the models and the indices
    rows: dict[str, list[dict]] = {"present": [], "absent": [], "unrelated": [], "pronoun": [], "alone": []}
    alone: dict[str, dict] = {}

    def answered(kind: str, item: dict, turn: dict) -> dict:
        row = {"kind": kind, **scored(turn, item, language)}
        rows[kind].append(row)
        if rows_out is not None:
            with rows_out.open("a", encoding="utf-8") as out:
                out.write(json.dumps({"dataset": name, **row}, ensure_ascii=False) + "\n")
        return row

    for item in dev.present:
        alone[item["id"]] = answered("present", item, ask(strategy, item["question"]))
    if options.absent:
        for item in dev.absent:
            answered("absent", item, ask(strategy, item["question"]))
    figures: dict[str, Any] = {"language": language, "documents": len(dev.documents),
                               "chunks": sum(len(c) for c in strategy.retriever.chunks.values())
                               if hasattr(strategy.retriever, "chunks") else None,
                               "present": answer_figures(rows["present"])}
    if options.absent:
        figures["absent"] = answer_figures(rows["absent"])
    if options.conversation:
        for kind in options.conversation_kinds.split(","):
            pairs = []
            for conversation in getattr(dev, kind):
                first, second = conversation["first"], conversation["second"]
                opening = ask(strategy, first["question"])
                history = [{"role": "user", "content": first["question"]},
                           {"role": "assistant", "content": opening["state"].get("response") or ""}]
                followup = {**second, "question": conversation.get("followup", second["question"])}
                row = answered(kind, followup, ask(strategy, followup["question"], history))
                if second["id"] not in alone:
                    alone[second["id"]] = answered("alone", second, ask(strategy, second["question"]))
                row["alone_concise_contains"] = alone[second["id"]]["concise_contains"]
                row["rewritten"] = row["search_question"] != followup["question"]
                pairs.append(row)
            figures[kind] = {
                "conversations": len(pairs),
                "second_turn_concise_contains": mean_of([row["concise_contains"] for row in pairs]),
                "alone_concise_contains": mean_of([row["alone_concise_contains"] for row in pairs]),
                "rewritten": mean_of([float(row["rewritten"]) for row in pairs]),
            }
            figures[kind]["difference"] = (round(figures[kind]["second_turn_concise_contains"]
                                                 - figures[kind]["alone_concise_contains"], 3) if pairs else None)
    if options.loaded:
        burners = [multiprocessing.Process(target=burn, daemon=True) for _ in range(options.loaded)]
        for burner in burners:
            burner.start()
        try:
            loaded = [scored(ask(strategy, item["question"]), item, language)
                      for item in dev.present[:options.loaded_questions]]
        finally:
            for burner in burners:
                burner.terminate()
        idle_prompts = {row["id"]: row["prompt"] for row in rows["present"]}
        idle = [row for row in rows["present"] if row["id"] in {item["id"] for item in loaded}]
        figures["loaded"] = {
            "processes": options.loaded, "questions": len(loaded),
            "first_token_p50_ms_idle": p50([row["first_token_ms"] for row in idle]),
            "first_token_p50_ms_loaded": p50([row["first_token_ms"] for row in loaded]),
            "same_prompts": mean_of([float(idle_prompts[row["id"]] == row["prompt"]) for row in loaded]),
            "same_answers": mean_of([float(next(r for r in rows["present"] if r["id"] == row["id"])["answer"]
                                         == row["answer"]) for row in loaded]),
        }
    strategy.close()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--datasets", default="xquad-es,xquad-zh")
    parser.add_argument("--questions", type=int, default=100)
    parser.add_argument("--from-question", type=int, default=0,
                        help="the conversation dev set: skip this many present and absent questions (a held-out set)")
    parser.add_argument("--absent", action="store_true",
                        help="the conversation dev set: ask about articles left out of the knowledge base too")
    parser.add_argument("--conversation", action="store_true",
                        help="the conversation dev set: two-turn conversations, unrelated and through a pronoun")
    parser.add_argument("--conversation-kinds", default="unrelated,pronoun",
                        help="which conversations to hold: unrelated, pronoun or both")
    parser.add_argument("--conversations", type=int, default=50, help="conversations of each kind")
    parser.add_argument("--loaded", type=int, default=0,
                        help="ask the present questions again beside this many CPU-bound processes")
    parser.add_argument("--loaded-questions", type=int, default=30, help="how many present questions --loaded asks")
    parser.add_argument("--models", default=f"{ANSWER_MODEL},qwen2.5-0.5b-instruct")
    parser.add_argument("--judge", action="store_true", help="measure faithfulness with the local 0.5B model")
    parser.add_argument("--rows", type=Path, help="append each question, its answer and its figures to this JSONL file")
    options = parser.parse_args()
    if options.absent or options.conversation or options.loaded:
        for name in (dataset.strip() for dataset in options.datasets.split(",") if dataset.strip()):
            figures = conversation_figures(name, datasets_dir() / name, options, options.rows)
            emit({"dataset": name, **figures, "machine": machine()})
        return
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
