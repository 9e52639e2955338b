"""The chat load check (bench/chat_load.py) at 100 concurrent conversations: a real daphne
server, 100 websockets asking at once, every answer arriving and stored as done."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[3]


def test_a_hundred_concurrent_chats_lose_no_message():
    # Without the tests' own outbound allow-list: the script allows its scripted LLM itself.
    environment = {name: value for name, value in os.environ.items() if name != "TRELLIS_OUTBOUND_ALLOW"}
    done = subprocess.run([sys.executable, "bench/chat_load.py", "--chats", "100", "--questions", "2"], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=environment)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    print(json.dumps(figures))
    assert (figures["completed"], figures["failed"], figures["lost"]) == (200, 0, 0), done.stderr[-3000:]
    assert figures["ttft_p95_ms"] > 0
