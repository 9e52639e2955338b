"""The Celery application, used when REDIS_URL is set: workers run the same registered tasks
the embedded thread pool runs.

    celery -A jobs.celery worker --concurrency 1 -n w1@%h

Celery's Django fix-up calls ``django.setup()`` in the worker, so every app's ``ready()``
registers its tasks (``knowledge.tasks``…); ``autodiscover_tasks`` also imports each installed
app's ``tasks`` module, for apps that leave that to Celery.
"""

import json
import logging
import os
import time

from celery import Celery
from celery.signals import worker_ready

from .registry import run_task
from .startup import recover_interrupted_work as recover

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

logger = logging.getLogger("jobs.workers")

app = Celery("trellis")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

RECOVERY_KEY = "trellis:jobs:recovery"
STARTING_KEY = "trellis:jobs:starting"
RECOVERY_WINDOW_S = 300
"""Workers starting within this many seconds of one that recovered leave recovery to it."""


@app.task(name="jobs.run", bind=True)
def run(self, name: str, kwargs: dict) -> None:
    began = time.monotonic()
    run_task(name, kwargs)
    # Which worker ran what, and for how long: for operators (and the scale-out test).
    logger.info("%s ran %s %s in %.2f s", self.request.hostname, name, json.dumps(kwargs, sort_keys=True),
                time.monotonic() - began)


def recovery_is_ours(hostname: str) -> bool:
    """Whether this starting worker should re-queue interrupted work.

    Only when no worker of an earlier start is alive: a live worker's in-progress documents are
    its own, and re-queuing them would supersede runs that are going fine. Workers starting
    together each note their name in a Redis set (kept ``RECOVERY_WINDOW_S``); the first to take a
    Redis key recovers, and the others do not. The set is read after the ping, which waits a
    second for replies, so a worker that answered the ping because it started a moment earlier
    has noted itself by then and is not mistaken for a live pool.
    """
    import redis
    from django.conf import settings

    client = redis.Redis.from_url(settings.REDIS_URL)
    try:
        with client.pipeline() as pipeline:
            pipeline.sadd(STARTING_KEY, hostname).expire(STARTING_KEY, RECOVERY_WINDOW_S).execute()
        if not client.set(RECOVERY_KEY, hostname, nx=True, ex=RECOVERY_WINDOW_S):
            holder = client.get(RECOVERY_KEY)
            logger.info("%s: %s started recovery moments ago; not recovering again", hostname,
                        holder.decode() if holder else "another worker")
            return False
        alive = {name for reply in app.control.ping(timeout=1.0) for name in reply}
        starting = {name.decode() for name in client.smembers(STARTING_KEY)}
    finally:
        client.close()
    others = sorted(alive - starting - {hostname})
    if others:
        logger.info("%s: other workers are alive (%s); their work in progress is theirs, nothing re-queued",
                    hostname, ", ".join(others))
        return False
    return True


@worker_ready.connect
def recover_interrupted_work(sender: object = None, **_: object) -> None:
    hostname = getattr(sender, "hostname", None) or "this worker"
    try:
        ours = recovery_is_ours(hostname)
    except Exception:
        logger.exception("%s: could not decide whether to recover interrupted work; skipping it", hostname)
        return
    if ours:
        count = recover()
        logger.info("%s: first worker up; re-queued %d interrupted item(s)", hostname, count)
