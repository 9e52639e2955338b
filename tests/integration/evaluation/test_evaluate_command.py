"""``manage.py evaluate`` on small BEIR folders: --json, the report, saved pipelines by id."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from knowledge.services import knowledge_base_create
from pipelines.services import pipeline_create
from rag.evaluation import write_beir

from .conftest import cranfield_head

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

TOP_LEVEL = {"ndcg@10", "recall@1", "recall@5", "recall@10", "recall@100", "mrr@10", "map", "per_query"}


@pytest.fixture
def folder(tmp_path):
    return write_beir(cranfield_head(50), tmp_path / "cranfield-head")


def run(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("evaluate", *args, stdout=out, stderr=err)
    return out.getvalue()


def test_json_prints_one_document_with_the_averaged_metrics_at_the_top_and_per_query_rows(folder):
    summary = json.loads(run("--dataset", str(folder), "--pipeline", "keyword", "--limit", "20", "--json"))
    assert set(summary) >= TOP_LEVEL
    assert summary["pipeline"] == "keyword" and summary["queries"] == 20 and len(summary["per_query"]) == 20
    ndcg = [row["ndcg@10"] for row in summary["per_query"]]
    assert summary["ndcg@10"] == pytest.approx(sum(ndcg) / 20)
    assert 0 < summary["ndcg@10"] <= 1 and summary["recall@1"] <= summary["recall@5"] <= summary["recall@100"]
    assert summary["per_query"][0]["query_id"] == "1"


def test_without_json_it_prints_the_table_and_writes_the_report(tmp_path):
    folder = write_beir(cranfield_head(15), tmp_path / "cranfield-15")
    output = tmp_path / "report"
    printed = run("--dataset", str(folder), "--pipeline", "keyword", "--pipeline", "hybrid", "--limit", "10",
                  "--output", str(output), "--cache-dir", str(tmp_path / "cache"))
    assert printed.startswith("| Pipeline | Queries | nDCG@10 |")
    assert "| keyword | 10 |" in printed and "| hybrid | 10 |" in printed and "| keyword | hybrid | nDCG@10 |" in printed
    assert {path.name for path in output.iterdir()} == {"report.md", "metrics.png", "recall.png", "results.json"}
    assert (output / "metrics.png").read_bytes()[:4] == b"\x89PNG"


def test_a_saved_pipeline_is_evaluated_by_id_and_a_dataset_by_name(folder, user, settings):
    settings.TRELLIS_DATASETS_DIR = folder.parent
    knowledge_base = knowledge_base_create(owner=user, name="Anything")
    saved = pipeline_create(owner=user, name="Short BM25", knowledge_base=knowledge_base, strategy={
        "component": "NaiveRAG", "params": {"retriever": {"component": "BM25Retriever", "params": {"top_k": 1}}}})
    summary = json.loads(run("--dataset", "cranfield-head", "--pipeline", str(saved.pk), "--depth", "0", "--json",
                             "--limit", "5"))
    assert summary["pipeline"] == "Short BM25"
    assert all(len(row["retrieved"]) <= 1 for row in summary["per_query"])
    assert summary["recall@5"] == summary["recall@1"]


def test_unknown_datasets_and_pipelines_are_readable_errors(folder):
    with pytest.raises(CommandError, match="no dataset 'nowhere'"):
        run("--dataset", "nowhere", "--pipeline", "keyword")
    with pytest.raises(CommandError, match="unknown preset 'fastest'"):
        run("--dataset", str(folder), "--pipeline", "fastest")
    with pytest.raises(CommandError, match="no pipeline with id 999"):
        run("--dataset", str(folder), "--pipeline", "999")
