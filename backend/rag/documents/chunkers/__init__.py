"""Chunker components: cutting a document's sections into the chunks that get indexed."""

from .base import ChunkDraft, Chunker
from .recursive import DEFAULT_SEPARATORS, SENTENCE_END, RecursiveCharacterChunker
from .tokens import HuggingFaceTokenizer, TokenChunker, Tokenizer

__all__ = [
    "DEFAULT_SEPARATORS",
    "SENTENCE_END",
    "ChunkDraft",
    "Chunker",
    "HuggingFaceTokenizer",
    "RecursiveCharacterChunker",
    "TokenChunker",
    "Tokenizer",
]
