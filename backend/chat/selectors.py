"""Reads of the chat app; every function sees only the acting user's conversations."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from .models import Conversation, Message


def conversation_list(*, user: AbstractBaseUser) -> QuerySet[Conversation]:
    return Conversation.objects.filter(owner=user).select_related("pipeline")


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
