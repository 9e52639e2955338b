"""Settings the engine reads from the environment when no application configured them (the
Django app passes its settings in; ``RAG(...)`` and the benches run on these)."""

from __future__ import annotations

import os
from collections.abc import Mapping


def environment_number(name: str, default: float, environ: Mapping[str, str] | None = None) -> float:
    """``name``'s value as a number, ``default`` when it is unset or empty; a value that is not
    a number is a ``ValueError`` naming the variable."""
    raw = (os.environ if environ is None else environ).get(name, "").strip()
    if not raw:
        return default
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{name}={raw!r} is not a number") from None
