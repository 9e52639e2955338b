"""Trellis's retrieval engine: components, documents, retrievers, LLMs and strategies.

Plain Python with no Django import, usable and testable on its own.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    # ``rag.RAG`` without importing the whole engine on ``import rag``.
    if name == "RAG":
        from .api import RAG

        return RAG
    raise AttributeError(f"module 'rag' has no attribute {name!r}")
