"""Work left half-done by a crash is picked up again when a server or worker starts."""

from __future__ import annotations

import logging
from collections.abc import Callable

logger = logging.getLogger(__name__)
_recoveries: list[Callable[[], int]] = []


def recovery(function: Callable[[], int]) -> Callable[[], int]:
    """Register a function that re-queues interrupted work and returns how much it re-queued."""
    _recoveries.append(function)
    return function


def recover_interrupted_work() -> int:
    total = 0
    for function in _recoveries:
        try:
            count = function()
        except Exception:
            logger.exception("recovery %s failed", function.__qualname__)
            continue
        if count:
            logger.info("%s re-queued %d item(s)", function.__qualname__, count)
        total += count
    return total
