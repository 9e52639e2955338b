"""Writes of the evaluation app: importing datasets into knowledge bases, starting evaluations
and running them in the background."""

from __future__ import annotations

import logging
import shutil
import threading
import time
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import SimpleUploadedFile, UploadedFile
from django.db import transaction
from django.utils import timezone

import jobs
from common.outbound import outbound_policy_for
from common.reach import reach_errors
from common.realtime import publish
from credentials.services import credential_resolver_for
from knowledge.models import Document, KnowledgeBase, VectorIndex
from knowledge.runtime import retriever_infra
from knowledge.services import (
    documents_upload,
    knowledge_base_create,
    knowledge_base_delete,
    knowledge_base_promote,
    vector_index_ensure,
)
from knowledge.services.knowledge_bases import model_key_of
from models.selectors import models_visible_to
from pipelines.models import Pipeline
from pipelines.selectors import dense_requirements
from pipelines.services import strategy_validate
from rag.components import load_components
from rag.core import ConfigValidationError, FieldError, readable_error, validate_or_raise
from rag.core.i18n import gettext_noop
from rag.documents.parsers.base import readable_size
from rag.evaluation import (
    CorpusDocument,
    DatasetError,
    DatasetLimits,
    EvaluationCorpus,
    PipelineSpec,
    Query,
    RunOptions,
    available_datasets,
    evaluate,
    load_beir,
    load_beir_archive,
    pipeline_summaries,
    strategy_config,
    write_report,
)
from rag.evaluation import (
    EvaluationDataset as EngineDataset,
)
from rag.presets import PRESETS

from .models import Evaluation, EvaluationDataset
from .selectors import evaluated_pipeline_label

logger = logging.getLogger(__name__)

IMPORT_TASK = "evaluation.import_dataset"
RUN_TASK = "evaluation.run"


def no_chunking() -> dict[str, Any]:
    """One chunk per corpus document: the longest chunk the server accepts, every character counted
    once (a longer document is cut, and scored at its best chunk)."""
    size = getattr(settings, "TRELLIS_MAX_CHUNK_CHARACTERS", 100_000)
    return {"component": "RecursiveCharacterChunker",
            "params": {"chunk_size": size, "chunk_overlap": 0, "wide_character_weight": 1}}

INDEX_WAIT_S = 3600.0
PROGRESS_INTERVAL_S = 0.5
KNOWLEDGE_BASE_LANGUAGES = {"en": KnowledgeBase.Language.ENGLISH, "es": KnowledgeBase.Language.SPANISH}


def evaluation_group(evaluation_id: int) -> str:
    """The channel-layer group that receives ``evaluation.progress`` events of one evaluation."""
    return f"evaluation-{evaluation_id}"


def _error(path: str, template: str, code: str, **context: Any) -> ConfigValidationError:
    return ConfigValidationError([FieldError(path, template, code, context)])


# -- datasets ------------------------------------------------------------------------------------


def uploads_dir() -> Path:
    return settings.DATA_DIR / "evaluation-uploads"


def report_root() -> Path:
    return settings.DATA_DIR / "evaluations"


def _check_name(owner: AbstractBaseUser, name: str) -> None:
    if EvaluationDataset.objects.filter(owner=owner, name=name).exists():
        raise _error("name", gettext_noop("you already have an evaluation dataset named {name!r}"), "duplicate",
                     name=name)


def _knowledge_base_name(owner: AbstractBaseUser, name: str) -> str:
    base = f"Evaluation · {name}"[:190]
    candidate, number = base, 1
    while KnowledgeBase.objects.filter(owner=owner, name=candidate).exists():
        number += 1
        candidate = f"{base} ({number})"
    return candidate


def dataset_limits() -> DatasetLimits:
    """The settings' limits on reading a dataset (``TRELLIS_DATASET_*``)."""
    return DatasetLimits(max_bytes=settings.TRELLIS_DATASET_MAX_BYTES, max_files=settings.TRELLIS_DATASET_MAX_FILES,
                         max_record_bytes=settings.TRELLIS_DATASET_MAX_RECORD_BYTES)


def _dropped_rows(dataset: EngineDataset) -> list[dict[str, Any]]:
    return [{"file": dropped.file, "line": dropped.line, "code": dropped.code, "template": dropped.template,
             "context": dropped.context} for dropped in dataset.dropped]


def _dataset_record(*, owner: AbstractBaseUser, name: str, source: str, dataset: EngineDataset,
                    chunker: dict[str, Any] | None) -> EvaluationDataset:
    with transaction.atomic():
        knowledge_base = knowledge_base_create(
            owner=owner, name=_knowledge_base_name(owner, name),
            description=f"The corpus of the evaluation dataset {name} ({source}).",
            language=KNOWLEDGE_BASE_LANGUAGES.get(dataset.language, KnowledgeBase.Language.MULTILINGUAL),
            chunker=chunker or no_chunking(),
            evaluation_only=True,  # under Evaluation until the user promotes it (dataset_promote)
        )
        return EvaluationDataset.objects.create(
            owner=owner, name=name, source=source, language=dataset.language, knowledge_base=knowledge_base,
            queries=[{"id": query.id, "text": query.text, "answers": list(query.answers)} for query in dataset.queries],
            qrels=dataset.qrels, document_count=len(dataset.corpus), query_count=len(dataset.queries),
            has_answers=dataset.has_answers, dropped=_dropped_rows(dataset),
        )


def _subset(dataset: EngineDataset, max_queries: int | None, max_documents: int | None) -> EngineDataset:
    return dataset.subset(max_queries=max_queries, max_documents=max_documents)


def dataset_import_shared(*, owner: AbstractBaseUser, shared_name: str, name: str | None = None,
                          max_queries: int | None = None, max_documents: int | None = None,
                          chunker: dict[str, Any] | None = None) -> EvaluationDataset:
    """Import a dataset of ``TRELLIS_DATASETS_DIR`` by its folder name.

    The queries and judgements are stored at once; the corpus is uploaded into a new knowledge
    base (one document per record, not chunked unless ``chunker`` says so) by a background job,
    then ingested as any upload is.

    Raises
    ------
    ConfigValidationError
        Unknown dataset, unreadable files, a name already used, an invalid chunker.
    """
    available = available_datasets(settings.TRELLIS_DATASETS_DIR)
    if shared_name not in available:
        raise _error("dataset", gettext_noop("no shared dataset named {name!r} (available: {available})"),
                     "unknown_dataset", name=shared_name, available=", ".join(available) or "none")
    folder = Path(settings.TRELLIS_DATASETS_DIR) / shared_name
    try:
        dataset = _subset(load_beir(folder, limits=dataset_limits()), max_queries, max_documents)
    except DatasetError as exc:
        raise _error("dataset", gettext_noop("{problem}"), "invalid_dataset", problem=str(exc)) from None
    name = name or shared_name
    _check_name(owner, name)
    chunker = _validated_chunker(chunker)
    record = _dataset_record(owner=owner, name=name, source=f"shared:{shared_name}", dataset=dataset, chunker=chunker)
    jobs.enqueue_on_commit(IMPORT_TASK, dataset_id=record.pk, path=str(folder), archive=False,
                           max_queries=max_queries, max_documents=max_documents, owner=record.owner_id)
    return record


def dataset_import_archive(*, owner: AbstractBaseUser, name: str, archive: UploadedFile,
                           max_queries: int | None = None, max_documents: int | None = None,
                           chunker: dict[str, Any] | None = None) -> EvaluationDataset:
    """Import a BEIR dataset uploaded as a zip archive (files at its root or in one folder).
    An archive larger than ``TRELLIS_MAX_UPLOAD_BYTES`` is refused (``too_large``)."""
    limit = settings.TRELLIS_MAX_UPLOAD_BYTES
    if archive.size is not None and archive.size > limit:
        raise _error("file", gettext_noop("the file is {size}, larger than the limit of {limit}"), "too_large",
                     size=readable_size(archive.size), limit=readable_size(limit))
    _check_name(owner, name)
    chunker = _validated_chunker(chunker)
    directory = uploads_dir()
    directory.mkdir(parents=True, exist_ok=True)
    stored = directory / f"{uuid.uuid4().hex}.zip"
    with open(stored, "wb") as handle:
        for piece in archive.chunks():
            handle.write(piece)
    try:
        dataset = _subset(load_beir_archive(stored, name=name, limits=dataset_limits()), max_queries, max_documents)
    except DatasetError as exc:
        stored.unlink(missing_ok=True)
        raise _error("file", gettext_noop("{problem}"), "invalid_dataset", problem=str(exc)) from None
    record = _dataset_record(owner=owner, name=name, source=f"upload:{Path(archive.name or 'dataset.zip').name}",
                             dataset=dataset, chunker=chunker)
    jobs.enqueue_on_commit(IMPORT_TASK, dataset_id=record.pk, path=str(stored), archive=True,
                           max_queries=max_queries, max_documents=max_documents, owner=record.owner_id)
    return record


def _validated_chunker(chunker: dict[str, Any] | None) -> dict[str, Any] | None:
    if chunker is None:
        return None
    return validate_or_raise(chunker, registry=load_components(), kind="chunker", path="chunker")


def dataset_upload_corpus(*, dataset_id: int, path: str, archive: bool, max_queries: int | None = None,
                          max_documents: int | None = None) -> None:
    """The background half of an import: one document per corpus record, queued for ingestion.
    Records with no text are skipped (nothing could retrieve them); they still count as judged.
    A record refused at upload (larger than the upload limit) is added to ``dropped``."""
    record = EvaluationDataset.objects.select_related("knowledge_base").filter(pk=dataset_id).first()
    if record is None:
        return
    try:
        limits = dataset_limits()
        source = load_beir_archive(path, name=record.name, limits=limits) if archive else load_beir(path, limits=limits)
        dataset = _subset(source, max_queries, max_documents)
        corpus_ids: dict[str, str] = {}
        dropped = _dropped_rows(dataset)
        for document in dataset.corpus:
            content = document.content
            if not content.strip():
                continue
            upload = SimpleUploadedFile(_file_name(document), content.encode("utf-8"), content_type="text/plain")
            outcome = documents_upload(knowledge_base=record.knowledge_base, files=[upload], force=True)
            for accepted in outcome.accepted:
                corpus_ids[str(accepted.pk)] = document.id
            dropped += [{"file": dataset.corpus_file, "line": document.line, "code": rejection.code,
                         "template": rejection.template, "context": rejection.context}
                        for rejection in outcome.rejected]
        EvaluationDataset.objects.filter(pk=dataset_id).update(corpus_ids=corpus_ids, imported=True, error="",
                                                               dropped=dropped)
    except Exception as exc:
        logger.exception("importing evaluation dataset %s failed", dataset_id)
        EvaluationDataset.objects.filter(pk=dataset_id).update(error=readable_error(exc).message)
    finally:
        if archive:
            Path(path).unlink(missing_ok=True)


def _file_name(document: CorpusDocument) -> str:
    safe = "".join(character if character.isalnum() or character in "-_." else "-" for character in document.id)
    return f"{safe.strip('.') or 'document'}.txt"


def dataset_promote(*, dataset: EvaluationDataset) -> EvaluationDataset:
    """Make the dataset's corpus an ordinary knowledge base of its owner: listed with the others,
    offered to pipelines, an MCP tool. The dataset keeps evaluating on it; deleting the dataset
    afterwards leaves the knowledge base."""
    knowledge_base_promote(knowledge_base=dataset.knowledge_base)
    return dataset


def dataset_delete(*, dataset: EvaluationDataset) -> None:
    """Delete the dataset and every evaluation run on it, with its knowledge base unless that was
    promoted to an ordinary one (the user may have built on it since)."""
    directories = [report_root() / str(pk) for pk in dataset.evaluations.values_list("pk", flat=True)]
    with transaction.atomic():
        if dataset.knowledge_base.evaluation_only:
            knowledge_base_delete(knowledge_base=dataset.knowledge_base)  # cascades to the dataset and its runs
        else:
            dataset.delete()
        transaction.on_commit(lambda: [shutil.rmtree(directory, ignore_errors=True) for directory in directories])


# -- evaluations ---------------------------------------------------------------------------------


def _pipeline_entries(*, owner: AbstractBaseUser, pipelines: Sequence[Pipeline],
                      presets: Sequence[str]) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = []
    errors: list[FieldError] = []
    for pipeline in pipelines:
        entries.append({"name": pipeline.name, "pipeline_id": pipeline.pk, "strategy": pipeline.strategy})
    known = {preset.name for preset in PRESETS}
    for index, slug in enumerate(presets):
        if slug not in known:
            errors.append(FieldError(f"presets[{index}]", gettext_noop("no preset named {name!r}"), "unknown_preset",
                                     {"name": slug}))
            continue
        try:
            with models_visible_to(owner):  # a preset's installed cross-encoder: one the owner may use
                config = strategy_config(slug)
            strategy = strategy_validate(owner=owner, strategy=config, path=f"presets[{index}]")
        except ConfigValidationError as exc:
            errors.extend(exc.errors)
            continue
        entries.append({"name": slug, "preset": slug, "strategy": strategy})
    if errors:
        raise ConfigValidationError(errors)
    if not entries:
        raise _error("pipelines", gettext_noop("choose at least one pipeline or preset"), "required")
    seen: dict[str, int] = {}
    for entry in entries:
        seen[entry["name"]] = seen.get(entry["name"], 0) + 1
        if seen[entry["name"]] > 1:
            entry["name"] = f"{entry['name']} ({seen[entry['name']]})"
    return entries


def evaluation_create(
    *,
    owner: AbstractBaseUser,
    dataset: EvaluationDataset,
    pipelines: Sequence[Pipeline] = (),
    presets: Sequence[str] = (),
    query_limit: int | None = None,
    depth: int | None = 100,
    answer_queries: int = 0,
    judge: dict[str, Any] | None = None,
    seed: int = 0,
) -> Evaluation:
    """Queue an evaluation of ``pipelines`` (the owner's saved ones, run over the dataset's
    knowledge base instead of their own) and ``presets`` on ``dataset``.

    Raises
    ------
    ConfigValidationError
        The dataset is still being imported, a preset is unknown or cannot run here, the judge
        is invalid, or nothing was chosen.
    """
    from .selectors import dataset_state

    state = dataset_state(dataset)
    if state["status"] != "ready":
        raise _error("dataset", gettext_noop("the dataset {name!r} is not ready yet ({status})"), "dataset_not_ready",
                     name=dataset.name, status=state["status"])
    entries = _pipeline_entries(owner=owner, pipelines=pipelines, presets=presets)
    if judge is not None:
        unreachable = reach_errors(owner=owner, config=validate_or_raise(judge, registry=load_components(), kind="llm",
                                                                         path="judge"), path="judge")
        if unreachable:
            raise ConfigValidationError(unreachable)
        judge = validate_or_raise(judge, registry=load_components(), kind="llm", path="judge", check_availability=True)
    queries = min(query_limit or dataset.query_count, dataset.query_count)
    with transaction.atomic():
        for entry in entries:
            for embedding, metric in dense_requirements(entry["strategy"], dataset.knowledge_base):
                vector_index_ensure(knowledge_base=dataset.knowledge_base, embedding_config=embedding, metric=metric)
        evaluation = Evaluation.objects.create(
            owner=owner, dataset=dataset, pipelines=entries, query_limit=query_limit, depth=depth,
            answer_queries=answer_queries, seed=seed,
            progress_total=(queries + min(answer_queries, queries)) * len(entries),
            judge=judge,
        )
        jobs.enqueue_on_commit(RUN_TASK, evaluation_id=evaluation.pk, owner=evaluation.owner_id)
    return evaluation


def evaluation_delete(*, evaluation: Evaluation) -> None:
    directory = report_root() / str(evaluation.pk)
    with transaction.atomic():
        evaluation.delete()
        transaction.on_commit(lambda: shutil.rmtree(directory, ignore_errors=True))


def evaluation_snapshot(evaluation: Evaluation) -> dict[str, Any]:
    return {"id": evaluation.pk, "status": evaluation.status, "done": evaluation.progress_done,
            "total": evaluation.progress_total, "error": evaluation.error or None}


def _publish(evaluation: Evaluation) -> None:
    event = {"type": "evaluation.progress", "evaluation": evaluation_snapshot(evaluation)}
    publish(evaluation_group(evaluation.pk), event)


def _engine_dataset(record: EvaluationDataset) -> EngineDataset:
    queries = [Query(str(query["id"]), query["text"], tuple(query.get("answers") or ())) for query in record.queries]
    corpus = [CorpusDocument(corpus_id, "", "") for corpus_id in dict.fromkeys(record.corpus_ids.values())]
    return EngineDataset(record.name, corpus, queries, {key: dict(value) for key, value in record.qrels.items()},
                         record.language)


def _wait_for_indexes(evaluation: Evaluation) -> None:
    knowledge_base = evaluation.dataset.knowledge_base
    needed = {(model_key_of(embedding), metric) for entry in evaluation.pipelines
              for embedding, metric in dense_requirements(entry["strategy"], knowledge_base)}
    deadline = time.monotonic() + INDEX_WAIT_S
    while needed:
        indexes = {(index.model_key, index.metric): index
                   for index in VectorIndex.objects.filter(knowledge_base=knowledge_base)}
        failed = [f"{key} ({metric}): {indexes[(key, metric)].error}" for key, metric in needed
                  if (key, metric) in indexes and indexes[(key, metric)].status == VectorIndex.Status.FAILED]
        if failed:
            raise RuntimeError("a vector index the pipelines need failed to build: " + "; ".join(failed))
        needed = {pair for pair in needed if pair not in indexes or indexes[pair].status != VectorIndex.Status.READY}
        if needed and time.monotonic() > deadline:
            raise RuntimeError(f"the vector indexes {sorted(needed)} were not ready after {INDEX_WAIT_S:.0f} s")
        if needed:
            time.sleep(1.0)


def _unchunked(chunker: dict[str, Any]) -> bool:
    default = no_chunking()
    return (chunker.get("component") == default["component"]
            and chunker.get("params", {}).get("chunk_size") == default["params"]["chunk_size"])


def evaluation_run(*, evaluation_id: int) -> None:
    """Run a queued evaluation: every pipeline over the dataset's knowledge base, progress saved
    and published as it goes, then the results and the report (Markdown and PNG plots)."""
    claimed = Evaluation.objects.filter(pk=evaluation_id, status=Evaluation.Status.QUEUED).update(
        status=Evaluation.Status.RUNNING, started_at=timezone.now(), progress_done=0)
    if not claimed:
        return  # gone, or already taken by another worker
    evaluation = Evaluation.objects.select_related("dataset__knowledge_base", "owner").get(pk=evaluation_id)
    _publish(evaluation)
    last = {"at": 0.0}
    lock = threading.Lock()

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        with lock:
            if done < total and now - last["at"] < PROGRESS_INTERVAL_S:
                return
            last["at"] = now
        Evaluation.objects.filter(pk=evaluation_id).update(progress_done=done, progress_total=total)
        evaluation.progress_done, evaluation.progress_total = done, total
        _publish(evaluation)

    try:
        _wait_for_indexes(evaluation)
        record = evaluation.dataset
        knowledge_base = KnowledgeBase.objects.get(pk=record.knowledge_base_id)
        corpus = EvaluationCorpus(
            # The owner's outbound policy rides with the infrastructure to every component built.
            infra={**retriever_infra(knowledge_base), "outbound": outbound_policy_for(evaluation.owner)},
            corpus_ids={int(document_id): corpus_id for document_id, corpus_id in record.corpus_ids.items()},
            details={"documents": record.document_count,
                     "chunks": knowledge_base.chunks.filter(document__status=Document.Status.READY).count(),
                     "chunker": None if _unchunked(knowledge_base.chunker) else knowledge_base.chunker,
                     "embedding": knowledge_base.embedding_model},
        )
        result = evaluate(
            _engine_dataset(record),
            [PipelineSpec(entry["name"], entry["strategy"]) for entry in evaluation.pipelines],
            corpus=corpus, limit=evaluation.query_limit,
            options=RunOptions(depth=evaluation.depth, answer_queries=evaluation.answer_queries, seed=evaluation.seed),
            judge=evaluation.judge, credentials=credential_resolver_for(evaluation.owner), progress=progress,
        )
        result["dataset"]["documents"] = record.document_count
        directory = report_root() / str(evaluation_id)
        # The figures are drawn once, for every reader: presets by their English display names.
        labels = {entry["name"]: evaluated_pipeline_label(entry, "en") for entry in evaluation.pipelines}
        write_report(result, directory, title=f"Evaluation {evaluation_id} on {record.name}", labels=labels)
    except Exception as exc:
        logger.exception("evaluation %s failed", evaluation_id)
        Evaluation.objects.filter(pk=evaluation_id).update(
            status=Evaluation.Status.FAILED, error=readable_error(exc).message[:5000], finished_at=timezone.now())
        evaluation.refresh_from_db()
        _publish(evaluation)
        return
    Evaluation.objects.filter(pk=evaluation_id).update(
        status=Evaluation.Status.DONE, results=result, summary=pipeline_summaries(result), report_dir=str(directory.relative_to(settings.DATA_DIR)),
        progress_done=evaluation.progress_total, finished_at=timezone.now())
    evaluation.refresh_from_db()
    _publish(evaluation)


@jobs.recovery
def datasets_mark_interrupted_imports() -> int:
    """A dataset whose corpus upload a crash cut short is marked failed (its knowledge base holds
    part of the corpus; importing again under another name, or deleting it, is the way out)."""
    return EvaluationDataset.objects.filter(imported=False, error="").update(
        error="the import was interrupted by a restart; delete the dataset and import it again")


@jobs.recovery
def evaluations_requeue_interrupted() -> int:
    """Evaluations a crash left queued or running start again from the beginning; one the
    server crashed in twice (``jobs.MAX_CRASHES``) fails instead."""
    interrupted = list(Evaluation.objects.filter(status__in=(Evaluation.Status.QUEUED, Evaluation.Status.RUNNING)))
    requeued = 0
    for evaluation in interrupted:
        subject = evaluation_subject(evaluation.pk)
        if jobs.crashed_too_often(subject):
            logger.error("evaluation %s crashed the server %d times; failing it", evaluation.pk, jobs.crashes(subject))
            _evaluation_fail(evaluation.pk, jobs.CRASHED)
            jobs.forget_crashes(subject)
            continue
        Evaluation.objects.filter(pk=evaluation.pk).update(status=Evaluation.Status.QUEUED, progress_done=0)
        jobs.enqueue_on_commit(RUN_TASK, evaluation_id=evaluation.pk, owner=evaluation.owner_id)
        requeued += 1
    return requeued


def evaluation_subject(evaluation_id: int) -> str:
    """What the job runner counts an evaluation's crashed runs by (``jobs.crashes``)."""
    return f"evaluation:{evaluation_id}"


def evaluation_aborted(*, evaluation_id: int, error: BaseException) -> None:
    """Fail an evaluation whose run let ``error`` escape (``SystemExit`` from a model's code…)."""
    _evaluation_fail(evaluation_id, jobs.ABORTED.format(error=type(error).__name__))


def _evaluation_fail(evaluation_id: int, error: str) -> None:
    if Evaluation.objects.filter(pk=evaluation_id).exclude(status=Evaluation.Status.DONE).update(
            status=Evaluation.Status.FAILED, error=error, finished_at=timezone.now()):
        _publish(Evaluation.objects.get(pk=evaluation_id))


__all__ = [
    "IMPORT_TASK",
    "RUN_TASK",
    "dataset_delete",
    "datasets_mark_interrupted_imports",
    "dataset_import_archive",
    "dataset_import_shared",
    "dataset_promote",
    "dataset_upload_corpus",
    "evaluation_aborted",
    "evaluation_create",
    "evaluation_delete",
    "evaluation_group",
    "evaluation_run",
    "evaluation_subject",
    "evaluations_requeue_interrupted",
    "no_chunking",
]

