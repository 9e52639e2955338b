"""The scaled-out stack the scale-out tests run against: PostgreSQL, Redis, a Chroma server,
two daphne servers and two Celery workers on loopback (``scripts/scaleout/stack.py``), started
once for the module and stopped, also on failure, when it ends."""

from __future__ import annotations

import os
import sys

import pytest
from scripts.scaleout.stack import Stack


@pytest.fixture(scope="module")
def stack(request):
    # TRELLIS_SCALEOUT_KEEP=1 keeps the stack's directory (data and logs) for a look afterwards.
    with Stack(servers=2, workers=2, keep=os.environ.get("TRELLIS_SCALEOUT_KEEP") == "1") as running:
        failed_before = request.session.testsfailed
        yield running
        if request.session.testsfailed > failed_before:
            # Shown whatever the capture mode: CI's output is all there is to go on.
            with request.config.pluginmanager.getplugin("capturemanager").global_and_fixture_disabled():
                for log in sorted(running.logs.glob("*.log")):
                    print(f"\n----- last lines of {log.name} -----\n{running.tail(log.stem, 60)}", file=sys.stderr)
