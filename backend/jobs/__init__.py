"""One task interface for background work (ingestion, evaluation).

Embedded default: a thread pool inside the server process, so the in-memory channel layer
carries the jobs' progress events; queued work is shared fairly between users. With
``REDIS_URL`` set: Celery workers. Callers see only ``task`` (register), ``enqueue`` and
``enqueue_on_commit``, and recoveries ask ``crashed_too_often`` before re-queuing work.
"""

from .registry import (
    ABORTED,
    CRASHED,
    MAX_CRASHES,
    Priority,
    crashed_too_often,
    crashes,
    enqueue,
    enqueue_on_commit,
    forget_crashes,
    task,
    wait_until_idle,
)
from .startup import recover_interrupted_work, recovery

__all__ = [
    "ABORTED",
    "CRASHED",
    "MAX_CRASHES",
    "Priority",
    "crashed_too_often",
    "crashes",
    "enqueue",
    "enqueue_on_commit",
    "forget_crashes",
    "recover_interrupted_work",
    "recovery",
    "task",
    "wait_until_idle",
]
