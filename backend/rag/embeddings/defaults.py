"""Which embedding model a knowledge base gets when nobody chooses one."""

from __future__ import annotations

import copy
from typing import Any

DEFAULT_ENGLISH_EMBEDDING: dict[str, Any] = {"component": "AllMiniLML6V2OnnxEmbedding", "params": {}}
DEFAULT_MULTILINGUAL_EMBEDDING: dict[str, Any] = {"component": "MultilingualE5SmallEmbedding", "params": {}}


def default_embedding_for_language(language: str) -> dict[str, Any]:
    """The packaged model for a knowledge base in ``language`` (a BCP 47 tag such as ``"en"``,
    ``"es-CL"`` or ``"zh-Hant"``): all-MiniLM-L6-v2 (int8 ONNX) for English, multilingual-e5-small for
    anything else. Returns a fresh copy of the component reference."""
    primary = (language or "en").strip().replace("_", "-").split("-", 1)[0].lower()
    chosen = DEFAULT_ENGLISH_EMBEDDING if primary in ("en", "") else DEFAULT_MULTILINGUAL_EMBEDDING
    return copy.deepcopy(chosen)
