"""Reads of the chat app; every function sees only the acting user's conversations."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from .models import Conversation, Message, Run


def conversation_list(*, user: AbstractBaseUser, origins: Collection[str] | None = None) -> QuerySet[Conversation]:
    """The user's conversations; with ``origins``, only those started there (``web``, ``api``, ``mcp``)."""
    conversations = Conversation.objects.filter(owner=user).select_related("pipeline")
    return conversations.filter(origin__in=origins) if origins is not None else conversations


def conversation_get(*, user: AbstractBaseUser, conversation_id: int) -> Conversation:
    """Raises ``Conversation.DoesNotExist`` for a missing id or another user's conversation."""
    return conversation_list(user=user).get(pk=conversation_id)


def message_list(*, conversation: Conversation) -> QuerySet[Message]:
    return conversation.messages.select_related("trace").order_by("created_at", "id")


def conversation_history(conversation: Conversation, *, turns: int) -> list[dict[str, str]]:
    """The last ``turns`` answered question–answer pairs, oldest first, as chat messages."""
    if turns <= 0:
        return []
    answered = list(conversation.messages.filter(role=Message.Role.ASSISTANT, status=Message.Status.DONE)
                    .order_by("-created_at", "-id")[:turns])
    history: list[dict[str, str]] = []
    for answer in reversed(answered):
        question = (conversation.messages.filter(role=Message.Role.USER, created_at__lte=answer.created_at,
                                                 id__lt=answer.id).order_by("-created_at", "-id").first())
        if question is not None:
            history += [{"role": "user", "content": question.text}, {"role": "assistant", "content": answer.text}]
    return history


def run_events(*, conversation: Conversation) -> tuple[int | None, list[dict[str, Any]]]:
    """The answer being written in ``conversation`` now (its message id, or None) and its
    events so far, in order."""
    run = Run.objects.filter(conversation=conversation).first()
    if run is None:
        return None, []
    return run.message_id, [event for batch in run.events.order_by("seq") for event in batch.events]


def conversation_summary(conversation: Conversation) -> dict[str, Any]:
    """A conversation as the REST list shows it (the ``Conversation`` schema), for live events."""
    pipeline = conversation.pipeline
    return {"id": conversation.pk, "title": conversation.title, "origin": conversation.origin,
            "pipeline": conversation.pipeline_id,
            "pipeline_name": pipeline.name if pipeline is not None else None,
            "created_at": _iso(conversation.created_at), "updated_at": _iso(conversation.updated_at)}


def _iso(moment: Any) -> str:
    # As DRF writes datetimes, so a live event and a REST response compare equal.
    return moment.isoformat().replace("+00:00", "Z")
