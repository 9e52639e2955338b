from __future__ import annotations

import collections
import contextvars
import enum
import itertools
import logging
import threading
from collections.abc import Callable, Hashable
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections, transaction
from django.utils.translation import gettext_noop

logger = logging.getLogger(__name__)

TaskFunction = Callable[..., Any]
Subject = Callable[[dict[str, Any]], str]
"""The thing a task works on, from its arguments (``document:12``): what crashes are counted by."""
AbortHandler = Callable[[dict[str, Any], BaseException], None]
"""Records the failure of a run that ended with an exception the task did not handle."""

MAX_CRASHES = 2
"""A subject whose run the process died in this many times is failed, not re-queued again."""
CRASHED = gettext_noop("crashed the server while loading: the server stopped twice while working on it, so it is "
                       "not run again on its own (the server log has the details; retry once the cause is fixed)")
"""The reason recovery gives the work it fails instead of re-queuing (``crashed_too_often``)."""
ABORTED = gettext_noop("stopped with {error} and was failed (the server log has the details)")
"""The reason an ``on_abort`` handler gives: the task let ``{error}`` (its type) escape."""

_tasks: dict[str, TaskFunction] = {}
_subjects: dict[str, Subject] = {}
_abort_handlers: dict[str, AbortHandler] = {}
_running_owner: contextvars.ContextVar[Hashable] = contextvars.ContextVar("trellis_job_owner", default=None)


class Priority(enum.IntEnum):
    """Which queued work runs first; lower runs sooner, and equal priorities run in order."""

    USER = 0
    """Work somebody is waiting for: an upload, a retry, an evaluation, an install."""
    BACKGROUND = 5
    """Work nobody is watching: re-queued after a restart, the demo's seeding. A user's upload
    made meanwhile starts as soon as a worker is free instead of after all of it."""


def task(name: str, *, subject: Subject | None = None,
         on_abort: AbortHandler | None = None) -> Callable[[TaskFunction], TaskFunction]:
    """Register a background task under a stable name. Arguments must be JSON-serialisable,
    since Celery carries them between processes.

    ``subject(kwargs)`` names what the task works on; a run of a task that has one is recorded
    before it starts and forgotten when it ends (``crashes`` reads what a dead process left).
    ``on_abort(kwargs, exc)`` fails the work, where its user sees it, when the task lets an
    exception escape (``SystemExit`` included).
    """

    def decorate(function: TaskFunction) -> TaskFunction:
        if name in _tasks and _tasks[name] is not function:
            raise RuntimeError(f"task {name!r} is registered twice")
        _tasks[name] = function
        if subject is not None:
            _subjects[name] = subject
        if on_abort is not None:
            _abort_handlers[name] = on_abort
        return function

    return decorate


def run_task(name: str, kwargs: dict[str, Any]) -> Any:
    """Run a registered task here and now (what every backend finally calls)."""
    try:
        function = _tasks[name]
    except KeyError:
        raise RuntimeError(f"no task is registered as {name!r}") from None
    subject = _subjects[name](kwargs) if name in _subjects else None
    if subject is None:
        return function(**kwargs)
    _run_started(name, subject)
    try:
        return function(**kwargs)
    finally:
        # Returned or raised: either way this process lives to tell, so it was no crash.
        _run_ended(subject)


def abort_task(name: str, kwargs: dict[str, Any], exc: BaseException) -> None:
    """Let task ``name`` record that its run ended with ``exc``, which it did not handle."""
    handler = _abort_handlers.get(name)
    if handler is None:
        return
    try:
        handler(kwargs, exc)
    except Exception:
        logger.exception("recording the failure of background task %s failed", name)


def _run_started(name: str, subject: str) -> None:
    from django.db.models import F

    from .models import JobRun

    with transaction.atomic():
        run, created = JobRun.objects.get_or_create(subject=subject, defaults={"task": name, "started": 1})
        if not created:
            JobRun.objects.filter(pk=run.pk).update(task=name, started=F("started") + 1)


def _run_ended(subject: str) -> None:
    from .models import JobRun

    try:
        JobRun.objects.filter(subject=subject).delete()
    except Exception:
        logger.exception("could not note the end of the run of %s", subject)


def crashes(subject: str) -> int:
    """How many runs on ``subject`` started and never ended: the process died in them."""
    from .models import JobRun

    run = JobRun.objects.filter(subject=subject).first()
    return run.started if run is not None else 0


def crashed_too_often(subject: str) -> bool:
    """Whether recovery should fail ``subject`` rather than run it again (``MAX_CRASHES``)."""
    return crashes(subject) >= MAX_CRASHES


def forget_crashes(subject: str) -> None:
    """Start counting afresh (a user asked for another try, or the work was failed)."""
    from .models import JobRun

    JobRun.objects.filter(subject=subject).delete()


class FairQueue:
    """Queued jobs by priority, and within a priority shared fairly between owners: the next job
    is the oldest of the owner served longest ago (never served first), so owners take turns,
    each owner's jobs in their order. One user's import of 700 files then delays another
    user's single upload by one job, not 700."""

    def __init__(self) -> None:
        self._lanes: dict[int, dict[Hashable, collections.deque[tuple[str, dict[str, Any]]]]] = {}
        self._served: dict[Hashable, int] = {}
        self._turns = itertools.count()
        self._size = 0

    def __len__(self) -> int:
        return self._size

    def put(self, priority: int, owner: Hashable, item: tuple[str, dict[str, Any]]) -> None:
        self._lanes.setdefault(priority, {}).setdefault(owner, collections.deque()).append(item)
        self._size += 1

    def pop(self) -> tuple[Hashable, tuple[str, dict[str, Any]]]:
        """The next job and its owner."""
        priority = min(self._lanes)
        lanes = self._lanes[priority]
        owner = min(lanes, key=lambda candidate: self._served.get(candidate, -1))  # ties: who queued first
        item = lanes[owner].popleft()
        if not lanes[owner]:
            del lanes[owner]
            if not lanes:
                del self._lanes[priority]
        self._size -= 1
        self._served[owner] = next(self._turns)
        if len(self._served) > 10_000:  # owners with nothing queued are forgotten, oldest first
            waiting = {key for queued in self._lanes.values() for key in queued}
            for key in sorted(self._served, key=self._served.__getitem__)[:5_000]:
                if key not in waiting:
                    del self._served[key]
        return owner, item


class ThreadPoolBackend:
    """Runs tasks on a small pool of threads in this process, by priority, and within a
    priority in turn between owners (``FairQueue``)."""

    def __init__(self, workers: int) -> None:
        self._queue = FairQueue()
        self._unfinished = 0
        self._changed = threading.Condition()
        # Daemon threads: work cut short at exit is picked up again on the next start.
        for number in range(workers):
            threading.Thread(target=self._work, name=f"trellis-job-{number}", daemon=True).start()

    def submit(self, name: str, kwargs: dict[str, Any], priority: Priority = Priority.USER,
               owner: Hashable = None) -> None:
        with self._changed:
            self._unfinished += 1
            self._queue.put(int(priority), owner, (name, kwargs))
            self._changed.notify_all()

    def _work(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: len(self._queue) > 0)
                owner, (name, kwargs) = self._queue.pop()
            try:
                self._run(name, kwargs, owner)
            except BaseException:  # noqa: B036 - nothing a task raises may end a worker
                logger.exception("background task %s escaped its runner", name)
            finally:
                with self._changed:
                    self._unfinished -= 1
                    self._changed.notify_all()

    @staticmethod
    def _run(name: str, kwargs: dict[str, Any], owner: Hashable = None) -> None:
        close_old_connections()
        token = _running_owner.set(owner)
        try:
            run_task(name, kwargs)
        except BaseException as exc:  # noqa: B036 - SystemExit from a model's code must not end the worker
            # A task records its own failure where the user sees it (a document's error);
            # what reaches here is a bug, or SystemExit and the like: logged, and the task
            # fails its work with a reason.
            logger.exception("background task %s failed", name)
            abort_task(name, kwargs, exc)
        finally:
            _running_owner.reset(token)
            connections.close_all()

    def wait_until_idle(self, timeout: float) -> bool:
        """Wait for every submitted task (including ones they submit); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._unfinished == 0, timeout)


class CeleryBackend:
    """Sends tasks to Celery workers through the broker at ``REDIS_URL``.

    Jobs are not shared between owners there: the broker holds one queue per priority, and the
    workers take from it in order."""

    def submit(self, name: str, kwargs: dict[str, Any], priority: Priority = Priority.USER,
               owner: Hashable = None) -> None:
        from .celery import app  # Celery loads only where it is used

        # Fire and forget: a task records its outcome itself (a document's status). Asking for
        # a result would also subscribe this process to it on Redis, and Celery's result
        # consumer gives up for good after a Redis outage ("must be restarted").
        app.send_task("jobs.run", args=[name, kwargs], ignore_result=True, priority=int(priority))

    def wait_until_idle(self, timeout: float) -> bool:
        raise NotImplementedError("waiting for Celery workers is not supported; poll the job's result instead")


_backend: ThreadPoolBackend | CeleryBackend | None = None
_backend_lock = threading.Lock()


def backend() -> ThreadPoolBackend | CeleryBackend:
    global _backend
    with _backend_lock:
        if _backend is None:
            if settings.TRELLIS_JOBS_BACKEND == "celery":
                _backend = CeleryBackend()
            else:
                _backend = ThreadPoolBackend(settings.TRELLIS_JOB_WORKERS)
        return _backend


_UNSET: Any = object()


def enqueue(name: str, *, priority: Priority = Priority.USER, owner: Hashable = _UNSET, **kwargs: Any) -> None:
    """Run task ``name`` in the background, before any queued work of a lower ``priority``, in
    turn with other owners' work (``owner``: a user's id; by default the owner of the job that
    enqueues, else nobody's)."""
    if name not in _tasks:
        raise RuntimeError(f"no task is registered as {name!r}")
    if owner is _UNSET:
        owner = _running_owner.get()
    backend().submit(name, kwargs, priority, owner)


def enqueue_on_commit(name: str, *, priority: Priority = Priority.USER, owner: Hashable = _UNSET,
                      **kwargs: Any) -> None:
    """Run task ``name`` once the current transaction commits (at once outside one), so the
    task never reads rows that are not there yet.

    A broker that cannot be reached then does not fail the request that already committed: the
    failure is logged, the work stays queued in the database, and the start-up recovery (or a
    retry) sends it again.
    """
    if owner is _UNSET:
        owner = _running_owner.get()
    transaction.on_commit(lambda: enqueue(name, priority=priority, owner=owner, **kwargs), robust=True)


def wait_until_idle(timeout: float = 60.0) -> bool:
    return backend().wait_until_idle(timeout)
