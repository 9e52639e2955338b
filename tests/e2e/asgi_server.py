"""Daphne in a subprocess over the test database, started as ``make run`` starts it: DEBUG off,
the static files collected with the production storage, the secret key and the credentials key
read from the data directory (pytest-django's live_server is WSGI, DEBUG-dependent, and serves
no websockets)."""

from __future__ import annotations

import subprocess

import pytest

from tests.support.server import ROOT, daphne_command, free_port, make_run_environment, stop, wait_until_serving


@pytest.fixture
def asgi_server(transactional_db, collected_static, tmp_path):
    """``start(**environment)`` runs daphne on a free port against this test's (committed)
    database and data directory, with ``environment`` added (``HF_ENDPOINT=...``), and returns its
    base URL; the server stops after the test.

    Start it once the test's data is in place and its background jobs are idle: on start the
    server re-queues documents it finds mid-ingestion.
    """
    from django.conf import settings
    from django.db import connection

    started: list[tuple[subprocess.Popen, object]] = []

    def start(**extra: str) -> str:
        port = free_port()
        # The one setting make run does not have: this test's own database file.
        environment = make_run_environment(
            settings.DATA_DIR, DATABASE_URL=f"sqlite:///{connection.settings_dict['NAME']}",
            TRELLIS_WARM_LOCAL_LLM="1", **extra,
        )
        log_path = tmp_path / f"daphne-{port}.log"
        log = open(log_path, "wb")  # noqa: SIM115  (open while the server runs; closed when it stops)
        process = subprocess.Popen(daphne_command(port), cwd=ROOT, env=environment, stdout=log,
                                   stderr=subprocess.STDOUT)
        started.append((process, log))
        url = f"http://127.0.0.1:{port}"
        try:
            wait_until_serving(url + "/", process, log_path)
        except RuntimeError as exc:
            pytest.fail(str(exc))
        return url

    yield start

    for process, log in started:
        stop(process)
        log.close()
