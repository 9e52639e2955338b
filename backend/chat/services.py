"""Writes of the chat app: conversations and the life of one question and its answer."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import transaction

import jobs
from common.i18n import translate
from pipelines.models import Pipeline
from pipelines.runtime import pipeline_strategy
from pipelines.selectors import pipeline_get, pipeline_readiness
from rag.core import TrellisError, readable_error
from rag.core.i18n import gettext_noop
from rag.strategies import Strategy
from rag.strategies.traces import agentic_rounds

from .models import Conversation, Message, Trace
from .selectors import conversation_history

logger = logging.getLogger(__name__)
TITLE_LENGTH = 80
QUESTION_MAX_LENGTH = 10_000
"""The longest question, on every transport (the REST serializer, and the socket through it)."""


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
    if len(question) > QUESTION_MAX_LENGTH:
        raise ChatError(gettext_noop("the question is longer than {limit} characters"), limit=QUESTION_MAX_LENGTH)
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


FINAL_EVENTS = frozenset({"answer.completed", "run.failed", "run.cancelled"})
_FORWARDED = frozenset({"retrieval.node", "retrieval.round"})


def _off_loop(function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``function`` run on a worker thread of its own: building a strategy loads models and
    indices, and fifty conversations starting together must not queue on the shared ORM thread."""
    return database_sync_to_async(function, thread_sensitive=False)


def _turn_open(*, conversation: Conversation, user: AbstractBaseUser, question: str, pipeline_id: Any) -> Turn:
    pipeline = None
    if pipeline_id is not None:
        try:
            pipeline = pipeline_get(user=user, pipeline_id=int(pipeline_id))
        except (Pipeline.DoesNotExist, TypeError, ValueError):
            raise ChatError(gettext_noop("no pipeline {id!r}"), id=pipeline_id) from None
    try:
        conversation.refresh_from_db()
    except Conversation.DoesNotExist:
        raise ChatError(gettext_noop("this conversation no longer exists")) from None
    return chat_turn_start(conversation=conversation, question=question, pipeline=pipeline)


def _turn_complete(turn: Turn, state: dict[str, Any]) -> dict[str, Any]:
    return answer_payload(chat_turn_complete(turn=turn, state=state))


async def chat_turn(*, conversation: Conversation, user: AbstractBaseUser, question: str, pipeline_id: Any = None,
                    language: str | None = None) -> AsyncGenerator[dict[str, Any], None]:
    """One question answered, as the events of the chat protocol (DESIGN §8), for any transport.

    Yields ``run.started``, ``retrieval.node`` / ``retrieval.round`` as they complete,
    ``generation.delta`` tokens, then one final event: ``answer.completed``, ``run.failed``
    (``error`` readable, in ``language``; ``code``) or ``run.cancelled``. It records the question
    and the answer, times the first token and the whole turn, and stores the outcome with its
    trace. Cancelling the task that reads it stops the run: what was written so far is stored as
    ``cancelled`` and ``run.cancelled`` is the next event. A reader cancelled between two events
    delivers the cancellation with ``athrow(asyncio.CancelledError)``, which returns that event.
    """
    try:
        turn = await _off_loop(_turn_open)(conversation=conversation, user=user, question=question,
                                           pipeline_id=pipeline_id)
    except ChatError as exc:
        yield {"type": "run.failed", "error": exc.translated(language), "code": "not_answered", "message_id": None}
        return
    except Exception as exc:  # nothing was recorded; the reader still gets its final event
        logger.exception("a question in conversation %s could not be started", conversation.pk)
        error = readable_error(exc)
        yield {"type": "run.failed", "error": translate(error.template, error.context, language,
                                                        fallback=error.message),
               "code": error.code, "message_id": None}
        return
    pieces: list[str] = []
    trace: dict[str, Any] = {}
    finished = False
    try:
        yield {"type": "run.started", "message_id": turn.answer.pk, "question_message_id": turn.question.pk,
               "pipeline_id": turn.pipeline.pk}
        strategy = await _off_loop(turn.strategy)()
        async for event in strategy.astream(question, history=turn.history):
            kind = event["type"]
            if kind == "generation.delta":
                if turn.first_token_ms is None:
                    turn.first_token_ms = round((time.perf_counter() - turn.started) * 1000, 1)
                pieces.append(event["text"])
                yield event
            elif kind in _FORWARDED:
                yield event
            elif kind == "answer.completed":
                payload = await _off_loop(_turn_complete)(turn, event["state"])
                finished = True
                yield {"type": "answer.completed", **payload}
                return
            elif kind == "run.failed":
                trace = event["trace"]
                await database_sync_to_async(chat_turn_fail)(turn=turn, error=event["error"], state=event["state"])
                finished = True
                yield {"type": "run.failed", "error": event["error"], "code": _failure_code(event),
                       "message_id": turn.answer.pk}
                return
    except asyncio.CancelledError:
        if finished:
            return  # the answer is stored; only the tail of the event stream was cut
        await database_sync_to_async(chat_turn_cancel)(turn=turn, text="".join(pieces), trace=trace)
        yield {"type": "run.cancelled", "message_id": turn.answer.pk, "answer": "".join(pieces)}
    except Exception as exc:
        if finished:
            return
        logger.exception("answering in conversation %s failed", conversation.pk)
        error = readable_error(exc)
        await database_sync_to_async(chat_turn_fail)(turn=turn, error=error.message)
        yield {"type": "run.failed", "error": translate(error.template, error.context, language,
                                                        fallback=error.message),
               "code": error.code, "message_id": turn.answer.pk}


def _failure_code(event: dict[str, Any]) -> str:
    exception = event.get("exception")
    return readable_error(exception).code if isinstance(exception, BaseException) else "error"


def chat_ask(*, conversation: Conversation, user: AbstractBaseUser, question: str, pipeline_id: Any = None,
             language: str | None = None) -> dict[str, Any]:
    """Ask and wait for the whole answer (the REST fallback of the websocket): the final event
    of ``chat_turn``, drained here."""

    async def drain() -> dict[str, Any]:
        async for event in chat_turn(conversation=conversation, user=user, question=question,
                                     pipeline_id=pipeline_id, language=language):
            if event["type"] in FINAL_EVENTS:
                return event
        raise RuntimeError("a chat turn ended without a final event")

    return async_to_sync(drain)()


@jobs.recovery
def answers_interrupted_fail() -> int:
    """Answers a crash left ``streaming`` will never finish: say so instead of spinning forever."""
    return Message.objects.filter(status=Message.Status.STREAMING).update(
        status=Message.Status.FAILED, error="the server stopped while this answer was being written")
