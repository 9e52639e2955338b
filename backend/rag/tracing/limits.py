"""How far one run may go: a wall-clock deadline and a budget of LLM calls.

A run's ``TraceRecorder`` holds its limits. Every LLM call made while the recorder is current is
counted through it (nested agentic children included: they record into the same recorder), and
the call past the budget, or any call or step after the deadline, raises ``RunLimitExceeded``.
From then on every check of the run raises it again, so a component that swallowed the error
cannot keep the run going. The trace says which limit stopped the run (``stopped_by``).

A process's default limits are those ``configure_run_limits`` set (the Django app passes its
settings), else the environment's: ``TRELLIS_RUN_DEADLINE_S`` (300) and
``TRELLIS_RUN_MAX_LLM_CALLS`` (40); ``0`` turns a limit off.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rag.core import TrellisError
from rag.core.environment import environment_number
from rag.core.i18n import gettext_noop

DEFAULT_DEADLINE_S = 300.0
DEFAULT_MAX_LLM_CALLS = 40

DEADLINE_REACHED = gettext_noop(
    "this run was stopped after {seconds} seconds, the longest a run may take here; what it did so far is "
    "in its trace")
BUDGET_SPENT = gettext_noop(
    "this run was stopped at its limit of {calls} language-model calls; what it did so far is in its trace")


@dataclass(frozen=True)
class RunLimits:
    """The limits of one run; ``None`` is no limit.

    Parameters
    ----------
    deadline_s : float or None
        Seconds from the run's start after which no step, token or LLM call may begin.
    max_llm_calls : int or None
        LLM calls the whole run may make, nested retrievers' included.
    """

    deadline_s: float | None = None
    max_llm_calls: int | None = None

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] | None = None) -> RunLimits:
        """``TRELLIS_RUN_DEADLINE_S`` and ``TRELLIS_RUN_MAX_LLM_CALLS``, with their defaults."""
        return cls.of(deadline_s=environment_number("TRELLIS_RUN_DEADLINE_S", DEFAULT_DEADLINE_S, environ),
                      max_llm_calls=int(environment_number("TRELLIS_RUN_MAX_LLM_CALLS", DEFAULT_MAX_LLM_CALLS,
                                                           environ)))

    @classmethod
    def of(cls, *, deadline_s: float | None, max_llm_calls: int | None) -> RunLimits:
        """Limits from settings, where 0 (or less) means no limit."""
        return cls(deadline_s=float(deadline_s) if deadline_s and deadline_s > 0 else None,
                   max_llm_calls=int(max_llm_calls) if max_llm_calls and max_llm_calls > 0 else None)


class RunLimitExceeded(TrellisError):
    """A run reached one of its limits (``limit``: ``deadline`` or ``llm_calls``); the message
    says which, and ``template``/``context`` translate it."""

    code = "run_limit"

    def __init__(self, limit: str, template: str, setting: str, **context: Any) -> None:
        self.limit, self.template, self.setting, self.context = limit, template, setting, context
        super().__init__(template.format(**context))

    def again(self) -> RunLimitExceeded:
        """The same stop, as a new exception (one instance must not be raised on two threads)."""
        return RunLimitExceeded(self.limit, self.template, self.setting, **self.context)

    def to_dict(self) -> dict[str, Any]:
        """What the trace's ``stopped_by`` holds."""
        return {"limit": self.limit, "setting": self.setting, "message": str(self), **self.context}

    @classmethod
    def from_dict(cls, stopped_by: Mapping[str, Any]) -> RunLimitExceeded:
        """The stop a trace's ``stopped_by`` records (to say it again, in another language)."""
        context = {key: value for key, value in stopped_by.items() if key not in ("limit", "setting", "message")}
        template = {"deadline": DEADLINE_REACHED, "llm_calls": BUDGET_SPENT}[stopped_by["limit"]]
        return cls(stopped_by["limit"], template, stopped_by.get("setting", ""), **context)


def deadline_reached(seconds: float) -> RunLimitExceeded:
    return RunLimitExceeded("deadline", DEADLINE_REACHED, "TRELLIS_RUN_DEADLINE_S", seconds=_whole(seconds))


def budget_spent(calls: int) -> RunLimitExceeded:
    return RunLimitExceeded("llm_calls", BUDGET_SPENT, "TRELLIS_RUN_MAX_LLM_CALLS", calls=calls)


_configured: RunLimits | None = None


def configure_run_limits(limits: RunLimits | None) -> None:
    """Set this process's default run limits (None: back to the environment's)."""
    global _configured
    _configured = limits


def default_run_limits() -> RunLimits:
    """The limits a run gets unless it is given its own."""
    return _configured if _configured is not None else RunLimits.from_environment()


def _whole(seconds: float) -> float | int:
    return int(seconds) if float(seconds).is_integer() else round(seconds, 3)
