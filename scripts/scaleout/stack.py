#!/usr/bin/env python3
"""Trellis scaled out on one machine: the scale-out test's stack, also usable by hand.

Under one temporary directory and on free loopback ports it starts PostgreSQL (``initdb`` and
``postgres``, as the ``postgres`` user when run as root), Redis (no persistence), a Chroma
server (``chroma run`` from the chromadb package), migrates the database, then starts N daphne
servers and M Celery workers that share one environment (``DATABASE_URL``, ``REDIS_URL``,
``CHROMA_URL``, ``TRELLIS_DATA_DIR``, ``SECRET_KEY``, ``TRELLIS_CREDENTIALS_KEY``).
``Stack.stop()`` ends everything it started, in reverse order, and removes the directory; every
process is also told to exit if the process that started it dies (``PR_SET_PDEATHSIG``), so a
killed test run leaves nothing behind. PostgreSQL and Redis come from Debian's packages
(``scripts/scaleout/install-services.sh`` installs them).

    .venv/bin/python scripts/scaleout/stack.py [--servers 2] [--workers 2]   # runs until Ctrl-C
"""

from __future__ import annotations

import argparse
import base64
import ctypes
import glob
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PYTHON = ROOT / ".venv" / "bin" / "python"
HOST = "127.0.0.1"
# Variables of ours that must not leak from the caller's environment into the stack's processes.
OWN_VARIABLES = ("DATABASE_URL", "REDIS_URL", "CHROMA_URL", "TRELLIS_DATA_DIR", "TRELLIS_JOBS_BACKEND",
                 "TRELLIS_JOB_WORKERS", "SECRET_KEY", "TRELLIS_CREDENTIALS_KEY", "TRELLIS_CREDENTIALS_OLD_KEYS",
                 "DJANGO_SETTINGS_MODULE", "DEBUG", "ALLOWED_HOSTS")

_libc = ctypes.CDLL(None, use_errno=True)
_PR_SET_PDEATHSIG = 1


def _exit_with_parent() -> None:
    # Runs in the child between fork and exec (after any change of user, which would clear it).
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((HOST, 0))
        return probe.getsockname()[1]


def postgres_bindir() -> Path:
    """The newest PostgreSQL server installed from Debian's packages."""
    candidates = glob.glob("/usr/lib/postgresql/*/bin/initdb")
    if not candidates:
        raise StackError("PostgreSQL is not installed: run scripts/scaleout/install-services.sh "
                         "(make test-scaleout does)")
    return Path(max(candidates, key=lambda path: int(re.search(r"/(\d+)/bin/", path).group(1)))).parent


def redis_server() -> str:
    found = shutil.which("redis-server") or ("/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None)
    if not found:
        raise StackError("redis-server is not installed: run scripts/scaleout/install-services.sh "
                         "(make test-scaleout does)")
    return found


class StackError(RuntimeError):
    """A part of the stack could not be started; the message says which and shows its log."""


@dataclass
class Service:
    name: str
    popen: subprocess.Popen
    log: Path
    stop_signal: int = signal.SIGTERM


class Stack:
    """PostgreSQL, Redis, a Chroma server, ``servers`` daphne processes and ``workers`` Celery
    workers. Use as a context manager, or call ``start()`` and ``stop()``."""

    def __init__(self, *, servers: int = 2, workers: int = 2, keep: bool = False,
                 say: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True)) -> None:
        self.servers, self.workers, self.keep, self.say = servers, workers, keep, say
        self.base = Path(tempfile.mkdtemp(prefix="trellis-scaleout-"))
        # The postgres user must reach its data directory below this one.
        self.base.chmod(0o711)
        self.logs = self.base / "logs"
        self.logs.mkdir()
        self.data_dir = self.base / "data"
        self.services: list[Service] = []
        self.server_urls: list[str] = []
        self.worker_names: list[str] = []
        self.database_url = self.redis_url = self.chroma_url = ""
        self.env: dict[str, str] = {}
        self.timings: dict[str, float] = {}

    # -- lifecycle -----------------------------------------------------------------------------

    def __enter__(self) -> Stack:
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    def start(self) -> Stack:
        began = time.monotonic()
        self._timed("postgres", self._start_postgres)
        self._timed("redis", self._start_redis)
        self._timed("chroma", self._start_chroma)
        self.env = self._trellis_env()
        self._timed("migrate", self._migrate)
        self._timed("servers_and_workers", self._start_trellis)
        self.timings["total"] = round(time.monotonic() - began, 1)
        self.say(f"scale-out stack up in {self.timings['total']} s: servers {', '.join(self.server_urls)}; "
                 f"workers {', '.join(self.worker_names)}; logs in {self.logs}")
        return self

    def stop(self) -> None:
        """Stop every service, newest first (Trellis processes together, then Chroma, Redis,
        PostgreSQL); escalate to SIGKILL after a grace period."""
        trellis = [service for service in self.services if service.name.startswith(("server", "worker"))]
        self._stop_all(trellis, grace=20)
        for service in reversed([service for service in self.services if service not in trellis]):
            self._stop_all([service], grace=15)
        self.services.clear()
        if not self.keep:
            shutil.rmtree(self.base, ignore_errors=True)

    def stop_service(self, name: str) -> None:
        """Stop one service by name (e.g. ``redis``), as an outage would."""
        service = self.service(name)
        self._stop_all([service], grace=15)
        self.services.remove(service)

    def service(self, name: str) -> Service:
        for service in self.services:
            if service.name == name:
                return service
        raise KeyError(name)

    def tail(self, name: str, lines: int = 40) -> str:
        path = self.logs / f"{name}.log"
        if not path.exists():
            return ""
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])

    def rss_mb(self, name: str) -> float:
        """Resident memory of a service and its direct children (a Celery pool process), in MB."""
        pid = self.service(name).popen.pid
        try:
            children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
        except OSError:
            children = []
        total_kb = 0
        for process in [str(pid), *children]:
            try:
                status = Path(f"/proc/{process}/status").read_text()
            except OSError:
                continue
            total_kb += sum(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
        return round(total_kb / 1024, 1)

    def log_text(self, name: str) -> str:
        path = self.logs / f"{name}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    # -- the parts -----------------------------------------------------------------------------

    def _start_postgres(self) -> None:
        bindir = postgres_bindir()
        run_as = "postgres" if os.geteuid() == 0 else None  # initdb refuses to run as root
        pgdata = self.base / "postgres"
        pgdata.mkdir(mode=0o700)
        if run_as:
            shutil.chown(pgdata, run_as, run_as)
        with open(self.logs / "initdb.log", "wb") as log:
            done = subprocess.run([str(bindir / "initdb"), "-D", str(pgdata), "-U", "trellis", "-A", "trust",
                                   "-E", "UTF8", "--locale=C", "--no-sync"],
                                  user=run_as, cwd=pgdata, stdout=log, stderr=subprocess.STDOUT, check=False)
        if done.returncode:
            raise StackError("initdb failed:\n" + self.tail("initdb"))
        port = free_port()
        service = self._spawn("postgres", [
            str(bindir / "postgres"), "-D", str(pgdata), "-p", str(port), "-h", HOST,
            "-c", "unix_socket_directories=", "-c", "fsync=off", "-c", "synchronous_commit=off",
            "-c", "full_page_writes=off", "-c", "max_connections=200",
        ], user=run_as, cwd=pgdata, stop_signal=signal.SIGINT)  # SIGINT: PostgreSQL's fast shutdown

        import psycopg

        def create_database() -> bool:
            try:
                with psycopg.connect(host=HOST, port=port, user="trellis", dbname="postgres", connect_timeout=2,
                                     autocommit=True) as connection:
                    connection.execute("CREATE DATABASE trellis")
                return True
            except psycopg.OperationalError:
                return False

        self._wait_for(service, create_database, "PostgreSQL to accept connections", timeout=60)
        self.database_url = f"postgres://trellis@{HOST}:{port}/trellis"

    def start_redis(self) -> None:
        """Start Redis again on its port, after ``stop_service("redis")`` (an outage that ends)."""
        self._start_redis(port=int(self.redis_url.rsplit(":", 1)[1].split("/")[0]))

    def _start_redis(self, port: int | None = None) -> None:
        port = port or free_port()
        (self.base / "redis").mkdir(exist_ok=True)
        service = self._spawn("redis", [redis_server(), "--port", str(port), "--bind", HOST, "--save", "",
                                        "--appendonly", "no", "--dir", str(self.base / "redis"),
                                        "--daemonize", "no", "--loglevel", "warning"])
        import redis

        def pong() -> bool:
            try:
                return bool(redis.Redis(host=HOST, port=port, socket_connect_timeout=1).ping())
            except redis.RedisError:
                return False

        self._wait_for(service, pong, "Redis to answer PING", timeout=30)
        self.redis_url = f"redis://{HOST}:{port}/0"

    def _start_chroma(self) -> None:
        port = free_port()
        chroma = ROOT / ".venv" / "bin" / "chroma"
        service = self._spawn("chroma", [str(chroma), "run", "--path", str(self.base / "chroma"),
                                         "--host", HOST, "--port", str(port)])
        self.chroma_url = f"http://{HOST}:{port}"
        self._wait_for(service, lambda: _http_ok(f"{self.chroma_url}/api/v2/heartbeat"),
                       "the Chroma server's heartbeat", timeout=60)

    def _trellis_env(self) -> dict[str, str]:
        env = {key: value for key, value in os.environ.items() if key not in OWN_VARIABLES}
        env.update({
            "PYTHONPATH": str(ROOT / "backend"),
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "DEBUG": "0",
            "SECRET_KEY": secrets.token_urlsafe(50),
            "TRELLIS_CREDENTIALS_KEY": base64.urlsafe_b64encode(os.urandom(32)).decode(),
            "TRELLIS_DATA_DIR": str(self.data_dir),
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "CHROMA_URL": self.chroma_url,
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "ANONYMIZED_TELEMETRY": "False",
            "LOG_LEVEL": "INFO",
            "PYTHONUNBUFFERED": "1",
            # Persistent database connections, as docs/deploy.md recommends with PostgreSQL
            # (measured: chat load p50 time to first token 1.45 s -> 0.52 s).
            "DATABASE_CONN_MAX_AGE": os.environ.get("DATABASE_CONN_MAX_AGE", "60"),
        })
        return env

    def _migrate(self) -> None:
        self.data_dir.mkdir()
        with open(self.logs / "migrate.log", "wb") as log:
            done = subprocess.run([str(PYTHON), "manage.py", "migrate", "--noinput"], env=self.env, cwd=ROOT,
                                  stdout=log, stderr=subprocess.STDOUT, check=False, timeout=300)
        if done.returncode:
            raise StackError("migrate failed:\n" + self.tail("migrate"))

    def _start_trellis(self) -> None:
        servers = []
        for index in range(1, self.servers + 1):
            port = free_port()
            servers.append((self._spawn(f"server{index}", [
                str(PYTHON), "-m", "daphne", "-b", HOST, "-p", str(port), "--websocket_connect_timeout", "30",
                "config.asgi:application",
            ], env=self.env, cwd=ROOT), f"http://{HOST}:{port}"))
        workers = [self._spawn_worker(index) for index in range(1, self.workers + 1)]
        for service, url in servers:
            self._wait_for(service, lambda url=url: _http_ok(f"{url}/healthz"), f"{service.name} at {url}", timeout=120)
            self.server_urls.append(url)
        for service, name in workers:
            self._wait_for_worker(service, name)

    def add_worker(self) -> str:
        """Start one more Celery worker (``worker<n>``, named ``w<n>@host``); returns its name."""
        index = 1 + max((int(service.name[6:]) for service in self.services if service.name.startswith("worker")),
                        default=0)
        service, name = self._spawn_worker(index)
        self._wait_for_worker(service, name)
        return name

    def _spawn_worker(self, index: int) -> tuple[Service, str]:
        # Workers on one machine share its cores: torch threads per worker = cores / workers
        # (measured: a document ingests in ~3.4 s instead of ~5.4 s with two oversubscribed workers).
        threads = max(1, (os.cpu_count() or 1) // max(1, self.workers))
        service = self._spawn(f"worker{index}", [
            str(PYTHON), "-m", "celery", "-A", "jobs.celery", "worker", "--concurrency", "1",
            "-n", f"w{index}@%h", "--loglevel", "INFO",
        ], env={**self.env, "OMP_NUM_THREADS": str(threads)}, cwd=ROOT)
        return service, f"w{index}@{socket.gethostname()}"

    def _wait_for_worker(self, service: Service, name: str) -> None:
        self._wait_for(service, lambda: f"{name} ready." in self.log_text(service.name), f"Celery worker {name}",
                       timeout=120)
        self.worker_names.append(name)

    # -- helpers -------------------------------------------------------------------------------

    def _spawn(self, name: str, argv: list[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
               user: str | None = None, stop_signal: int = signal.SIGTERM) -> Service:
        log = self.logs / f"{name}.log"
        with open(log, "ab") as stream:
            popen = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stream, stderr=subprocess.STDOUT,
                                     env=env, cwd=cwd, user=user, start_new_session=True,
                                     preexec_fn=_exit_with_parent)
        service = Service(name, popen, log, stop_signal)
        self.services.append(service)
        return service

    def _wait_for(self, service: Service, ready: Callable[[], bool], what: str, *, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if service.popen.poll() is not None:
                raise StackError(f"{service.name} exited with {service.popen.returncode} while waiting for {what}:\n"
                                 + self.tail(service.name))
            if ready():
                return
            time.sleep(0.2)
        raise StackError(f"timed out after {timeout:g} s waiting for {what}:\n" + self.tail(service.name))

    def _timed(self, name: str, step: Callable[[], None]) -> None:
        began = time.monotonic()
        step()
        self.timings[name] = round(time.monotonic() - began, 1)

    @staticmethod
    def _stop_all(services: list[Service], *, grace: float) -> None:
        for service in services:
            _signal_group(service.popen, service.stop_signal)
        deadline = time.monotonic() + grace
        for service in services:
            try:
                service.popen.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(service.popen, signal.SIGKILL)
                service.popen.wait(10)
            # Children left in its process group (a Celery pool process, say) go too.
            _signal_group(service.popen, signal.SIGKILL)


def _signal_group(popen: subprocess.Popen, signum: int) -> None:
    try:
        os.killpg(popen.pid, signum)  # the group this service leads (start_new_session)
    except (ProcessLookupError, PermissionError):
        pass


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--servers", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (data, logs) after stopping")
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    with Stack(servers=args.servers, workers=args.workers, keep=args.keep) as stack:
        for key in ("DATABASE_URL", "REDIS_URL", "CHROMA_URL", "TRELLIS_DATA_DIR", "SECRET_KEY",
                    "TRELLIS_CREDENTIALS_KEY"):
            print(f"export {key}={stack.env[key]}")
        print("# servers: " + " ".join(stack.server_urls), flush=True)
        print("# Ctrl-C stops everything", flush=True)
        try:
            while all(service.popen.poll() is None for service in stack.services):
                time.sleep(1)
            print("a service exited; stopping the stack", file=sys.stderr)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
