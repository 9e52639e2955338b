"""Language models: OpenAI-compatible servers and the local llama.cpp model."""

from .base import (
    GRAMMAR_LIMITS,
    LLM,
    Attempt,
    FunctionCallError,
    LLMError,
    Message,
    ReadingDefaults,
    estimate_tokens,
    parse_arguments,
    schema_problems,
)
from .local import ANSWER_MODEL, LocalLLM
from .openai_compatible import OpenAICompatibleLLM

DEFAULT_LLM = {"component": "LocalLLM", "params": {}}
"""The default wherever the design says "the default LLM": the packaged local model (the 0.5B,
fast enough for the several calls of re-ranking, agentic plans and grading)."""
ANSWER_LLM = {"component": "LocalLLM", "params": {"model": ANSWER_MODEL}}
"""The default model that writes answers: one call per question, where the 1.5B's better reading
is worth its slower speed."""

__all__ = [
    "ANSWER_LLM",
    "GRAMMAR_LIMITS",
    "ANSWER_MODEL",
    "DEFAULT_LLM",
    "LLM",
    "Attempt",
    "FunctionCallError",
    "LLMError",
    "LocalLLM",
    "Message",
    "OpenAICompatibleLLM",
    "ReadingDefaults",
    "estimate_tokens",
    "parse_arguments",
    "schema_problems",
]
