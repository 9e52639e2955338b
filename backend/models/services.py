"""Writes of the models app: asking for an install, running it, removing a model.

The model store (``rag.models_manager``) does the work; these functions validate a request,
record it, queue it, follow its progress and tell the user's open pages.
"""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.files.uploadedfile import UploadedFile
from django.db import transaction
from django.utils import timezone

import jobs
from common.realtime import publish
from rag.core import ConfigValidationError, FieldError
from rag.core.i18n import gettext_noop
from rag.models_manager import (
    INSTALLABLE_KINDS,
    InstalledModel,
    ModelInstallError,
    default_name,
    inspect_model_zip,
    name_problem,
    store,
)

from .models import ModelInstall
from .selectors import install_owner, model_hidden_from

logger = logging.getLogger(__name__)

INSTALL_TASK = "models.install"
PROGRESS_INTERVAL_S = 0.25
STAGES = {"downloading": ModelInstall.Status.DOWNLOADING, "extracting": ModelInstall.Status.EXTRACTING,
          "checking": ModelInstall.Status.CHECKING}


def installs_group(user_id: int | None) -> str:
    return f"model-installs-{user_id or 0}"


def uploads_dir() -> Path:
    return settings.DATA_DIR / "model-uploads"


def install_snapshot(install: ModelInstall) -> dict[str, Any]:
    """What the page shows of an install (the error in English; the API translates it)."""
    return {
        "id": install.pk,
        "source": install.source,
        "reference": install.reference,
        "revision": install.revision,
        "kind": install.kind,
        "name": install.name,
        "status": install.status,
        "done": install.bytes_done,
        "total": install.bytes_total,
        "size": install.size,
        "error": install.error or None,
        "error_code": install.error_code or None,
        "error_template": install.error_template or None,
        "error_context": install.error_context or {},
        "created_at": install.created_at.isoformat() if install.created_at else None,
        "finished_at": install.finished_at.isoformat() if install.finished_at else None,
    }


def publish_install(install: ModelInstall) -> None:
    """Tell the owner's open pages where ``install`` stands, once the transaction commits."""
    message = {"type": "model.install", "install": install_snapshot(install)}
    group = installs_group(install.owner_id)
    transaction.on_commit(lambda: publish(group, message))


def _error(field: str, template: str, code: str, /, **context: Any) -> ConfigValidationError:
    return ConfigValidationError([FieldError(field, template, code, context)])


def _check_request(*, kind: str, name: str) -> None:
    if kind not in INSTALLABLE_KINDS:
        raise _error("kind", gettext_noop("must be one of {expected}"), "invalid_kind",
                     expected=", ".join(INSTALLABLE_KINDS))
    problem = name_problem(name)
    if problem is not None:
        raise _error("name", problem.template, problem.code, **problem.context)
    if store().get(name) is not None:
        raise _error("name", gettext_noop("a model named {name!r} is installed already; remove it first or choose "
                                          "another name"), "name_taken", name=name)
    # A command-line install holds the store's lock while it runs (released if it dies), so
    # only queued installs, which nothing holds yet, are checked here.
    if ModelInstall.objects.filter(name=name, status__in=ModelInstall.ACTIVE, owner__isnull=False).exists():
        raise _error("name", gettext_noop("{name!r} is being installed already"), "busy", name=name)


def model_install_request(*, owner: AbstractBaseUser | None, source: str, kind: str, reference: str,
                          name: str | None = None, revision: str = "", copy: bool = False,
                          queue: bool = True) -> ModelInstall:
    """Record a hub or folder install and queue it (``queue=False`` leaves the running to the
    caller, as ``manage.py models install`` does).

    Raises
    ------
    ConfigValidationError
        With the field at fault: ``source`` offline (``TRELLIS_OFFLINE=1``) for a hub install,
        a folder asked for by someone who is not an administrator, ``kind``, ``name`` taken...
    """
    reference = reference.strip()
    if source == ModelInstall.Source.HUB:
        if settings.TRELLIS_OFFLINE:
            raise _error("source", gettext_noop("this server is offline (TRELLIS_OFFLINE=1): it downloads no model; "
                                                "install from a .zip or a local folder instead"), "offline")
        from rag.models_manager.hub import REPO_ID

        if not REPO_ID.fullmatch(reference):
            raise _error("reference", gettext_noop("{repo_id!r} is not a Hugging Face model id (like "
                                                   "cross-encoder/ms-marco-MiniLM-L-6-v2)"), "bad_repo_id",
                         repo_id=reference)
    elif source == ModelInstall.Source.FOLDER:
        if owner is not None and not owner.is_staff:
            raise _error("source", gettext_noop("only administrators may install from a folder on the server"),
                         "forbidden")
        if not Path(reference).expanduser().is_dir():
            raise _error("reference", gettext_noop("{path} is not a directory on the server"), "not_a_directory",
                         path=reference)
        reference = str(Path(reference).expanduser().resolve())
    else:
        raise _error("source", gettext_noop("must be one of {expected}"), "invalid_source", expected="hub, folder")
    name = (name or "").strip() or default_name(reference)
    _check_request(kind=kind, name=name)
    with transaction.atomic():
        install = ModelInstall.objects.create(owner=owner, source=source, kind=kind, reference=reference,
                                              name=name, revision=revision.strip(), copy=copy)
        publish_install(install)
        if queue:
            jobs.enqueue_on_commit(INSTALL_TASK, install_id=install.pk, owner=install.owner_id)
    return install


def model_install_upload(*, owner: AbstractBaseUser | None, kind: str, upload: UploadedFile,
                         name: str | None = None, queue: bool = True) -> ModelInstall:
    """Store an uploaded ``.zip`` of a model folder and queue its install. The archive's
    directory is read at once: a zip that is not one, leaves its folder, holds links, is too
    large or holds no model is refused here, before anything is extracted."""
    label = Path(upload.name or "model.zip").name
    if upload.size is not None and upload.size > settings.TRELLIS_MAX_MODEL_BYTES:
        raise _error("file", gettext_noop("{file} is {size} MB, more than the {limit} MB a model may have here "
                                          "(TRELLIS_MAX_MODEL_MB)"), "too_large", file=label,
                     size=f"{upload.size / 1024 ** 2:,.1f}", limit=f"{settings.TRELLIS_MAX_MODEL_BYTES / 1024 ** 2:,.1f}")
    name = (name or "").strip() or default_name(label)
    _check_request(kind=kind, name=name)
    directory = uploads_dir()
    directory.mkdir(parents=True, exist_ok=True)
    stored = directory / f"{uuid.uuid4().hex}.zip"
    with open(stored, "wb") as handle:
        for piece in upload.chunks():
            handle.write(piece)
    try:
        inspect_model_zip(stored, max_bytes=settings.TRELLIS_MAX_MODEL_BYTES, label=label)
    except ModelInstallError as exc:
        stored.unlink(missing_ok=True)
        raise _error("file", exc.template, exc.code, **exc.context) from None
    with transaction.atomic():
        install = ModelInstall.objects.create(
            owner=owner, source=ModelInstall.Source.ZIP, kind=kind, reference=label, name=name,
            archive=str(stored.relative_to(settings.DATA_DIR)), bytes_total=stored.stat().st_size)
        publish_install(install)
        if queue:
            jobs.enqueue_on_commit(INSTALL_TASK, install_id=install.pk, owner=install.owner_id)
    return install


class _Reporter:
    """Writes an install's progress at most every ``PROGRESS_INTERVAL_S`` (and at every change
    of stage), and tells the listeners."""

    def __init__(self, install: ModelInstall, echo: Any = None) -> None:
        self.install = install
        self.echo = echo
        self._last = 0.0

    def __call__(self, stage: str, done: int, total: int) -> None:
        status = STAGES.get(stage, ModelInstall.Status.CHECKING)
        now = time.monotonic()
        changed = status != self.install.status
        if not changed and done < total and now - self._last < PROGRESS_INTERVAL_S:
            return
        self._last = now
        fields: dict[str, Any] = {"status": status}
        if stage != "checking":
            fields.update(bytes_done=done, bytes_total=total)
        self.write(**fields)
        if self.echo is not None:
            self.echo(stage, done, total)

    def write(self, **fields: Any) -> None:
        with transaction.atomic():
            ModelInstall.objects.filter(pk=self.install.pk).update(**fields)
            for name, value in fields.items():
                setattr(self.install, name, value)
            publish_install(self.install)


def model_install_run(*, install_id: int, echo: Any = None) -> ModelInstall | None:
    """Run a queued install to its end: ``ready`` with the model in the store, or ``failed``
    with a readable reason. ``echo(stage, done, total)`` also hears the progress (the command
    line prints it)."""
    install = ModelInstall.objects.filter(pk=install_id, status__in=ModelInstall.ACTIVE).first()
    if install is None:
        return None
    reporter = _Reporter(install, echo)
    reporter.write(started_at=timezone.now(), error="", error_code="", error_template="", error_context={})
    archive = settings.DATA_DIR / install.archive if install.archive else None
    try:
        model = _install(install, reporter, archive)
    except ModelInstallError as exc:
        reporter.write(status=ModelInstall.Status.FAILED, finished_at=timezone.now(), error=exc.message,
                       error_code=exc.code, error_template=exc.template, error_context=_json_context(exc.context))
    except Exception as exc:
        logger.exception("installing model %s (install %s) failed", install.name, install_id)
        template = gettext_noop("internal error while installing: {error} (the server log has the details)")
        context = {"error": type(exc).__name__}
        reporter.write(status=ModelInstall.Status.FAILED, finished_at=timezone.now(),
                       error=template.format(**context), error_code="internal", error_template=template,
                       error_context=context)
    else:
        fields: dict[str, Any] = {"status": ModelInstall.Status.READY, "finished_at": timezone.now(),
                                  "size": model.size}
        if model.source.get("revision"):
            fields["revision"] = model.source["revision"]
        reporter.write(**fields)
    finally:
        if archive is not None and _archive_done(install):
            archive.unlink(missing_ok=True)
    return install


def _archive_done(install: ModelInstall) -> bool:
    """Whether an uploaded archive has served its purpose: once installed; once failed too for a
    command's install, whose user still has the file. A user's failed upload is kept so Retry
    can run it again, until they remove the install."""
    if install.status == ModelInstall.Status.READY:
        return True
    return install.status == ModelInstall.Status.FAILED and install.owner_id is None


def _install(install: ModelInstall, progress: _Reporter, archive: Path | None) -> InstalledModel:
    models = store()
    owner = install_owner(install.owner)
    if install.source == ModelInstall.Source.HUB:
        if settings.TRELLIS_OFFLINE:
            raise ModelInstallError(gettext_noop("this server is offline (TRELLIS_OFFLINE=1): it downloads no model; "
                                                 "install from a .zip or a local folder instead"), "offline")
        return models.install_hub(install.reference, kind=install.kind, name=install.name,
                                  revision=install.revision or None, progress=progress, owner=owner)
    if install.source == ModelInstall.Source.ZIP:
        if archive is None or not archive.is_file():
            raise ModelInstallError(gettext_noop("the uploaded archive is gone from the server; upload it again"),
                                    "missing_file")
        return models.install_zip(archive, kind=install.kind, name=install.name, original_name=install.reference,
                                  progress=progress, owner=owner)
    return models.install_folder(Path(install.reference), kind=install.kind, name=install.name, copy=install.copy,
                                 progress=progress, owner=owner)


def _json_context(context: dict[str, Any]) -> dict[str, Any]:
    return {key: value if isinstance(value, (str, int, float, bool)) or value is None else str(value)
            for key, value in context.items()}


def model_remove(*, name: str, user: AbstractBaseUser | None = None) -> InstalledModel:
    """Delete an installed model: administrators any (``user=None`` is the command line), a
    user their own private ones. Pipelines naming it are refused from then on, with how to
    install it again. Another user's private model is "not installed" to this user."""
    if user is not None and not user.is_staff:
        model = store().get(name)
        if model is None or model_hidden_from(user, model):
            raise _error("name", gettext_noop("no model named {name!r} is installed"), "not_installed", name=name)
        if model.owner is None:
            raise _error("name", gettext_noop("only administrators may remove a model every user shares"),
                         "forbidden")
    try:
        removed = store().remove(name)
    except ModelInstallError as exc:
        raise _error("name", exc.template, exc.code, **exc.context) from None
    with transaction.atomic():
        for install in ModelInstall.objects.filter(name=name, status=ModelInstall.Status.READY):
            ModelInstall.objects.filter(pk=install.pk).update(status=ModelInstall.Status.REMOVED)
            install.status = ModelInstall.Status.REMOVED
            publish_install(install)
    return removed


def _not_failed(install: ModelInstall, template: str) -> ConfigValidationError:
    return _error("status", template, "not_failed", status=str(ModelInstall.Status(install.status).label))


def model_install_retry(*, install: ModelInstall) -> ModelInstall:
    """Queue a failed install again, from the same source (the hub id and revision asked for,
    the uploaded archive kept since, or the folder), under the same name and kind. A hub
    download resumes from the files it had verified.

    Raises
    ------
    ConfigValidationError
        ``not_failed`` (``status``) for an install that has not failed; otherwise what asking
        for it anew would say now: the server offline, the name taken since, the archive gone
        (``file``), a folder install by someone no longer an administrator.
    """
    if install.status != ModelInstall.Status.FAILED:
        raise _not_failed(install, gettext_noop("only a failed install can be retried; this one's status is {status}"))
    if install.source == ModelInstall.Source.HUB and settings.TRELLIS_OFFLINE:
        raise _error("source", gettext_noop("this server is offline (TRELLIS_OFFLINE=1): it downloads no model; "
                                            "install from a .zip or a local folder instead"), "offline")
    if install.source == ModelInstall.Source.FOLDER and install.owner is not None and not install.owner.is_staff:
        raise _error("source", gettext_noop("only administrators may install from a folder on the server"),
                     "forbidden")
    archive = settings.DATA_DIR / install.archive if install.archive else None
    if install.source == ModelInstall.Source.ZIP and (archive is None or not archive.is_file()):
        raise _error("file", gettext_noop("the uploaded archive is gone from the server; remove this install and "
                                          "upload the file again"), "missing_file")
    _check_request(kind=install.kind, name=install.name)
    with transaction.atomic():
        # Only one of two simultaneous retries finds it failed; the other is told where it stands.
        queued = ModelInstall.objects.filter(pk=install.pk, status=ModelInstall.Status.FAILED).update(
            status=ModelInstall.Status.QUEUED, bytes_done=0, bytes_total=archive.stat().st_size if archive else 0,
            size=0, error="", error_code="", error_template="", error_context={}, started_at=None, finished_at=None)
        install.refresh_from_db()
        if not queued:
            raise _not_failed(install, gettext_noop("only a failed install can be retried; this one's status is {status}"))
        # A user's retry starts the count of crashed runs afresh, as a document's retry does.
        jobs.forget_crashes(install_subject(install.pk))
        publish_install(install)
        jobs.enqueue_on_commit(INSTALL_TASK, install_id=install.pk, owner=install.owner_id)
    return install


def model_install_delete(*, install: ModelInstall) -> None:
    """Remove a failed install: its record, the uploaded archive kept for a retry, and what a
    hub download kept to resume from (unless another install of the same hub id, anyone's, is
    queued, running or failed and may resume from it). An installed model is never touched,
    even one by the same name: that is ``model_remove``.

    Raises
    ------
    ConfigValidationError
        ``not_failed`` (``status``) for an install that has not failed.
    """
    if install.status != ModelInstall.Status.FAILED:
        raise _not_failed(install, gettext_noop("only a failed install can be removed from the list; this "
                                                "one's status is {status}"))
    with transaction.atomic():
        deleted, _ = ModelInstall.objects.filter(pk=install.pk, status=ModelInstall.Status.FAILED).delete()
        if not deleted:
            install.refresh_from_db()
            raise _not_failed(install, gettext_noop("only a failed install can be removed from the list; "
                                                    "this one's status is {status}"))
        jobs.forget_crashes(install_subject(install.pk))
        group, message = installs_group(install.owner_id), {"type": "model.install.deleted", "id": install.pk}
        transaction.on_commit(lambda: publish(group, message))
    if install.archive:
        (settings.DATA_DIR / install.archive).unlink(missing_ok=True)
    if install.source == ModelInstall.Source.HUB:
        still_wanted = ModelInstall.objects.filter(
            source=ModelInstall.Source.HUB, reference=install.reference,
            status__in=(*ModelInstall.ACTIVE, ModelInstall.Status.FAILED)).exists()
        if not still_wanted:
            store().discard_download(install.reference)


@jobs.recovery
def model_installs_requeue_interrupted() -> int:
    """Installs a crash cut short start again; a hub download resumes from the bytes it has.
    One a command started is marked failed instead: only that command could run it."""
    template = gettext_noop("the command that ran this install stopped before it finished; run it again")
    ModelInstall.objects.filter(status__in=ModelInstall.ACTIVE, owner__isnull=True).update(
        status=ModelInstall.Status.FAILED, finished_at=timezone.now(), error=template, error_code="interrupted",
        error_template=template, error_context={})
    interrupted = list(ModelInstall.objects.filter(status__in=ModelInstall.ACTIVE))
    requeued = 0
    for install in interrupted:
        subject = install_subject(install.pk)
        if jobs.crashed_too_often(subject):
            # Its load check crashed the server twice: a third try would crash it again.
            logger.error("installing model %s crashed the server %d times; failing it", install.name,
                         jobs.crashes(subject))
            _fail(install, jobs.CRASHED, "crashed", {})
            jobs.forget_crashes(subject)
            continue
        ModelInstall.objects.filter(pk=install.pk).update(status=ModelInstall.Status.QUEUED)
        jobs.enqueue_on_commit(INSTALL_TASK, install_id=install.pk, owner=install.owner_id)
        requeued += 1
    return requeued


def install_subject(install_id: int) -> str:
    """What the job runner counts an install's crashed runs by (``jobs.crashes``)."""
    return f"model-install:{install_id}"


def model_install_aborted(*, install_id: int, error: BaseException) -> None:
    """Fail an install whose run let ``error`` escape (``SystemExit`` from a model's code…)."""
    install = ModelInstall.objects.filter(pk=install_id, status__in=ModelInstall.ACTIVE).first()
    if install is not None:
        _fail(install, jobs.ABORTED, "aborted", {"error": type(error).__name__})
        if install.archive and _archive_done(install):
            (settings.DATA_DIR / install.archive).unlink(missing_ok=True)


def _fail(install: ModelInstall, template: str, code: str, context: dict[str, Any]) -> None:
    _Reporter(install).write(status=ModelInstall.Status.FAILED, finished_at=timezone.now(),
                             error=template.format(**context), error_code=code, error_template=template,
                             error_context=context)


__all__ = [
    "INSTALL_TASK",
    "install_subject",
    "install_snapshot",
    "installs_group",
    "model_install_request",
    "model_install_run",
    "model_install_aborted",
    "model_install_delete",
    "model_install_retry",
    "model_install_upload",
    "model_installs_requeue_interrupted",
    "model_remove",
    "publish_install",
]
