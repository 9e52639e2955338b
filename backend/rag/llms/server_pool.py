"""A bounded pool of loaded model servers: at most so many, within so much memory, the least
recently used one let go of first, never one that is answering.

Each server in the pool is ``Pooled``: it knows its key, the memory it holds and how many
requests hold it now (``lease``). ``ServerPool.acquire`` gives the server a key names, or one
that can serve in its place, loading it when there is none; to make room it lets go of the
least recently used idle servers, closing them (``Pooled.close``), and when every server is
answering it waits for one to finish. A request that finds its server closed (it had it in
hand, not yet leased, when the pool let go of it) asks the pool again.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from rag.core.i18n import gettext_noop

from .base import LLMError

logger = logging.getLogger(__name__)

MB = 1024 * 1024


@dataclass(frozen=True)
class PoolLimits:
    """How many servers the pool may hold, and how many bytes in all (None: no memory limit)."""

    max_servers: int
    max_memory_bytes: int | None


class ServerPoolError(LLMError):
    """The pool cannot give a server now; ``template`` and ``context`` translate the message."""

    def __init__(self, template: str, code: str, **context: object) -> None:
        self.template, self.code, self.context = template, code, context
        super().__init__(template.format(**context))


TOO_LARGE = gettext_noop(
    "the local model {name} needs about {needed} MB even with the smallest context, more than the {limit} MB "
    "local models may use on this server (TRELLIS_LOCAL_LLM_MAX_MEMORY_MB)")
ALL_BUSY = gettext_noop(
    "every local model server this server may run ({count}) is busy answering; try again in a moment")


class Pooled:
    """What the pool keeps of each server: its ``key``, the ``memory_bytes`` it holds, its
    current ``leases``, when it was last used, and whether it was closed."""

    key: Any = None
    """Hashable; whatever the pool's user keys its servers by."""
    memory_bytes: int = 0
    leases: int = 0
    last_used: float = 0.0
    closed: bool = False
    _pool: ServerPool | None = None

    def close(self) -> None:
        """Free the server (called by the pool as it lets go of it, never while a request holds it)."""
        self.closed = True

    @contextmanager
    def lease(self) -> Iterator[bool]:
        """Hold this server for one request, so the pool does not close it meanwhile; yields
        False when it is closed already (ask the pool again)."""
        pool = self._pool
        if pool is None:
            yield not self.closed
            return
        alive = pool._take(self)
        try:
            yield alive
        finally:
            if alive:
                pool._give_back(self)


P = TypeVar("P", bound=Pooled)


class ServerPool(Generic[P]):
    """Servers by key within ``limits()`` (read at each load, so a change applies to the next).

    Parameters
    ----------
    limits : callable
        Returns the current ``PoolLimits``.
    wait_s : float
        How long a load waits for a busy server to finish when the pool is full of busy ones,
        and for requests in flight to end before a server let go of is closed.
    """

    def __init__(self, limits: Callable[[], PoolLimits], *, wait_s: float = 120.0) -> None:
        self.limits = limits
        self.wait_s = wait_s
        self._servers: dict[Any, P] = {}
        self._changed = threading.Condition()  # guards _servers, leases and last_used
        self._loading = threading.Lock()  # one load at a time; requests go on meanwhile

    # -- reading --------------------------------------------------------------------------

    def servers(self) -> list[P]:
        with self._changed:
            return list(self._servers.values())

    def find(self, serves: Callable[[Any], bool]) -> P | None:
        """The smallest server whose key ``serves`` accepts, without loading or touching it."""
        with self._changed:
            return self._smallest(serves)

    def memory_bytes(self) -> int:
        with self._changed:
            return sum(server.memory_bytes for server in self._servers.values())

    # -- acquiring ------------------------------------------------------------------------

    def acquire(self, key: Any, *, load: Callable[[], P], memory_bytes: int,
                serves: Callable[[Any], bool] | None = None) -> P:
        """The server under ``key`` (or the smallest one whose key ``serves`` accepts); else one
        ``load`` makes, expected to hold about ``memory_bytes``, once there is room for it.

        Raises ``ServerPoolError`` when every server is still answering after ``wait_s``."""
        serves = serves or (lambda other: other == key)
        found = self._touch(serves)
        if found is not None:
            return found
        with self._loading:
            found = self._touch(serves)  # loaded by another thread meanwhile
            if found is not None:
                return found
            self._make_room(memory_bytes)
            before = _resident_bytes()
            server = load()
            after = _resident_bytes()
            grown = after - before if before is not None and after is not None else 0
            with self._changed:
                server.key, server._pool = key, self
                # What the process grew by, when more than the estimate (weights repacked for
                # this CPU, buffers the estimate does not know): the pool counts what it holds.
                server.memory_bytes = max(memory_bytes, grown)
                server.last_used = time.monotonic()
                self._servers[key] = server
                self._let_go_beyond(self.limits(), keep=server)
                held, total = len(self._servers), sum(held.memory_bytes for held in self._servers.values())
            logger.info("loaded local model server %s (%d MB); %d held, %d MB", key, server.memory_bytes // MB,
                        held, total // MB)
            return server

    def clear(self) -> None:
        """Let go of every idle server and close it (tests, and an administrator's reset)."""
        with self._changed:
            for key in [key for key, server in self._servers.items() if server.leases == 0]:
                self._let_go(key)

    # -------------------------------------------------------------------------------------

    def _touch(self, serves: Callable[[Any], bool]) -> P | None:
        with self._changed:
            found = self._smallest(serves)
            if found is not None:
                found.last_used = time.monotonic()
            return found

    def _smallest(self, serves: Callable[[Any], bool]) -> P | None:
        fitting = [server for key, server in self._servers.items() if serves(key)]
        return min(fitting, key=lambda server: server.memory_bytes) if fitting else None

    def _make_room(self, needed: int) -> None:
        """Let go of idle servers, least recently used first, until a server of ``needed`` bytes
        fits; wait for busy ones to finish meanwhile."""
        deadline = time.monotonic() + self.wait_s
        with self._changed:
            while True:
                limits = self.limits()
                if self._fits(limits, needed):
                    return
                if (idle := self._least_recently_used_idle()) is not None:
                    self._let_go(idle.key)
                elif (left := deadline - time.monotonic()) > 0:
                    self._changed.wait(left)
                else:
                    raise ServerPoolError(ALL_BUSY, "local_models_busy", count=limits.max_servers)

    def _fits(self, limits: PoolLimits, needed: int) -> bool:
        """Whether one more server of ``needed`` bytes fits."""
        held = list(self._servers.values())
        if len(held) + 1 > max(limits.max_servers, 1):
            return False
        if limits.max_memory_bytes is None or not held:
            return True  # one server is always allowed: its context was fitted to the limit
        return sum(server.memory_bytes for server in held) + needed <= limits.max_memory_bytes

    def _let_go_beyond(self, limits: PoolLimits, keep: P) -> None:
        """After a load that took more than estimated: idle servers go until the pool is within
        its limits again."""
        while limits.max_memory_bytes is not None \
                and sum(server.memory_bytes for server in self._servers.values()) > limits.max_memory_bytes:
            idle = self._least_recently_used_idle(besides=keep)
            if idle is None:
                return
            self._let_go(idle.key)

    def _least_recently_used_idle(self, besides: P | None = None) -> P | None:
        idle = [server for server in self._servers.values() if server.leases == 0 and server is not besides]
        return min(idle, key=lambda server: server.last_used) if idle else None

    def _let_go(self, key: Any) -> None:
        """Drop an idle server from the pool and close it (called holding ``_changed``)."""
        server = self._servers.pop(key)
        server._pool = None
        logger.info("closing local model server %s (%d MB, least recently used)", key, server.memory_bytes // MB)
        try:
            server.close()
        except Exception:
            logger.warning("closing local model server %s failed", key, exc_info=True)

    def _take(self, server: P) -> bool:
        with self._changed:
            if server.closed or server._pool is not self:
                return False
            server.leases += 1
            server.last_used = time.monotonic()
            return True

    def _give_back(self, server: P) -> None:
        with self._changed:
            server.leases -= 1
            server.last_used = time.monotonic()
            self._changed.notify_all()


def _resident_bytes() -> int | None:
    """This process's resident memory (Linux), else None."""
    try:
        with open("/proc/self/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return None
