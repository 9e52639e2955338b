"""Language models: OpenAI-compatible servers and the local llama.cpp model."""

from .base import LLM, Attempt, FunctionCallError, LLMError, Message, parse_arguments, schema_problems
from .local import LocalLLM
from .openai_compatible import OpenAICompatibleLLM

DEFAULT_LLM = {"component": "LocalLLM", "params": {}}
"""The default wherever the design says "the default LLM": the packaged local model."""

__all__ = [
    "DEFAULT_LLM",
    "LLM",
    "Attempt",
    "FunctionCallError",
    "LLMError",
    "LocalLLM",
    "Message",
    "OpenAICompatibleLLM",
    "parse_arguments",
    "schema_problems",
]
