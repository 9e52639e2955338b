"""Re-ranking a child's candidates by asking an LLM for their order."""

from .retriever import LLMRerankRetriever, order_problems

__all__ = ["LLMRerankRetriever", "order_problems"]
