"""Daphne in a subprocess over the test database, for browser tests that need websockets
(pytest-django's live_server is WSGI and serves none)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT = 90


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


@pytest.fixture
def asgi_server(transactional_db, tmp_path):
    """``start()`` runs daphne on a free port against this test's (committed) database, data
    directory and keys, and returns its base URL; the server stops after the test.

    Start it once the test's data is in place and its background jobs are idle: on start the
    server re-queues documents it finds mid-ingestion. It runs with DEBUG on only so that static
    files are served from the build without a collectstatic step.
    """
    from django.conf import settings
    from django.db import connection

    started: list[tuple[subprocess.Popen, object]] = []

    def start() -> str:
        port = free_port()
        env = {
            **os.environ,
            "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
            "TRELLIS_DATA_DIR": str(settings.DATA_DIR),
            "SECRET_KEY": settings.SECRET_KEY,
            "TRELLIS_CREDENTIALS_KEY": settings.TRELLIS_CREDENTIALS_KEY,
            "DEBUG": "1",
            "PYTHONPATH": str(ROOT / "backend"),
            "DJANGO_SETTINGS_MODULE": "config.settings",
        }
        log = open(tmp_path / f"daphne-{port}.log", "wb")
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
        started.append((process, log))
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + START_TIMEOUT
        while not _answers(url + "/"):
            if process.poll() is not None or time.monotonic() > deadline:
                log.flush()
                output = (tmp_path / f"daphne-{port}.log").read_text(errors="replace")[-4000:]
                pytest.fail(f"daphne did not start on {url}:\n{output}")
            time.sleep(0.2)
        return url

    yield start

    for process, log in started:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
        log.close()
