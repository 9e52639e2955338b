from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings
from django.db import close_old_connections, connections, transaction

logger = logging.getLogger(__name__)

TaskFunction = Callable[..., Any]
_tasks: dict[str, TaskFunction] = {}


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
    """Runs tasks on a small thread pool in this process."""

    def __init__(self, workers: int) -> None:
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="trellis-job")
        self._pending: set[Future] = set()
        self._lock = threading.Lock()

    def submit(self, name: str, kwargs: dict[str, Any]) -> None:
        future = self._executor.submit(self._run, name, kwargs)
        with self._lock:
            self._pending.add(future)
        future.add_done_callback(self._forget)

    def _forget(self, future: Future) -> None:
        with self._lock:
            self._pending.discard(future)

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
        deadline = threading.Event()
        timer = threading.Timer(timeout, deadline.set)
        timer.start()
        try:
            while not deadline.is_set():
                with self._lock:
                    pending = list(self._pending)
                if not pending:
                    return True
                for future in pending:
                    try:
                        future.result(timeout=0.05)
                    except Exception:
                        pass
            return False
        finally:
            timer.cancel()


class CeleryBackend:
    """Sends tasks to Celery workers through the broker at ``REDIS_URL``."""

    def submit(self, name: str, kwargs: dict[str, Any]) -> None:
        from .celery import app  # Celery loads only where it is used

        # Fire and forget: a task records its outcome itself (a document's status). Asking for
        # a result would also subscribe this process to it on Redis, and Celery's result
        # consumer gives up for good after a Redis outage ("must be restarted").
        app.send_task("jobs.run", args=[name, kwargs], ignore_result=True)

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


def enqueue(name: str, **kwargs: Any) -> None:
    """Run task ``name`` in the background now."""
    if name not in _tasks:
        raise RuntimeError(f"no task is registered as {name!r}")
    backend().submit(name, kwargs)


def enqueue_on_commit(name: str, **kwargs: Any) -> None:
    """Run task ``name`` once the current transaction commits (at once outside one), so the
    task never reads rows that are not there yet.

    A broker that cannot be reached then does not fail the request that already committed: the
    failure is logged, the work stays queued in the database, and the start-up recovery (or a
    retry) sends it again.
    """
    transaction.on_commit(lambda: enqueue(name, **kwargs), robust=True)


def wait_until_idle(timeout: float = 60.0) -> bool:
    return backend().wait_until_idle(timeout)
