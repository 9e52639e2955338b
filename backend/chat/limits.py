"""How far one user's questions may go: how many may be answered at once
(``TRELLIS_MAX_CONCURRENT_RUNS_PER_USER``), and what the chat says when a run is stopped at its
deadline or LLM-call budget (``rag.tracing.limits``, set from ``TRELLIS_RUN_DEADLINE_S`` and
``TRELLIS_RUN_MAX_LLM_CALLS``)."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model

from common.i18n import translate
from rag.core.i18n import gettext_noop
from rag.tracing import RunLimitExceeded, default_run_limits
from rag.tracing.limits import deadline_reached

from .models import Message, Run

TOO_MANY_RUNS = gettext_noop(
    "too many of your questions are being answered at once (the limit is {limit}); wait for one to finish or "
    "stop it, then ask again")
DEADLINE_GRACE_S = 5.0
"""How long past its deadline a run still busy in one step (a slow model call) is waited for
before the chat stops it and stores what it did so far."""


def run_slot_check(*, owner_id: int) -> None:
    """Raise ``ChatError`` (``too_many_runs``) when the user has as many questions being answered
    as they may; called in the transaction that records a new one. The user's row is locked, so
    two questions asked at once are counted one after the other."""
    from .services import ChatError

    limit = settings.TRELLIS_MAX_CONCURRENT_RUNS_PER_USER
    if limit <= 0:
        return
    get_user_model().objects.select_for_update().filter(pk=owner_id).values_list("pk", flat=True).first()
    running = Run.objects.filter(conversation__owner_id=owner_id, message__status=Message.Status.STREAMING).count()
    if running >= limit:
        raise ChatError(TOO_MANY_RUNS, code="too_many_runs", limit=limit)


def overdue_at() -> float | None:
    """When (``time.monotonic``) a run started now is stopped by the chat if its engine has not
    stopped it yet: its deadline, and some grace for the step it is in to return."""
    deadline = default_run_limits().deadline_s
    return None if deadline is None else time.monotonic() + deadline + DEADLINE_GRACE_S


def overdue_stop() -> RunLimitExceeded:
    return deadline_reached(default_run_limits().deadline_s or 0)


def stopped_by(state: dict[str, Any] | None) -> RunLimitExceeded | None:
    """The limit that stopped a run, from its trace (``stopped_by``), if one did."""
    stop = ((state or {}).get("trace") or {}).get("stopped_by")
    return RunLimitExceeded.from_dict(stop) if stop else None


def limit_message(stop: RunLimitExceeded, language: str | None) -> str:
    return translate(stop.template, stop.context, language, fallback=str(stop))
