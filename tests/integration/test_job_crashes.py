"""Work that crashed the server twice is not re-queued a third time (issue 38, finding 2).

A crash is simulated without ending pytest: the task's work raises ``ProcessDied`` (standing for
``os.abort``), and the runner's note that the run ended is skipped, as a dead process never
writes it. What is left is the state a real crash leaves: the work in progress in the database,
and its run started and never ended. Recovery then runs as at the next start."""

from __future__ import annotations

import pytest
from django.urls import reverse

import jobs
from common.i18n import translate
from evaluation.models import Evaluation, EvaluationDataset
from jobs import registry
from knowledge.models import Document, KnowledgeBase
from models.models import ModelInstall

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


class ProcessDied(BaseException):
    """Stands for the server process ending in the middle of a task."""


@pytest.fixture
def queued(monkeypatch):
    """What recovery hands the job runner, recorded instead of run."""
    sent: list[tuple[str, dict]] = []
    monkeypatch.setattr(registry, "enqueue", lambda name, **kwargs: sent.append((name, kwargs)))
    return sent


@pytest.fixture
def crash(monkeypatch):
    def crash_in(name: str, **kwargs) -> None:
        def die(**_) -> None:
            raise ProcessDied

        with monkeypatch.context() as patch:
            patch.setitem(registry._tasks, name, die)
            patch.setattr(registry, "_run_ended", lambda subject: None)
            with pytest.raises(ProcessDied):
                registry.run_task(name, kwargs)

    return crash_in


def recover(django_capture_on_commit_callbacks) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        jobs.recover_interrupted_work()


def test_a_document_that_crashed_the_server_twice_fails_instead_of_being_requeued(
        owner, api, crash, queued, django_capture_on_commit_callbacks):
    knowledge_base = KnowledgeBase.objects.create(owner=owner, name="Notes", chunker={}, embedding_model={})
    document = Document.objects.create(owner=owner, knowledge_base=knowledge_base, name="hostile.txt", size=1,
                                       sha256="0" * 64, file="uploads/none", status=Document.Status.EMBEDDING,
                                       attempt=1)
    innocent = Document.objects.create(owner=owner, knowledge_base=knowledge_base, name="fine.txt", size=1,
                                       sha256="1" * 64, file="uploads/none", status=Document.Status.QUEUED)

    crash("knowledge.ingest_document", document_id=document.pk, attempt=1)
    recover(django_capture_on_commit_callbacks)
    document.refresh_from_db()
    assert document.status == Document.Status.QUEUED and document.attempt == 2, "one crash: it is tried again"
    assert ("knowledge.ingest_document", {"document_id": document.pk, "attempt": 2,
                                          "priority": jobs.Priority.BACKGROUND, "owner": owner.pk}) in queued

    queued.clear()
    crash("knowledge.ingest_document", document_id=document.pk, attempt=2)
    recover(django_capture_on_commit_callbacks)
    document.refresh_from_db()
    assert document.status == Document.Status.FAILED and document.error_code == "crashed"
    assert document.error.startswith("crashed the server while loading"), document.error
    assert [kwargs["document_id"] for _, kwargs in queued] == [innocent.pk], "requeued a third time"
    shown = api.get(reverse("document-detail", args=[knowledge_base.pk, document.pk]), HTTP_ACCEPT_LANGUAGE="es")
    assert shown.json()["error"] == translate(document.error_template, document.error_context, "es")
    assert shown.json()["error"] != document.error, "the reason is not translated"

    # A retry asked for by the user starts counting afresh.
    from knowledge.services import document_requeue

    document_requeue(document=document)
    assert jobs.crashes(f"document:{document.pk}") == 0


def test_a_model_install_that_crashed_the_server_twice_fails_instead_of_being_requeued(
        owner, crash, queued, django_capture_on_commit_callbacks):
    install = ModelInstall.objects.create(owner=owner, source=ModelInstall.Source.ZIP, kind="cross-encoder",
                                          reference="hostile.zip", name="hostile",
                                          status=ModelInstall.Status.CHECKING)
    for crashes_so_far in (1, 2):
        crash("models.install", install_id=install.pk)
        assert jobs.crashes(f"model-install:{install.pk}") == crashes_so_far
        queued.clear()
        recover(django_capture_on_commit_callbacks)
    install.refresh_from_db()
    assert install.status == ModelInstall.Status.FAILED and install.error_code == "crashed"
    assert install.error.startswith("crashed the server while loading") and queued == []


def test_an_evaluation_that_crashed_the_server_twice_fails_instead_of_being_requeued(
        owner, api, crash, queued, django_capture_on_commit_callbacks):
    knowledge_base = KnowledgeBase.objects.create(owner=owner, name="Corpus", chunker={}, embedding_model={})
    dataset = EvaluationDataset.objects.create(owner=owner, name="Set", source="upload:x.zip",
                                               knowledge_base=knowledge_base)
    evaluation = Evaluation.objects.create(owner=owner, dataset=dataset, status=Evaluation.Status.RUNNING)
    crash("evaluation.run", evaluation_id=evaluation.pk)
    recover(django_capture_on_commit_callbacks)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.QUEUED
    assert [name for name, _ in queued] == ["evaluation.run"]

    queued.clear()
    crash("evaluation.run", evaluation_id=evaluation.pk)
    recover(django_capture_on_commit_callbacks)
    evaluation.refresh_from_db()
    assert evaluation.status == Evaluation.Status.FAILED and queued == []
    assert evaluation.error.startswith("crashed the server while loading")
    shown = api.get(reverse("evaluation-detail", args=[evaluation.pk]), HTTP_ACCEPT_LANGUAGE="es").json()
    assert shown["error"].startswith("hizo caer el servidor al cargarse"), shown["error"]


def test_a_run_that_ends_by_systemexit_is_no_crash_and_fails_its_document_with_the_reason(owner, monkeypatch):
    knowledge_base = KnowledgeBase.objects.create(owner=owner, name="Notes", chunker={}, embedding_model={})
    document = Document.objects.create(owner=owner, knowledge_base=knowledge_base, name="a.txt", size=1,
                                       sha256="2" * 64, file="uploads/none", status=Document.Status.QUEUED)

    def fails(**_) -> None:
        raise SystemExit(2)

    monkeypatch.setitem(registry._tasks, "knowledge.ingest_document", fails)
    arguments = {"document_id": document.pk, "attempt": 0}
    with pytest.raises(SystemExit) as escaped:
        registry.run_task("knowledge.ingest_document", arguments)
    registry.abort_task("knowledge.ingest_document", arguments, escaped.value)  # what the worker does
    document.refresh_from_db()
    assert jobs.crashes(f"document:{document.pk}") == 0
    assert document.status == Document.Status.FAILED and document.error_code == "aborted"
    assert "SystemExit" in document.error
