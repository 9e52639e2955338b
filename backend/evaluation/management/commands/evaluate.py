"""``manage.py evaluate``: measure pipelines on a BEIR dataset, in memory (no server needed)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from credentials.services import credential_resolver_for
from pipelines.models import Pipeline
from rag.core import ConfigValidationError, TrellisError
from rag.evaluation import (
    DatasetError,
    PipelineSpec,
    RunOptions,
    comparison_table,
    dataset_path,
    depth_notes,
    evaluate,
    flat_summary,
    load_beir,
    metrics_table,
    strategy_config,
    write_report,
)

MAX_DEPTH = 1000  # the largest top_k a retriever takes


class Command(BaseCommand):
    help = (
        "Evaluate one or more pipelines on a BEIR dataset: nDCG@10, Recall@1/5/10/100, MRR@10, MAP with 95% "
        "bootstrap intervals, latency and LLM calls per query; answer metrics with --answers. Prints the Markdown "
        "table and writes the report (report.md, metrics.png, recall.png, results.json) into --output, or prints "
        "one JSON document with --json."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True,
                            help="A dataset name in TRELLIS_DATASETS_DIR (e.g. scifact) or a BEIR folder's path.")
        parser.add_argument("--pipeline", required=True, action="append", dest="pipelines",
                            help="A saved pipeline's id, a preset slug (keyword, semantic, hybrid…) or a pipeline "
                                 "JSON file; repeat to compare several.")
        parser.add_argument("--limit", type=int, default=None, help="Evaluate only the first N judged queries.")
        parser.add_argument("--json", action="store_true",
                            help="Print one JSON document: the first pipeline's averaged metrics at the top level "
                                 "(ndcg@10, recall@1, recall@5, recall@10, recall@100, mrr@10, map) and per_query.")
        parser.add_argument("--output", type=Path, default=None,
                            help="Report folder (default: evaluations/cli-<dataset>-<time> in the data directory).")
        parser.add_argument("--depth", type=int, default=100,
                            help="Results asked of every retriever in the tree, children of fusions included "
                                 "(default 100, at most 1000); 0 keeps each pipeline's top_k.")
        parser.add_argument("--answers", type=int, default=0,
                            help="Also answer the first N queries with the whole pipeline, for the answer metrics.")
        parser.add_argument("--judge", default=None,
                            help="An LLM that judges faithfulness: 'local', or an LLM reference as JSON or a JSON file.")
        parser.add_argument("--chunk-size", type=int, default=None,
                            help="Cut documents into chunks of this many characters (default: one chunk each).")
        parser.add_argument("--chunk-overlap", type=int, default=0)
        parser.add_argument("--embedding", default=None,
                            help="The dense retrievers' default embedding model, a component name or reference "
                                 "(default: all-MiniLM-L6-v2 for English, multilingual-e5-small otherwise).")
        parser.add_argument("--seed", type=int, default=0, help="Seed of the bootstrap and randomisation tests.")
        parser.add_argument("--cache-dir", type=Path, default=None,
                            help="Where document vectors are kept between runs (default: cache/evaluation in the "
                                 "data directory).")

    def handle(self, *args: Any, **options: Any) -> None:
        if not 0 <= options["depth"] <= MAX_DEPTH:
            raise CommandError(f"--depth must be between 0 and {MAX_DEPTH}, got {options['depth']}")
        try:
            dataset = load_beir(dataset_path(options["dataset"], settings.TRELLIS_DATASETS_DIR))
        except DatasetError as exc:
            raise CommandError(str(exc)) from None
        specs, credentials = [], None
        for raw in options["pipelines"]:
            spec, owner_credentials = self._pipeline(raw)
            specs.append(spec)
            credentials = credentials or owner_credentials
        names = [spec.name for spec in specs]
        if len(set(names)) != len(names):
            specs = [PipelineSpec(f"{spec.name} ({index})", spec.config) for index, spec in enumerate(specs, start=1)]
        chunker = None
        if options["chunk_size"]:
            chunker = {"component": "RecursiveCharacterChunker",
                       "params": {"chunk_size": options["chunk_size"], "chunk_overlap": options["chunk_overlap"]}}
        quiet = options["json"]
        reported = {"at": 0.0}

        def progress(done: int, total: int) -> None:
            now = time.monotonic()
            if not quiet and (done == total or now - reported["at"] >= 5):
                reported["at"] = now
                self.stderr.write(f"  {done}/{total} queries")

        try:
            result = evaluate(
                dataset, specs, chunker=chunker, embedding=self._embedding(options["embedding"]),
                cache_dir=options["cache_dir"] or settings.DATA_DIR / "cache" / "evaluation",
                limit=options["limit"], judge=self._judge(options["judge"]), credentials=credentials,
                options=RunOptions(depth=options["depth"] or None, answer_queries=options["answers"],
                                   seed=options["seed"]),
                progress=progress,
            )
        except ConfigValidationError as exc:
            raise CommandError("invalid pipeline:\n" + "\n".join(f"  {error}" for error in exc.errors)) from None
        except (TrellisError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        output = options["output"]
        if options["json"]:
            if output is not None:
                write_report(result, output)
            self.stdout.write(json.dumps(flat_summary(result), ensure_ascii=False))
            return
        output = output or settings.DATA_DIR / "evaluations" / f"cli-{dataset.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        paths = write_report(result, output)
        self.stdout.write(metrics_table(result["pipelines"]))
        for note in depth_notes(result["pipelines"]):
            self.stdout.write(f"Note: {note}")
        comparison = comparison_table(result["comparisons"])
        if comparison:
            self.stdout.write("\n" + comparison)
        self.stdout.write(f"\nReport: {paths['markdown']} (plots {paths['metrics'].name}, {paths['recall'].name})")

    def _pipeline(self, raw: str) -> tuple[PipelineSpec, Any]:
        if raw.isdigit():
            pipeline = Pipeline.objects.filter(pk=int(raw)).select_related("owner").first()
            if pipeline is None:
                raise CommandError(f"no pipeline with id {raw}")
            return PipelineSpec(pipeline.name, pipeline.strategy), credential_resolver_for(pipeline.owner)
        try:
            config = strategy_config(raw)
        except (ValueError, json.JSONDecodeError, TrellisError) as exc:
            raise CommandError(f"--pipeline {raw}: {exc}") from None
        name = Path(raw).stem if raw.endswith(".json") else raw
        return PipelineSpec(name, config), None

    @staticmethod
    def _embedding(raw: str | None) -> dict[str, Any] | None:
        if not raw:
            return None
        if raw.lstrip().startswith("{"):
            return json.loads(raw)
        return {"component": raw, "params": {}}

    @staticmethod
    def _judge(raw: str | None) -> dict[str, Any] | None:
        if not raw:
            return None
        if raw == "local":
            return {"component": "LocalLLM", "params": {}}
        if raw.endswith(".json") and Path(raw).is_file():
            return json.loads(Path(raw).read_text(encoding="utf-8"))
        try:
            return json.loads(raw)
        except json.JSONDecodeError:
            raise CommandError("--judge takes 'local', an LLM reference as JSON, or a JSON file") from None
