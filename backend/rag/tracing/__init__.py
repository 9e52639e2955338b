"""Trace nodes: what each retriever invocation did, for the UI and the stored conversation."""

from .nodes import TraceNode, TraceRecorder, current_recorder, recording, run_in_context

__all__ = ["TraceNode", "TraceRecorder", "current_recorder", "recording", "run_in_context"]
