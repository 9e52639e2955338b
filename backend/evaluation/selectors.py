"""Reads of the evaluation app. Every function that returns rows takes the acting user and sees
only theirs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Count, Q, QuerySet

from knowledge.models import Document
from rag.core.i18n import gettext_noop
from rag.evaluation import REPORT_FILES, available_datasets, readme_title

from .models import Evaluation, EvaluationDataset, PipelineTestSet


def dataset_list(*, user: AbstractBaseUser) -> QuerySet[EvaluationDataset]:
    """The user's datasets with their knowledge base's document counts by status."""
    documents = "knowledge_base__documents"
    return EvaluationDataset.objects.filter(owner=user).select_related("knowledge_base").annotate(
        uploaded_count=Count(documents, distinct=True),
        ready_count=Count(documents, filter=Q(**{f"{documents}__status": Document.Status.READY}), distinct=True),
        failed_count=Count(documents, filter=Q(**{f"{documents}__status": Document.Status.FAILED}), distinct=True),
        in_progress_count=Count(documents, filter=Q(**{f"{documents}__status__in": Document.IN_PROGRESS}),
                                distinct=True),
    )


def dataset_get(*, user: AbstractBaseUser, dataset_id: int) -> EvaluationDataset:
    """Raises ``EvaluationDataset.DoesNotExist`` for a missing id or another user's dataset."""
    return dataset_list(user=user).get(pk=dataset_id)


def dataset_state(dataset: EvaluationDataset) -> dict[str, Any]:
    """Where the import stands: ``importing`` (the corpus is being uploaded), ``indexing``
    (documents are being ingested), ``ready`` or ``failed``, with document counts. A failed
    import always says why: ``error`` is the stored error, else ``(template, context)``
    naming what became of the corpus."""
    if not hasattr(dataset, "ready_count"):
        dataset = dataset_list(user=dataset.owner).get(pk=dataset.pk)
    counts = {"documents": dataset.document_count, "uploaded": dataset.uploaded_count,
              "ready": dataset.ready_count, "failed": dataset.failed_count, "in_progress": dataset.in_progress_count}
    error: str | tuple[str, dict[str, Any]] = dataset.error
    if dataset.error:
        status = "failed"
    elif not dataset.imported:
        status = "importing"
    elif dataset.in_progress_count:
        status = "indexing"
    elif not dataset.ready_count:
        status = "failed"
        if dataset.uploaded_count:
            error = (gettext_noop("none of the {uploaded} corpus documents could be indexed ({failed} failed; the "
                                  "knowledge base's documents say why)"),
                     {"uploaded": dataset.uploaded_count, "failed": dataset.failed_count})
        else:
            error = (gettext_noop("no corpus record could be imported: of {documents}, {dropped} were left out and "
                                  "the others have no text"),
                     {"documents": dataset.document_count, "dropped": len(dataset.dropped)})
    else:
        status = "ready"
    return {"status": status, "error": error, **counts}


def shared_dataset_list() -> list[dict[str, str]]:
    """The BEIR folders of ``TRELLIS_DATASETS_DIR`` that can be imported by name."""
    root = Path(settings.TRELLIS_DATASETS_DIR)
    return [{"name": name, "title": readme_title(root / name) or name} for name in available_datasets(root)]


def evaluation_list(*, user: AbstractBaseUser) -> QuerySet[Evaluation]:
    """Without the results (megabytes for a large dataset); each row carries its ``summary``."""
    return Evaluation.objects.filter(owner=user).select_related("dataset").defer("results")


def evaluation_get(*, user: AbstractBaseUser, evaluation_id: int) -> Evaluation:
    """With its results. Raises ``Evaluation.DoesNotExist`` for a missing id or another user's evaluation."""
    return Evaluation.objects.filter(owner=user).select_related("dataset").get(pk=evaluation_id)


def evaluated_pipeline_label(entry: dict[str, Any], language: str | None) -> str:
    """How an evaluated pipeline reads: a saved pipeline by its name, a preset by its display
    name in ``language`` (its slug only if the preset has gone), with the " (2)" that tells two
    runs of one preset apart."""
    from rag.presets import PRESETS

    slug = entry.get("preset")
    preset = next((preset for preset in PRESETS if preset.name == slug), None) if slug else None
    if preset is None:
        return str(entry["name"])
    return preset.display_name.get(language) + str(entry["name"])[len(slug):]


def evaluation_steps(evaluation: Evaluation) -> dict[str, int]:
    """What each pipeline of ``evaluation`` runs: ``queries`` searched, the first ``answers`` of
    them also answered (its progress counts both, over every pipeline)."""
    queries = min(evaluation.query_limit or evaluation.dataset.query_count, evaluation.dataset.query_count)
    return {"queries": queries, "answers": min(evaluation.answer_queries, queries)}


def evaluation_report_file(evaluation: Evaluation, name: str) -> Path | None:
    """The report file ``name`` (one of ``report.md``, ``metrics.png``, ``recall.png``,
    ``results.json``) of a finished evaluation, or None."""
    if not evaluation.report_dir or name not in REPORT_FILES.values():
        return None
    path = settings.DATA_DIR / evaluation.report_dir / name
    return path if path.is_file() else None


def pipeline_test_set_get(*, pipeline: Any) -> dict[str, Any] | None:
    """The pipeline's test set as stored, or None."""
    stored = PipelineTestSet.objects.filter(pipeline=pipeline).only("definition").first()
    return stored.definition if stored is not None else None
