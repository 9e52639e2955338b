from __future__ import annotations

import enum
import itertools
import logging
import queue
import threading
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections, transaction

logger = logging.getLogger(__name__)

TaskFunction = Callable[..., Any]
_tasks: dict[str, TaskFunction] = {}


class Priority(enum.IntEnum):
    """Which queued work runs first; lower runs sooner, and equal priorities run in order."""

    USER = 0
    """Work somebody is waiting for: an upload, a retry, an evaluation, an install."""
    BACKGROUND = 5
    """Work nobody is watching: re-queued after a restart, the demo's seeding. A user's upload
    made meanwhile starts as soon as a worker is free instead of after all of it."""


def task(name: str) -> Callable[[TaskFunction], TaskFunction]:
    """Register a background task under a stable name. Arguments must be JSON-serialisable,
    since Celery carries them between processes."""

    def decorate(function: TaskFunction) -> TaskFunction:
        if name in _tasks and _tasks[name] is not function:
            raise RuntimeError(f"task {name!r} is registered twice")
        _tasks[name] = function
        return function

    return decorate


def run_task(name: str, kwargs: dict[str, Any]) -> Any:
    """Run a registered task here and now (what every backend finally calls)."""
    try:
        function = _tasks[name]
    except KeyError:
        raise RuntimeError(f"no task is registered as {name!r}") from None
    return function(**kwargs)


class ThreadPoolBackend:
    """Runs tasks on a small pool of threads in this process, by priority."""

    def __init__(self, workers: int) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, str, dict[str, Any]]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._unfinished = 0
        self._changed = threading.Condition()
        # Daemon threads: work cut short at exit is picked up again on the next start.
        for number in range(workers):
            threading.Thread(target=self._work, name=f"trellis-job-{number}", daemon=True).start()

    def submit(self, name: str, kwargs: dict[str, Any], priority: Priority = Priority.USER) -> None:
        with self._changed:
            self._unfinished += 1
        self._queue.put((int(priority), next(self._order), name, kwargs))

    def _work(self) -> None:
        while True:
            _, _, name, kwargs = self._queue.get()
            try:
                self._run(name, kwargs)
            finally:
                with self._changed:
                    self._unfinished -= 1
                    self._changed.notify_all()

    @staticmethod
    def _run(name: str, kwargs: dict[str, Any]) -> None:
        close_old_connections()
        try:
            run_task(name, kwargs)
        except Exception:
            # A task records its own failure where the user sees it (a document's error);
            # what reaches here is a bug, logged with its traceback.
            logger.exception("background task %s failed", name)
        finally:
            connections.close_all()

    def wait_until_idle(self, timeout: float) -> bool:
        """Wait for every submitted task (including ones they submit); False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: self._unfinished == 0, timeout)


class CeleryBackend:
    """Sends tasks to Celery workers through the broker at ``REDIS_URL``."""

    def submit(self, name: str, kwargs: dict[str, Any], priority: Priority = Priority.USER) -> None:
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


def enqueue(name: str, *, priority: Priority = Priority.USER, **kwargs: Any) -> None:
    """Run task ``name`` in the background, before any queued work of a lower ``priority``."""
    if name not in _tasks:
        raise RuntimeError(f"no task is registered as {name!r}")
    backend().submit(name, kwargs, priority)


def enqueue_on_commit(name: str, *, priority: Priority = Priority.USER, **kwargs: Any) -> None:
    """Run task ``name`` once the current transaction commits (at once outside one), so the
    task never reads rows that are not there yet.

    A broker that cannot be reached then does not fail the request that already committed: the
    failure is logged, the work stays queued in the database, and the start-up recovery (or a
    retry) sends it again.
    """
    transaction.on_commit(lambda: enqueue(name, priority=priority, **kwargs), robust=True)


def wait_until_idle(timeout: float = 60.0) -> bool:
    return backend().wait_until_idle(timeout)
