"""Writes of the chat app: conversations and the life of one question and its answer."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

import jobs
from pipelines.models import Pipeline
from pipelines.runtime import pipeline_readiness, pipeline_strategy
from config.i18n import translate
from rag.core import TrellisError
from rag.core.i18n import gettext_noop
from rag.strategies import Strategy, StrategyError
from rag.strategies.traces import agentic_rounds

from .models import Conversation, Message, Trace
from .selectors import conversation_history

TITLE_LENGTH = 80


class ChatError(TrellisError):
    """A question that cannot be asked now; the message says why (``template`` and ``context``
    translate it)."""

    def __init__(self, template: str, **context: Any) -> None:
        self.template, self.context = template, context
        super().__init__(template.format(**context))

    def translated(self, language: str | None) -> str:
        return translate(self.template, self.context, language, fallback=str(self))


def conversation_create(*, owner: AbstractBaseUser, pipeline: Pipeline | None = None, title: str = "") -> Conversation:
    return Conversation.objects.create(owner=owner, pipeline=pipeline, title=title)


def conversation_update(*, conversation: Conversation, title: str | None = None,
                        pipeline: Pipeline | None = None) -> Conversation:
    if title is not None:
        conversation.title = title
    if pipeline is not None:
        conversation.pipeline = pipeline
    conversation.save()
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    conversation.delete()


@dataclass
class Turn:
    """One question being answered."""

    question: Message
    answer: Message
    pipeline: Pipeline
    history: list[dict[str, str]]
    started: float = field(default_factory=time.perf_counter)
    first_token_ms: float | None = None

    def timings(self) -> dict[str, Any]:
        return {"first_token_ms": self.first_token_ms,
                "total_ms": round((time.perf_counter() - self.started) * 1000, 1)}

    def strategy(self) -> Strategy:
        return pipeline_strategy(self.pipeline)


def chat_turn_start(*, conversation: Conversation, question: str, pipeline: Pipeline | None = None) -> Turn:
    """Record the question and an empty answer (``streaming``) for ``pipeline`` (default: the
    conversation's). Raises ``ChatError`` when no pipeline is chosen or it is not ready."""
    question = question.strip()
    if not question:
        raise ChatError(gettext_noop("the question is empty"))
    pipeline = pipeline or conversation.pipeline
    if pipeline is None:
        raise ChatError(gettext_noop("choose a pipeline for this conversation first"))
    readiness = pipeline_readiness(pipeline)
    if not readiness.ready:
        raise ChatError(gettext_noop("the pipeline {name!r} cannot answer yet: {reasons}"), name=pipeline.name,
                        reasons="; ".join(readiness.reasons()))
    history = conversation_history(conversation, turns=settings.TRELLIS_CHAT_HISTORY_TURNS)
    with transaction.atomic():
        asked = Message.objects.create(conversation=conversation, role=Message.Role.USER, text=question,
                                       pipeline=pipeline)
        answer = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT,
                                        status=Message.Status.STREAMING, pipeline=pipeline)
        conversation.pipeline = pipeline
        if not conversation.title:
            conversation.title = question[:TITLE_LENGTH]
        conversation.save()
    return Turn(asked, answer, pipeline, history)


def _finish(turn: Turn, *, status: str, text: str, citations: list, trace: dict, chunks: list,
            error: str = "") -> Message:
    answer = turn.answer
    with transaction.atomic():
        Message.objects.filter(pk=answer.pk).update(status=status, text=text, citations=citations, error=error,
                                                    timings=turn.timings())
        Trace.objects.update_or_create(message_id=answer.pk, defaults={
            "trace": trace, "rounds": agentic_rounds(trace), "chunks": chunks})
    answer.refresh_from_db()
    return answer


def chat_turn_complete(*, turn: Turn, state: dict[str, Any]) -> Message:
    return _finish(turn, status=Message.Status.DONE, text=state["response"], citations=state["citations"],
                   trace=state["trace"], chunks=state["chunks_sent"])


def chat_turn_fail(*, turn: Turn, error: str, state: dict[str, Any] | None = None) -> Message:
    state = state or {}
    return _finish(turn, status=Message.Status.FAILED, text=state.get("response", ""), citations=[],
                   trace=state.get("trace", {}), chunks=state.get("chunks_sent", []), error=error)


def chat_turn_cancel(*, turn: Turn, text: str, trace: dict[str, Any] | None = None) -> Message:
    return _finish(turn, status=Message.Status.CANCELLED, text=text, citations=[], trace=trace or {}, chunks=[])


def answer_payload(message: Message) -> dict[str, Any]:
    """The ``answer.completed`` payload of a finished answer (DESIGN §8)."""
    trace = getattr(message, "trace", None)
    return {"message_id": message.pk, "answer": message.text, "citations": message.citations,
            "trace": trace.trace if trace else {}}


def chat_ask(*, conversation: Conversation, question: str, pipeline: Pipeline | None = None) -> Message:
    """Ask and wait for the whole answer (the REST fallback of the websocket)."""
    turn = chat_turn_start(conversation=conversation, question=question, pipeline=pipeline)
    try:
        state = turn.strategy().run(question, history=turn.history)
    except StrategyError as exc:
        chat_turn_fail(turn=turn, error=str(exc), state=exc.state)
        raise ChatError("{error}", error=str(exc)) from None
    except TrellisError as exc:
        chat_turn_fail(turn=turn, error=str(exc))
        raise ChatError("{error}", error=str(exc)) from None
    return chat_turn_complete(turn=turn, state=state)


@jobs.recovery
def answers_interrupted_fail() -> int:
    """Answers a crash left ``streaming`` will never finish: say so instead of spinning forever."""
    return Message.objects.filter(status=Message.Status.STREAMING).update(
        status=Message.Status.FAILED, error="the server stopped while this answer was being written")
