"""One task interface for background work (ingestion, evaluation).

Embedded default: a thread pool inside the server process, so the in-memory channel layer
carries the jobs' progress events. With ``REDIS_URL`` set: Celery workers. Callers see only
``task`` (register), ``enqueue`` and ``enqueue_on_commit``.
"""

from .registry import Priority, enqueue, enqueue_on_commit, task, wait_until_idle
from .startup import recover_interrupted_work, recovery

__all__ = ["Priority", "enqueue", "enqueue_on_commit", "recover_interrupted_work", "recovery", "task", "wait_until_idle"]
