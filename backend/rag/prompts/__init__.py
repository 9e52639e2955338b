"""Prompt components: the texts LLM-driven components send, editable like any other setting."""

from .agentic import AgenticEnsemblePrompt

__all__ = ["AgenticEnsemblePrompt"]
