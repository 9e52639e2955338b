"""The embedded job runner: work somebody waits for runs before background work queued earlier."""

from __future__ import annotations

import threading

import pytest

import jobs
from jobs.registry import ThreadPoolBackend

pytestmark = pytest.mark.integration

gate = threading.Event()
ran: list[str] = []


@jobs.task("tests.jobs.wait_at_the_gate")
def wait_at_the_gate() -> None:
    assert gate.wait(30), "the gate never opened"


@jobs.task("tests.jobs.record")
def record(label: str) -> None:
    ran.append(label)


def test_a_users_job_overtakes_queued_background_work_and_equal_priorities_keep_their_order():
    backend = ThreadPoolBackend(workers=1)
    gate.clear()
    ran.clear()
    backend.submit("tests.jobs.wait_at_the_gate", {})
    for number in range(3):
        backend.submit("tests.jobs.record", {"label": f"background {number}"}, jobs.Priority.BACKGROUND)
    backend.submit("tests.jobs.record", {"label": "upload 0"})
    backend.submit("tests.jobs.record", {"label": "upload 1"}, jobs.Priority.USER)
    assert not backend.wait_until_idle(0.2), "idle while a job still waits at the gate"
    gate.set()
    assert backend.wait_until_idle(30)
    assert ran == ["upload 0", "upload 1", "background 0", "background 1", "background 2"]


def test_a_failing_job_is_logged_and_the_worker_goes_on(caplog):
    backend = ThreadPoolBackend(workers=1)
    ran.clear()
    backend.submit("tests.jobs.record", {"wrong": "argument"})
    backend.submit("tests.jobs.record", {"label": "after the failure"})
    assert backend.wait_until_idle(30)
    assert ran == ["after the failure"]
    assert "background task tests.jobs.record failed" in caplog.text
