"""Sparse (keyword) retrieval: the bag-of-words converter and the BM25 index."""

from .bag_of_words import BagOfWordsConverter
from .bm25 import DELTA_VARIANT, VARIANTS, BM25Index, BM25Parameters, top_k_indices, variant_for_delta
from .retriever import BM25Retriever
from .storage import FORMAT_VERSION, BM25IndexError, BM25IndexNotFoundError
from .vocabulary import Vocabulary, count_tokens

__all__ = [
    "DELTA_VARIANT",
    "FORMAT_VERSION",
    "VARIANTS",
    "BM25Index",
    "BM25IndexError",
    "BM25IndexNotFoundError",
    "BM25Parameters",
    "BM25Retriever",
    "BagOfWordsConverter",
    "Vocabulary",
    "count_tokens",
    "top_k_indices",
    "variant_for_delta",
]
