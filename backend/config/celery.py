"""The Celery application, used when REDIS_URL is set: workers run the same registered tasks
the embedded thread pool runs."""

import os

from celery import Celery
from celery.signals import worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("trellis")
app.config_from_object("django.conf:settings", namespace="CELERY")


@app.task(name="jobs.run")
def run(name: str, kwargs: dict) -> None:
    from jobs.registry import run_task

    run_task(name, kwargs)


@worker_ready.connect
def recover_interrupted_work(**_: object) -> None:
    from jobs.startup import recover_interrupted_work as recover

    recover()
