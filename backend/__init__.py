"""Lets scripts and notebooks at the repository root write ``from backend.rag import RAG``.

The engine's own imports say ``rag``; this makes ``backend.rag`` the very same module (not a
second copy, which would register every component twice).
"""

import sys
from pathlib import Path

_backend = str(Path(__file__).resolve().parent)
if _backend not in sys.path:
    sys.path.insert(0, _backend)

import rag  # noqa: E402

sys.modules[f"{__name__}.rag"] = rag
