"""The components that fill a strategy's slots: query transformers, relevance filters and
evaluators, re-rankers, web retrievers, routers and classifiers (contracts in ``..slots``)."""

from .classifiers import KeywordClassifier, RegexClassifier
from .query import HyDETransformer, MultiQueryTransformer
from .relevance import LLMRelevanceEvaluator, LLMRelevanceFilter, SimilarityThresholdFilter, judge_relevance
from .rerankers import CrossEncoderReranker, LLMReranker, RerankError
from .routers import EmbeddingSimilarityRouter, LLMRouter
from .similarity import cosine_similarities, question_similarities
from .web import SearxngWebRetriever, WebSearchAPIRetriever, WebSearchError, url_chunk_id

__all__ = [
    "CrossEncoderReranker",
    "EmbeddingSimilarityRouter",
    "HyDETransformer",
    "KeywordClassifier",
    "LLMRelevanceEvaluator",
    "LLMRelevanceFilter",
    "LLMReranker",
    "LLMRouter",
    "MultiQueryTransformer",
    "RegexClassifier",
    "RerankError",
    "SearxngWebRetriever",
    "SimilarityThresholdFilter",
    "WebSearchAPIRetriever",
    "WebSearchError",
    "cosine_similarities",
    "judge_relevance",
    "question_similarities",
    "url_chunk_id",
]
