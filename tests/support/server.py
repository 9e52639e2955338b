"""Trellis served the way ``make run`` serves it, for the tests that drive a real server.

``make run`` exports a few variables (the Makefile's ``export`` lines), collects the static files
with the production storage, and starts daphne with DEBUG off; settings read the secret key and
the credentials key from the data directory. ``make_run_environment`` rebuilds that environment
from the Makefile itself over a copy of the test process's own, without what a user never has
exported (DEBUG, SECRET_KEY, the keys, the test runner's variables).
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = sys.executable
START_TIMEOUT_S = 120

# Set by the test runner or by `make test`, never by a user who typed `make run`.
NOT_EXPORTED_BY_USERS = (
    "DEBUG", "SECRET_KEY", "TRELLIS_CREDENTIALS_KEY", "TRELLIS_DATA_DIR", "TRELLIS_DATASETS_DIR",
    "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE", "DATABASE_URL", "REDIS_URL", "CHROMA_URL",
    "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKE_TERMOUT", "MAKE_TERMERR", "PYTEST_CURRENT_TEST",
    "PYTEST_XDIST_WORKER", "TRELLIS_WARM_LOCAL_LLM",
)
_EXPORT = re.compile(r"^export\s+(\w+)\s*[:?]?=\s*(.*)$")


def makefile_exports() -> dict[str, str]:
    """The variables the Makefile exports to every command it runs (``$(CURDIR)`` resolved)."""
    exports = {}
    for line in (ROOT / "Makefile").read_text(encoding="utf-8").splitlines():
        match = _EXPORT.match(line.strip())
        if match:
            exports[match.group(1)] = match.group(2).strip().replace("$(CURDIR)", str(ROOT))
    return exports


def makefile_daphne_options() -> list[str]:
    """The options ``make run`` gives daphne (``DAPHNE_OPTIONS`` in the Makefile)."""
    found = re.search(r"^DAPHNE_OPTIONS\s*:?=\s*(.*)$", (ROOT / "Makefile").read_text(encoding="utf-8"), re.MULTILINE)
    return found.group(1).split() if found else []


def make_run_environment(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of the commands ``make run`` runs, over ``data_dir``."""
    environment = {name: value for name, value in os.environ.items() if name not in NOT_EXPORTED_BY_USERS}
    environment.update(makefile_exports())
    environment["TRELLIS_DATA_DIR"] = str(data_dir)
    environment.update(extra)
    return environment


def user_environment(data_dir: Path) -> dict[str, str]:
    """What a user's shell holds after ``make run``: nothing Trellis-specific exported, apart
    from pointing the data directory at the test's own (the user's is ``var/``)."""
    environment = {name: value for name, value in os.environ.items()
                   if name not in NOT_EXPORTED_BY_USERS and name not in makefile_exports()}
    environment["TRELLIS_DATA_DIR"] = str(data_dir)
    return environment


def collect_static(environment: Mapping[str, str]) -> None:
    """``manage.py collectstatic`` as ``make run`` runs it (the production storage)."""
    subprocess.run([PYTHON, "manage.py", "collectstatic", "--noinput", "-v", "0"], cwd=ROOT,
                   env=dict(environment), check=True, capture_output=True, timeout=300)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2):
            return True
    except urllib.error.HTTPError:
        return True
    except OSError:
        return False


def wait_until_serving(url: str, process: subprocess.Popen, log: Path, timeout_s: float = START_TIMEOUT_S) -> None:
    """Return once ``url`` answers; raise with the end of the server's log if it never does."""
    deadline = time.monotonic() + timeout_s
    while not answers(url):
        if process.poll() is not None or time.monotonic() > deadline:
            output = log.read_text(errors="replace")[-4000:] if log.exists() else ""
            raise RuntimeError(f"the server did not start on {url}:\n{output}")
        time.sleep(0.2)


def daphne_command(port: int) -> list[str]:
    """The server ``make run`` execs."""
    return [str(Path(PYTHON).parent / "daphne"), "-b", "127.0.0.1", "-p", str(port), *makefile_daphne_options(),
            "config.asgi:application"]


def stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
