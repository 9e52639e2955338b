"""Embedding components: packaged offline models, any sentence-transformers model, and
OpenAI-compatible services."""

from .base import EmbeddingError, EmbeddingModel, EmbeddingParams, Tokenizer, normalise
from .defaults import DEFAULT_ENGLISH_EMBEDDING, DEFAULT_MULTILINGUAL_EMBEDDING, default_embedding_for_language
from .e5 import MultilingualE5SmallEmbedding
from .e5_tokenizer import E5Tokenizer
from .onnx_minilm import AllMiniLML6V2OnnxEmbedding
from .openai_compatible import OpenAICompatibleEmbedding
from .sentence_transformer import (
    AllMiniLML6V2Embedding,
    ParaphraseMultilingualMiniLML12V2Embedding,
    SentenceTransformerEmbedding,
)
from .shared import SharedModel, SharedModels, shared_models

__all__ = [
    "DEFAULT_ENGLISH_EMBEDDING",
    "DEFAULT_MULTILINGUAL_EMBEDDING",
    "AllMiniLML6V2Embedding",
    "AllMiniLML6V2OnnxEmbedding",
    "E5Tokenizer",
    "EmbeddingError",
    "EmbeddingModel",
    "EmbeddingParams",
    "MultilingualE5SmallEmbedding",
    "OpenAICompatibleEmbedding",
    "ParaphraseMultilingualMiniLML12V2Embedding",
    "SentenceTransformerEmbedding",
    "SharedModel",
    "SharedModels",
    "Tokenizer",
    "default_embedding_for_language",
    "normalise",
    "shared_models",
]
