"""Retrievers over child retrievers: fusion and the agentic ensemble."""

from .agentic import AgenticEnsembleRetriever, split_operations
from .ensemble import EnsembleRetriever, reciprocal_rank_fusion, weighted_fusion

__all__ = ["AgenticEnsembleRetriever", "EnsembleRetriever", "reciprocal_rank_fusion", "split_operations",
           "weighted_fusion"]
