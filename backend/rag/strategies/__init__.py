"""Strategies: how a question becomes an answer (NaiveRAG, CRAG, MapReduceRAG, routed)."""

from .base import Cancelled, RunContext, Strategy, StrategyError
from .crag import CRAG
from .map_reduce import MapReduceRAG
from .naive import NaiveRAG
from .routed import NO_MATCH, RouteBranch, RoutedStrategy
from .synthesizer import ResponseSynthesizer, detect_language

__all__ = [
    "CRAG",
    "NO_MATCH",
    "Cancelled",
    "MapReduceRAG",
    "NaiveRAG",
    "ResponseSynthesizer",
    "RouteBranch",
    "RoutedStrategy",
    "RunContext",
    "Strategy",
    "StrategyError",
    "detect_language",
]
