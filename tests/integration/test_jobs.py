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


# -- issue 38: SystemExit does not end a worker; jobs are shared fairly between owners ----------

aborted: list[tuple[dict, str]] = []


@jobs.task("tests.jobs.exit", on_abort=lambda kwargs, exc: aborted.append((kwargs, type(exc).__name__)))
def exit_like_a_models_code(kind: str) -> None:
    raise {"SystemExit": SystemExit(2), "KeyboardInterrupt": KeyboardInterrupt()}[kind]


@pytest.mark.parametrize("kind", ["SystemExit", "KeyboardInterrupt"])
def test_a_job_raising_systemexit_fails_with_its_reason_and_the_worker_goes_on(kind, caplog):
    backend = ThreadPoolBackend(workers=1)
    ran.clear()
    aborted.clear()
    backend.submit("tests.jobs.exit", {"kind": kind})
    backend.submit("tests.jobs.record", {"label": "after the exit"})
    assert backend.wait_until_idle(10), "the worker thread ended: the next job never ran"
    assert ran == ["after the exit"]
    assert aborted == [({"kind": kind}, kind)], "the job's own failure handler was not told"
    assert "background task tests.jobs.exit failed" in caplog.text


def test_one_owners_long_import_does_not_hold_back_anothers_single_upload():
    """50 jobs of owner A are queued, then 1 of owner B: B's runs within the first 2 jobs."""
    backend = ThreadPoolBackend(workers=1)
    gate.clear()
    ran.clear()
    backend.submit("tests.jobs.wait_at_the_gate", {}, owner="alice")
    for number in range(49):
        backend.submit("tests.jobs.record", {"label": f"alice {number}"}, owner="alice")
    backend.submit("tests.jobs.record", {"label": "bob"}, owner="bob")
    backend.submit("tests.jobs.record", {"label": "carol"}, owner="carol")
    gate.set()
    assert backend.wait_until_idle(30)
    # The gate was alice's first job; then each owner in turn, each owner's jobs in order.
    assert ran[:3] == ["bob", "carol", "alice 0"], ran[:5]
    assert ran[3:] == [f"alice {number}" for number in range(1, 49)]


def test_within_a_priority_owners_take_turns_and_a_users_work_still_comes_before_background_work():
    backend = ThreadPoolBackend(workers=1)
    gate.clear()
    ran.clear()
    backend.submit("tests.jobs.wait_at_the_gate", {})
    for number in range(3):
        backend.submit("tests.jobs.record", {"label": f"recovered {number}"}, jobs.Priority.BACKGROUND, owner="alice")
    for number in range(3):
        backend.submit("tests.jobs.record", {"label": f"alice {number}"}, owner="alice")
    for number in range(2):
        backend.submit("tests.jobs.record", {"label": f"bob {number}"}, owner="bob")
    gate.set()
    assert backend.wait_until_idle(30)
    assert ran == ["alice 0", "bob 0", "alice 1", "bob 1", "alice 2",
                   "recovered 0", "recovered 1", "recovered 2"]
