"""Re-ranking a child's candidates with a sentence-transformers cross-encoder."""

from .retriever import SentenceTransformerCrossEncoderRetriever, cross_encoder_problem

__all__ = ["SentenceTransformerCrossEncoderRetriever", "cross_encoder_problem"]
