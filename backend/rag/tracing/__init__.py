"""Trace nodes: what each retriever invocation did, for the UI and the stored conversation; and
the limits of a run (its deadline and LLM-call budget), which its recorder keeps."""

from .limits import RunLimitExceeded, RunLimits, configure_run_limits, default_run_limits
from .nodes import TraceNode, TraceRecorder, current_recorder, recording, run_in_context

__all__ = ["RunLimitExceeded", "RunLimits", "TraceNode", "TraceRecorder", "configure_run_limits", "current_recorder",
           "default_run_limits", "recording", "run_in_context"]
