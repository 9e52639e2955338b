"""Retrievers over child retrievers: fusion (and, later, the agentic ensemble)."""

from .ensemble import EnsembleRetriever, reciprocal_rank_fusion, weighted_fusion

__all__ = ["EnsembleRetriever", "reciprocal_rank_fusion", "weighted_fusion"]
