"""Writes of the chat app: conversations and the life of one question and its answer.

A question is answered by a *run* that belongs to its conversation, not to the socket that
asked: every event of the run is stored (``RunEvent``) and then sent to the conversation's
channel-layer group, so any socket of the conversation, in any server process, replays the
events so far and follows the rest live. Closing or reloading a tab does not stop the run; a
cancel from any socket reaches the process answering through the run's own channel.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db import IntegrityError, transaction

import jobs
from common.i18n import translate
from common.realtime import publish
from pipelines.models import Pipeline
from pipelines.runtime import pipeline_strategy
from pipelines.selectors import pipeline_get, pipeline_readiness
from rag.components import load_components
from rag.core import TrellisError, readable_error
from rag.core.i18n import gettext_noop
from rag.core.tree import iter_nodes
from rag.strategies import Strategy
from rag.strategies.traces import agentic_rounds

from . import limits
from .models import Conversation, Message, Run, RunEvent, Trace
from .selectors import conversation_history, conversation_summary

logger = logging.getLogger(__name__)
TITLE_LENGTH = 80
QUESTION_MAX_LENGTH = 10_000
"""The longest question, on every transport (the REST serializer, and the socket through it)."""
FLUSH_INTERVAL_S = 0.1
"""How long tokens may wait to be stored and sent together; the first token of a pause goes at once."""
CANCEL_GRACE_S = 5.0
"""How long a stopped run may take to reach its next step or token before its trace so far is
stored anyway."""
MESSAGE_OVERHEAD_TOKENS = 4
"""What a chat template adds around each message (role markers), on top of its text."""
FINAL_EVENTS = frozenset({"answer.completed", "run.failed", "run.cancelled"})
_FORWARDED = frozenset({"retrieval.plan", "retrieval.node", "retrieval.judging", "retrieval.round",
                        "generation.started", "generation.delta"})


class ChatError(TrellisError):
    """A question that cannot be asked now; the message says why (``template`` and ``context``
    translate it). ``code`` tells clients which case it is (``busy``, ``too_long``…)."""

    def __init__(self, template: str, code: str = "not_answered", **context: Any) -> None:
        self.template, self.context, self.code = template, context, code
        super().__init__(template.format(**context))

    def translated(self, language: str | None) -> str:
        return translate(self.template, self.context, language, fallback=str(self))


def conversation_group(conversation_id: int) -> str:
    """The channel-layer group of every socket open on one conversation."""
    return f"chat.conversation.{conversation_id}"


def owner_group(user_id: int) -> str:
    """The channel-layer group of every conversation-list socket of one user."""
    return f"chat.owner.{user_id}"


def _announce(conversation: Conversation, kind: str = "conversation.updated") -> None:
    """Tell the owner's open lists, once the change is committed."""
    payload = {"conversation": conversation_summary(conversation)}
    group = owner_group(conversation.owner_id)
    transaction.on_commit(lambda: publish(group, {"type": "chat.conversation", "event": {"type": kind, **payload}}))


def conversation_create(*, owner: AbstractBaseUser, pipeline: Pipeline | None = None, title: str = "",
                        origin: str = Conversation.Origin.WEB) -> Conversation:
    """A new conversation; ``origin`` says where it was started (the chat page, the OpenAI API,
    an MCP tool), which the chat page marks and filters by."""
    conversation = Conversation.objects.create(owner=owner, pipeline=pipeline, title=title, origin=origin)
    _announce(conversation, "conversation.created")
    return conversation


def conversation_update(*, conversation: Conversation, title: str | None = None,
                        pipeline: Pipeline | None = None) -> Conversation:
    if title is not None:
        conversation.title = title
    if pipeline is not None:
        conversation.pipeline = pipeline
    conversation.save()
    _announce(conversation)
    return conversation


def conversation_delete(*, conversation: Conversation) -> None:
    group, event = owner_group(conversation.owner_id), {"type": "conversation.deleted", "conversation_id": conversation.pk}
    conversation.delete()
    transaction.on_commit(lambda: publish(group, {"type": "chat.conversation", "event": event}))


def conversation_continue_or_create(*, owner: AbstractBaseUser, pipeline: Pipeline, history: list[dict[str, str]],
                                    origin: str = Conversation.Origin.API) -> tuple[Conversation, bool]:
    """The conversation a client that sends the whole chat each time (the OpenAI API) is in.

    ``history`` is the earlier turns, ``user`` and ``assistant`` messages in pairs. The owner's
    conversation whose answered turns are exactly these goes on (so a chat continued from a
    chat client stays one conversation on the chat page); when none is, or it is answering
    now, a new conversation starts with these turns recorded, so its history, its page and its
    follow-up questions are what the client sent. Returns it, and whether it is new."""
    if history and history[-1]["role"] == "assistant":
        candidates = (Conversation.objects.filter(owner=owner, messages__role=Message.Role.ASSISTANT,
                                                  messages__status=Message.Status.DONE,
                                                  messages__text=history[-1]["content"])
                      .exclude(run__message__status=Message.Status.STREAMING).distinct().order_by("-updated_at")[:5])
        for conversation in candidates:
            if conversation_history(conversation, turns=len(history) // 2 + 1) == history:
                return conversation, False
    with transaction.atomic():
        title = history[0]["content"][:TITLE_LENGTH] if history else ""
        conversation = Conversation.objects.create(owner=owner, pipeline=pipeline, title=title, origin=origin)
        Message.objects.bulk_create([
            Message(conversation=conversation, role=message["role"], text=message["content"], pipeline=pipeline)
            for message in history])
        _announce(conversation, "conversation.created")
    return conversation, True


@dataclass
class Turn:
    """One question being answered."""

    question: Message
    answer: Message
    pipeline: Pipeline
    history: list[dict[str, str]]
    conversation_id: int
    channel: str = ""
    history_dropped: int = 0
    started: float = field(default_factory=time.perf_counter)
    first_token_ms: float | None = None

    def timings(self) -> dict[str, Any]:
        return {"first_token_ms": self.first_token_ms,
                "total_ms": round((time.perf_counter() - self.started) * 1000, 1)}

    def strategy(self) -> Strategy:
        return pipeline_strategy(self.pipeline)


def _synthesizers(pipeline: Pipeline) -> list[Any]:
    """The components of ``pipeline`` that write answers, built from its JSON without loading
    any model (constructing a component is cheap; models load in ``init_model``)."""
    registry = load_components()
    root = pipeline.strategy
    normalised = {"component": root["component"],
                  "params": registry.get(root["component"]).validate_and_transform(root.get("params") or {})}
    found = []
    for _path, reference in iter_nodes(normalised, registry=registry):
        component = registry.get(reference["component"])
        if component.KIND == "synthesizer" and hasattr(component, "prepare"):
            found.append(component(**reference["params"]))
    return found


def _input_limit(synthesizer: Any) -> int:
    """The most prompt tokens ``synthesizer`` may send: its own budget, and for a model with a
    known context window (the local model's), what the window leaves once the answer has room."""
    limit = synthesizer.params.max_input_tokens
    model = synthesizer.llm.input_limits()
    if model.get("context_tokens"):
        limit = min(limit, model["context_tokens"] - model.get("answer_tokens", 0))
    return limit


def _prompt_tokens(synthesizer: Any, question: str, history: list[dict[str, str]]) -> int:
    """The tokens of the prompt ``synthesizer`` writes for ``question`` before any passage."""
    prepared = synthesizer.prepare(question, [], history)
    count = synthesizer.llm.count_tokens
    return sum(count(message["content"]) + MESSAGE_OVERHEAD_TOKENS for message in prepared.messages)


def question_fit(*, pipeline: Pipeline, question: str, history: list[dict[str, str]]) -> list[dict[str, str]]:
    """The history ``question`` can be asked with in ``pipeline``: all of it, or its latest turns
    when the whole would not fit the model's input. Raises ``ChatError`` (``too_long``) when the
    question alone does not fit, so it is refused before anything runs, never by the model."""
    for synthesizer in _synthesizers(pipeline):
        limit = _input_limit(synthesizer)
        tokens = _prompt_tokens(synthesizer, question, [])
        if tokens > limit:
            raise ChatError(gettext_noop(
                "the question is too long for this pipeline's model: with its instructions it needs about "
                "{tokens} tokens, and the model reads at most {limit}; shorten the question"),
                code="too_long", tokens=tokens, limit=limit)
        # The whole history goes to the strategy (a follow-up is rewritten from it); the
        # synthesizer reads its own share of it. Turns that would not fit the model's input are
        # left out here, so the trace can say so.
        while history and _prompt_tokens(synthesizer, question, history) > limit:
            history = history[2:]  # the oldest question and its answer
    return history


def chat_turn_start(*, conversation: Conversation, question: str, pipeline: Pipeline | None = None,
                    channel: str = "") -> Turn:
    """Record the question and an empty answer (``streaming``) for ``pipeline`` (default: the
    conversation's), and the conversation's run (cancelled through ``channel``). Raises
    ``ChatError`` when no pipeline is chosen, it is not ready, the question does not fit its
    model, or the conversation is answering another question."""
    question = question.strip()
    if not question:
        raise ChatError(gettext_noop("the question is empty"))
    if len(question) > QUESTION_MAX_LENGTH:
        raise ChatError(gettext_noop("the question is longer than {limit} characters"), code="too_long",
                        limit=QUESTION_MAX_LENGTH)
    pipeline = pipeline or conversation.pipeline
    if pipeline is None:
        raise ChatError(gettext_noop("choose a pipeline for this conversation first"))
    readiness = pipeline_readiness(pipeline)
    if not readiness.ready:
        raise ChatError(gettext_noop("the pipeline {name!r} cannot answer yet: {reasons}"), name=pipeline.name,
                        reasons="; ".join(readiness.reasons()))
    history = conversation_history(conversation, turns=settings.TRELLIS_CHAT_HISTORY_TURNS)
    fitting = question_fit(pipeline=pipeline, question=question, history=history)
    busy = ChatError(gettext_noop("a question is already being answered; wait for it or cancel it"), code="busy")
    try:
        with transaction.atomic():
            Conversation.objects.select_for_update().filter(pk=conversation.pk).first()
            # A run whose answer is stored is only sending its last event: it gives way.
            previous = Run.objects.filter(conversation=conversation).select_related("message").first()
            if previous is not None:
                if previous.message.status == Message.Status.STREAMING:
                    raise busy
                previous.delete()
            limits.run_slot_check(owner_id=conversation.owner_id)
            asked = Message.objects.create(conversation=conversation, role=Message.Role.USER, text=question,
                                           pipeline=pipeline)
            answer = Message.objects.create(conversation=conversation, role=Message.Role.ASSISTANT,
                                            status=Message.Status.STREAMING, pipeline=pipeline)
            Run.objects.create(conversation=conversation, message=answer, channel=channel)
            conversation.pipeline = pipeline
            if not conversation.title:
                conversation.title = question[:TITLE_LENGTH]
            conversation.save()
            _announce(conversation)
    except IntegrityError:
        raise busy from None  # another socket's question got there first
    return Turn(asked, answer, pipeline, fitting, conversation.pk, channel, (len(history) - len(fitting)) // 2)


def _finish(turn: Turn, *, status: str, text: str, citations: list, trace: dict, chunks: list,
            error: str = "") -> Message:
    answer = turn.answer
    budget = next((step.get("budget") or {} for step in (trace or {}).get("steps", []) if step.get("step") == "generate"),
                  {})
    left_out = max(budget.get("history_turns_asked", 0) - budget.get("history_turns", 0), 0)
    if (turn.history_dropped or left_out) and trace:
        trace["history"] = {"turns_sent": budget.get("history_turns", 0), "turns_dropped": turn.history_dropped + left_out,
                            "why": "the whole conversation would not fit the model's input"}
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


def chat_turn_cancel(*, turn: Turn, text: str, state: dict[str, Any] | None = None) -> Message:
    """Store a stopped answer: what was written, and the trace and chunks recorded so far."""
    state = state or {}
    return _finish(turn, status=Message.Status.CANCELLED, text=text, citations=[], trace=state.get("trace", {}),
                   chunks=state.get("chunks_sent", []))


def answer_payload(message: Message) -> dict[str, Any]:
    """The ``answer.completed`` payload of a finished answer (DESIGN §8)."""
    trace = getattr(message, "trace", None)
    stored = trace.trace if trace else {}
    return {"message_id": message.pk, "answer": message.text, "citations": message.citations,
            "declined": stored.get("declined"), "unsupported": stored.get("unsupported") or [], "trace": stored}


def _off_loop(function: Callable[..., Any]) -> Callable[..., Awaitable[Any]]:
    """``function`` run on a worker thread of its own: building a strategy loads models and
    indices, and fifty conversations starting together must not queue on the shared ORM thread."""
    return database_sync_to_async(function, thread_sensitive=False)


def _turn_open(*, conversation: Conversation, user: AbstractBaseUser, question: str, pipeline_id: Any,
               channel: str) -> Turn:
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
    return chat_turn_start(conversation=conversation, question=question, pipeline=pipeline, channel=channel)


def _refusal(exc: Exception, conversation: Conversation, language: str | None) -> dict[str, Any]:
    """The ``run.failed`` event of a question that was not recorded (only the asker gets it)."""
    if isinstance(exc, ChatError):
        return {"type": "run.failed", "error": exc.translated(language), "code": exc.code, "message_id": None}
    logger.error("a question in conversation %s could not be started", conversation.pk, exc_info=exc)
    error = readable_error(exc)
    return {"type": "run.failed", "error": translate(error.template, error.context, language, fallback=error.message),
            "code": error.code, "message_id": None}


class RunLog:
    """A run's events, numbered, stored, then sent to the conversation's group, in order.

    Tokens that follow each other within ``FLUSH_INTERVAL_S`` are stored and sent as one batch;
    every other event goes at once. An event is sent only after it is committed, so a socket that
    joins the group and then reads the stored events misses none and sees none it cannot tell
    apart (each carries ``seq``)."""

    def __init__(self, turn: Turn, listener: asyncio.Queue | None = None) -> None:
        self.turn = turn
        self.listener = listener
        self.group = conversation_group(turn.conversation_id)
        self.seq = 0
        self.pending: list[dict[str, Any]] = []
        self.flushed_at = 0.0
        self.lock = asyncio.Lock()
        self.timer: asyncio.Task | None = None

    async def add(self, event: dict[str, Any]) -> None:
        self.seq += 1
        self.pending.append({**event, "seq": self.seq})
        if event["type"] != "generation.delta" or time.monotonic() - self.flushed_at >= FLUSH_INTERVAL_S:
            await self.flush()
        elif self.timer is None:
            self.timer = asyncio.create_task(self._flush_later())

    async def _flush_later(self) -> None:
        await asyncio.sleep(FLUSH_INTERVAL_S)
        self.timer = None
        await self.flush()

    async def flush(self) -> None:
        async with self.lock:
            batch, self.pending = self.pending, []
            if not batch:
                return
            self.flushed_at = time.monotonic()
            await database_sync_to_async(_events_store)(self.turn.answer.pk, batch)
            if self.listener is not None:
                for event in batch:
                    self.listener.put_nowait(event)
            layer = get_channel_layer()
            if layer is not None:
                try:
                    await layer.group_send(self.group, {"type": "chat.events", "message_id": self.turn.answer.pk,
                                                        "events": batch})
                except Exception:  # stored all the same: a socket reading the log still gets it
                    logger.warning("could not send run events to %s", self.group, exc_info=True)

    async def close(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
            self.timer = None
        await self.flush()
        await database_sync_to_async(Run.objects.filter(message_id=self.turn.answer.pk).delete)()


def _events_store(message_id: int, batch: list[dict[str, Any]]) -> None:
    run = Run.objects.filter(message_id=message_id).only("pk").first()
    if run is not None:
        RunEvent.objects.create(run=run, seq=batch[0]["seq"], events=batch)


_STOP = object()
"""Put on a run's queue when a cancel arrives."""
_running: set[asyncio.Task] = set()
"""Runs answering in this process (a task needs a strong reference to survive)."""


async def _watch_cancel(channel: str, events: asyncio.Queue) -> None:
    layer = get_channel_layer()
    if layer is None or not channel:
        return
    while (await layer.receive(channel)).get("type") != "chat.cancel":
        pass
    events.put_nowait(_STOP)


async def _answer(turn: Turn, log: RunLog, language: str | None) -> dict[str, Any]:
    """Run the strategy for ``turn``, logging its events; returns the final event, stored."""
    loop = asyncio.get_running_loop()
    events: asyncio.Queue[Any] = asyncio.Queue()
    watcher = asyncio.create_task(_watch_cancel(turn.channel, events))
    handle = None
    pieces: list[str] = []
    try:
        await log.add({"type": "run.started", "message_id": turn.answer.pk, "question_message_id": turn.question.pk,
                       "pipeline_id": turn.pipeline.pk, "question": turn.question.text})
        strategy = await _off_loop(turn.strategy)()
        stopped = not events.empty() and events.get_nowait() is _STOP

        def deliver(event: Any) -> None:
            try:
                loop.call_soon_threadsafe(events.put_nowait, event)
            except RuntimeError:
                pass  # the loop has closed

        if not stopped:
            handle = strategy.start(turn.question.text, history=turn.history, on_event=deliver)
        deadline = None
        overdue_at = limits.overdue_at()  # past its deadline, still in one step: the chat stops it
        while not stopped or deadline is not None:
            try:
                waits = [at for at in (deadline, None if stopped else overdue_at) if at is not None]
                timeout = max(min(waits) - time.monotonic(), 0) if waits else None
                event = await asyncio.wait_for(events.get(), timeout)
            except TimeoutError:
                if not stopped:
                    return await _overdue(turn, handle, pieces, language)
                break  # still busy in a step: store the trace recorded so far
            if event is _STOP:
                stopped = True
                handle.cancel()
                deadline = time.monotonic() + CANCEL_GRACE_S
                continue
            if not isinstance(event, dict):
                break  # the run's end: after a cancel, its trace is complete up to where it stopped
            kind = event["type"]
            if kind == "generation.delta":
                if turn.first_token_ms is None:
                    turn.first_token_ms = round((time.perf_counter() - turn.started) * 1000, 1)
                pieces.append(event["text"])
                await log.add(event)
            elif kind in _FORWARDED:
                await log.add(event)
            elif kind == "answer.completed":
                return {"type": "answer.completed", **await _off_loop(_turn_complete)(turn, event["state"])}
            elif kind == "run.failed":
                await database_sync_to_async(chat_turn_fail)(turn=turn, error=event["error"], state=event["state"])
                stop = limits.stopped_by(event["state"])
                if stop is not None:  # a limit of the run stopped it: said in the asker's language
                    return {"type": "run.failed", "error": limits.limit_message(stop, language), "code": stop.code,
                            "message_id": turn.answer.pk}
                return {"type": "run.failed", "error": event["error"], "code": _failure_code(event),
                        "message_id": turn.answer.pk}
        state = handle.snapshot() if handle is not None else {}
        text = "".join(pieces)
        await database_sync_to_async(chat_turn_cancel)(turn=turn, text=text, state=state)
        return {"type": "run.cancelled", "message_id": turn.answer.pk, "answer": text, "trace": state.get("trace", {})}
    except asyncio.CancelledError:
        # The server is stopping: keep what was written.
        if handle is not None:
            handle.cancel()
        await database_sync_to_async(chat_turn_cancel)(turn=turn, text="".join(pieces),
                                                       state=handle.snapshot() if handle else {})
        raise
    except Exception as exc:
        logger.exception("answering in conversation %s failed", turn.conversation_id)
        error = readable_error(exc)
        await database_sync_to_async(chat_turn_fail)(turn=turn, error=error.message)
        return {"type": "run.failed", "error": translate(error.template, error.context, language,
                                                        fallback=error.message),
                "code": error.code, "message_id": turn.answer.pk}
    finally:
        watcher.cancel()
        if handle is not None:
            handle.cancel()


async def _overdue(turn: Turn, handle: Any, pieces: list[str], language: str | None) -> dict[str, Any]:
    """Stop a run still busy in one step well past its deadline, and store what it did so far
    (its trace says the deadline stopped it)."""
    if handle is not None:
        handle.cancel()
    stop = limits.overdue_stop()
    state: dict[str, Any] = handle.snapshot() if handle is not None else {}
    state.setdefault("trace", {})["stopped_by"] = stop.to_dict()
    state["trace"].pop("cancelled", None)  # the deadline stopped it, not a person
    state["response"] = "".join(pieces)
    await database_sync_to_async(chat_turn_fail)(turn=turn, error=str(stop), state=state)
    return {"type": "run.failed", "error": limits.limit_message(stop, language), "code": stop.code,
            "message_id": turn.answer.pk}


def _turn_complete(turn: Turn, state: dict[str, Any]) -> dict[str, Any]:
    return answer_payload(chat_turn_complete(turn=turn, state=state))




def _failure_code(event: dict[str, Any]) -> str:
    exception = event.get("exception")
    return readable_error(exception).code if isinstance(exception, BaseException) else "error"


async def _run(turn: Turn, language: str | None, listener: asyncio.Queue | None = None) -> dict[str, Any]:
    log = RunLog(turn, listener)
    try:
        final = await _answer(turn, log, language)
        await log.add(final)
        return final
    finally:
        await asyncio.shield(log.close())


async def _open(*, conversation: Conversation, user: AbstractBaseUser, question: str, pipeline_id: Any,
                language: str | None) -> Turn | dict[str, Any]:
    layer = get_channel_layer()
    # The layer's default prefix: channels_redis reads every process-local channel of one
    # prefix through one loop, and a second prefix's reader would starve the consumers' own.
    channel = await layer.new_channel() if layer is not None else ""
    try:
        return await _off_loop(_turn_open)(conversation=conversation, user=user, question=question,
                                           pipeline_id=pipeline_id, channel=channel)
    except Exception as exc:
        return _refusal(exc, conversation, language)


async def chat_run_start(*, conversation: Conversation, user: AbstractBaseUser, question: str,
                         pipeline_id: Any = None, language: str | None = None) -> dict[str, Any] | None:
    """Start answering ``question`` in ``conversation``; the run goes on in this process whoever
    stays to watch. Its events (DESIGN §8: ``run.started``, ``retrieval.node`` /
    ``retrieval.round``, ``generation.delta``, then ``answer.completed``, ``run.failed`` or
    ``run.cancelled``), each numbered ``seq``, are stored and sent to the conversation's group.
    Returns None once started, or the ``run.failed`` event of a question that was refused (empty,
    too long for the model, no ready pipeline, another question being answered) and not recorded."""
    opened = await _open(conversation=conversation, user=user, question=question, pipeline_id=pipeline_id,
                         language=language)
    if isinstance(opened, dict):
        return opened
    task = asyncio.create_task(_run(opened, language), name=f"chat-run-{opened.answer.pk}")
    _running.add(task)
    task.add_done_callback(_running.discard)
    return None


async def chat_run_cancel(*, conversation: Conversation) -> bool:
    """Stop the answer being written in ``conversation``, from any process; False when none is."""
    channel = await database_sync_to_async(
        lambda: Run.objects.filter(conversation_id=conversation.pk, message__status=Message.Status.STREAMING)
        .values_list("channel", flat=True).first())()
    layer = get_channel_layer()
    if not channel or layer is None:
        return False
    await layer.send(channel, {"type": "chat.cancel"})
    return True


async def chat_run_follow(*, conversation: Conversation, user: AbstractBaseUser, question: str,
                          pipeline_id: Any = None, language: str | None = None) -> AsyncIterator[dict[str, Any]]:
    """Start answering ``question`` as ``chat_run_start`` does and yield the run's events as they
    are stored, up to its final one (for transports that answer one request, not a socket).
    A refused question yields its ``run.failed`` event alone. The run is the conversation's: one
    who stops reading stops nothing, and the chat page's sockets follow it live."""
    opened = await _open(conversation=conversation, user=user, question=question, pipeline_id=pipeline_id,
                         language=language)
    if isinstance(opened, dict):
        yield opened
        return
    events: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
    # A context of its own: the request's (Django's per-request thread for the ORM among it)
    # ends with the request, and the run goes on after it.
    task = asyncio.create_task(_run(opened, language, events), name=f"chat-run-{opened.answer.pk}",
                               context=contextvars.Context())
    _running.add(task)
    task.add_done_callback(_running.discard)
    while True:
        event = await events.get()
        yield event
        if event["type"] in FINAL_EVENTS:
            return


def chat_ask(*, conversation: Conversation, user: AbstractBaseUser, question: str, pipeline_id: Any = None,
             language: str | None = None) -> dict[str, Any]:
    """Ask and wait for the whole answer (the REST fallback of the websocket): the final event.
    The run is the conversation's like any other, so open sockets follow it live."""

    async def ask() -> dict[str, Any]:
        opened = await _open(conversation=conversation, user=user, question=question, pipeline_id=pipeline_id,
                             language=language)
        return opened if isinstance(opened, dict) else await _run(opened, language)

    return async_to_sync(ask)()


@jobs.recovery
def answers_interrupted_fail() -> int:
    """Answers a crash left ``streaming`` will never finish: say so instead of spinning forever."""
    Run.objects.all().delete()
    return Message.objects.filter(status=Message.Status.STREAMING).update(
        status=Message.Status.FAILED, error="the server stopped while this answer was being written")
