"""Users, clients and small BEIR datasets (cut from the shared Cranfield collection, read in
place) for the evaluation API and command tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest

import jobs
from rag.evaluation import EvaluationDataset, load_beir, write_beir
from rag.locations import datasets_dir

DATASETS = datasets_dir(Path(__file__).resolve().parents[3])
IDLE_TIMEOUT = 240


@pytest.fixture(autouse=True)
def background_jobs_finish():
    """No job may outlive its test: the next test's database would be written by it."""
    yield
    assert jobs.wait_until_idle(IDLE_TIMEOUT), f"background jobs still running after {IDLE_TIMEOUT} s"


def wait_for_jobs() -> None:
    assert jobs.wait_until_idle(IDLE_TIMEOUT), f"background jobs did not finish within {IDLE_TIMEOUT} s"


def cranfield_head(documents: int = 50) -> EvaluationDataset:
    """The first ``documents`` Cranfield documents, with the queries that judge one of them
    relevant and only those judgements (graded 1–4)."""
    full = load_beir(DATASETS / "cranfield")
    corpus = full.corpus[:documents]
    kept = {document.id for document in corpus}
    qrels = {query_id: {doc: grade for doc, grade in judged.items() if doc in kept}
             for query_id, judged in full.qrels.items()}
    queries = [query for query in full.queries if any(grade > 0 for grade in qrels[query.id].values())]
    return EvaluationDataset("cranfield-head", corpus, queries, {query.id: qrels[query.id] for query in queries}, "en")


def beir_zip(dataset: EvaluationDataset, folder: Path) -> bytes:
    """``dataset`` as a BEIR zip archive, its files inside a top folder as people zip them."""
    root = write_beir(dataset, folder / dataset.name)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(root.rglob("*")):
            if path.is_file():
                archive.write(path, f"{dataset.name}/{path.relative_to(root)}")
    return buffer.getvalue()
