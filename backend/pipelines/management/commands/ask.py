"""``manage.py ask``: ask a pipeline a question from the terminal, streaming the answer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from credentials.services import credential_resolver_for
from knowledge.models import KnowledgeBase
from knowledge.runtime import retriever_infra
from knowledge.services.demo import DEMO_NAME
from rag.api import RAG, _strategy_config
from rag.components import load_components
from rag.core import ConfigValidationError, build
from rag.strategies import Strategy

from ...models import Pipeline
from ...runtime import pipeline_strategy


class Command(BaseCommand):
    help = ("Ask a pipeline a question: a saved pipeline's id, a pipeline JSON file or a preset name, over "
            "its knowledge base, another one (--knowledge-base) or a folder of files (--docs).")

    def add_arguments(self, parser) -> None:
        parser.add_argument("question")
        parser.add_argument("--pipeline", required=True, help="a saved pipeline's id, a .json file, or a preset name")
        parser.add_argument("--knowledge-base", help=f"id or name (default: the pipeline's, else '{DEMO_NAME}')")
        parser.add_argument("--docs", help="answer over this folder (or file) instead of a knowledge base; each file's "
                            "vectors are kept between runs (docs/guide/python-api.md, cache_vectors)")
        parser.add_argument("--json", action="store_true", help="print the final state as one JSON document")

    def handle(self, *args: Any, question: str, pipeline: str, knowledge_base: str | None, docs: str | None,
               json: bool, **options: Any) -> None:
        try:
            strategy = self._strategy(pipeline, knowledge_base, docs)
        except ConfigValidationError as exc:
            raise CommandError("the pipeline is not valid:\n" + "\n".join(f"  {error}" for error in exc.errors)) from None
        state: dict[str, Any] = {}
        for event in strategy.stream(question):
            if event["type"] == "generation.delta" and not json:
                self.stdout.write(event["text"], ending="")
                self.stdout.flush()
            elif event["type"] in ("answer.completed", "run.failed"):
                state = event["state"]
                if event["type"] == "run.failed":
                    if json:
                        self._print_json(state)
                    raise CommandError(event["error"])
        if json:
            self._print_json(state)
            return
        self.stdout.write("\n")
        for citation in state["citations"]:
            first, last = citation.get("page"), citation.get("last_page")
            where = (f", pp. {first}–{last}" if last and last != first else f", p. {first}") if first else ""
            self.stdout.write(f"[{citation['n']}] {citation.get('document_name') or citation.get('url')}{where}")
        self.stdout.write("\nTrace:")
        self._print_trace(state["trace"])

    def _strategy(self, pipeline: str, knowledge_base: str | None, docs: str | None) -> Strategy:
        saved = Pipeline.objects.select_related("knowledge_base", "owner").filter(pk=int(pipeline)).first() \
            if pipeline.isdigit() else None
        if pipeline.isdigit() and saved is None:
            raise CommandError(f"no pipeline with id {pipeline}")
        config = saved.strategy if saved else _strategy_config(Path(pipeline) if pipeline.endswith(".json") else pipeline)
        if docs:
            return RAG(config).strategy(docs)
        if saved is not None and knowledge_base is None:
            return pipeline_strategy(saved)
        base = self._knowledge_base(knowledge_base)
        return build(config, kind="strategy", registry=load_components(), infra=retriever_infra(base),
                     credentials=credential_resolver_for(base.owner))

    @staticmethod
    def _knowledge_base(reference: str | None) -> KnowledgeBase:
        if reference is None:
            found = KnowledgeBase.objects.filter(name=DEMO_NAME).order_by("id").first()
            if found is None:
                raise CommandError(f"no knowledge base given and no '{DEMO_NAME}' (run `make run` once, or pass --docs)")
            return found
        found = (KnowledgeBase.objects.filter(pk=int(reference)) if reference.isdigit()
                 else KnowledgeBase.objects.filter(name=reference)).order_by("id").first()
        if found is None:
            raise CommandError(f"no knowledge base {reference!r}")
        return found

    def _print_json(self, state: dict[str, Any]) -> None:
        document = {"answer": state.get("response", ""), "citations": state.get("citations", []),
                    "chunks": state.get("chunks_sent", []), "trace": state.get("trace", {})}
        self.stdout.write(json.dumps(document, ensure_ascii=False, indent=2))

    def _print_trace(self, trace: dict[str, Any]) -> None:
        self.stdout.write(f"{trace['strategy']} · {trace['elapsed_ms']:.0f} ms · {trace['llm_calls']} LLM call(s)")
        for step in trace["steps"]:
            facts = {key: value for key, value in step.items() if key in ("decision", "branch", "why", "budget")}
            self.stdout.write(f"  {step['step']} · {step['elapsed_ms']:.0f} ms {json.dumps(facts, ensure_ascii=False) if facts else ''}")
            if step.get("node"):
                self._print_node(step["node"], "    ")
            if step.get("trace"):
                self._print_trace(step["trace"])

    def _print_node(self, node: dict[str, Any], indent: str) -> None:
        ids = ", ".join(str(row["chunk_id"]) for row in node["results"][:10])
        error = f" · ERROR {node['error']}" if node.get("error") else ""
        self.stdout.write(f"{indent}{node['id']} {node['class']} · {node['elapsed_ms']:.0f} ms · "
                          f"{len(node['results'])} result(s) [{ids}]{error}")
        for summary in node.get("rounds", []):
            verdict = summary.get("verdict") or {}
            self.stdout.write(f"{indent}  round {summary['round']}: {summary['operations']} +{len(summary['added'])} "
                              f"→ pool {summary['pool_size']} {verdict.get('reason', '')}")
        for child in node.get("children", []):
            self._print_node(child, indent + "  ")


