"""Retrievers: the contract, sparse and dense retrievers, fusion, re-rankers and the agentic ensemble."""

from .base import BaseRetriever, CompositeRetriever, Hit, RetrievalError, RetrieverParams

__all__ = ["BaseRetriever", "CompositeRetriever", "Hit", "RetrievalError", "RetrieverParams"]
