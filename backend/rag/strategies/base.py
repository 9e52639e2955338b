"""The strategy core: a run over a state dict, step by step, streaming its events.

A strategy's ``_execute`` runs its steps on a worker thread; ``stream`` yields the events
(DESIGN §8) as they happen — each completed retriever node, each agentic round, each token —
and ends with ``answer.completed`` or ``run.failed``. ``run`` and ``arun`` return the final
state; ``astream`` is the async iterator a websocket consumer reads.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import queue
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

from rag.core import ConfigObject, Params, ParamsT, TrellisError, readable_error
from rag.documents.models import SourceDocument
from rag.retrievers import BaseRetriever, Hit, RetrievalError
from rag.tracing import RunLimits, TraceRecorder, default_run_limits, recording

from . import followups, grounding, left_out_parts, relevance
from .answer_prompts import CITATION_MARK, NOT_FOUND, copied_example

logger = logging.getLogger(__name__)


class _End:
    """The type of ``_END``."""


_END = _End()
"""Marks the end of a run's events."""

Event = dict[str, Any]
Message = dict[str, str]


class StrategyError(TrellisError):
    """A run failed; ``state`` holds what was done so far, its trace included."""

    def __init__(self, message: str, state: dict[str, Any]) -> None:
        super().__init__(message)
        self.state = state


class Cancelled(Exception):
    """The reader stopped listening; the run stops at its next step or token."""


class RunContext:
    """One run: its state, its event queue, its trace, and whether it was cancelled. ``limits``
    (default: the process's, ``rag.tracing.default_run_limits``) bound its time and LLM calls."""

    def __init__(self, strategy: Strategy, question: str, top_k: int | None, history: Sequence[Message],
                 on_event: Callable[[Any], None] | None = None, limits: RunLimits | None = None) -> None:
        self.strategy = strategy
        self.events: queue.Queue[Any] = queue.Queue()
        self._on_event = on_event
        self.cancelled = threading.Event()
        self.started = time.perf_counter()
        self._open_steps: list[tuple[dict[str, Any], float, int]] = []
        self._nodes: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self.recorder = TraceRecorder(
            on_node=self._node_completed,
            on_round=lambda node, summary: self.emit({"type": "retrieval.round", "node_id": node.id,
                                                      "class": node.component, "round": summary}),
            on_plan=lambda node, plan: self.emit({"type": "retrieval.plan", "node_id": node.id,
                                                  "class": node.component, "plan": plan}),
            on_judging=lambda node, round_number: self.emit({"type": "retrieval.judging", "node_id": node.id,
                                                             "class": node.component, "round": round_number}),
            limits=limits or default_run_limits(),
        )
        self.state: dict[str, Any] = {
            "question": question,
            "top_k": top_k,
            "history": list(history),
            "chunks": [],
            "retrieval_decision": None,
            "filtered_chunks": None,
            "chunks_sent": [],
            "search_question": None,
            "answered_question": None,
            "response": "",
            "citations": [],
            "declined": None,
            "unsupported": [],
            "trace": {"strategy": strategy.NAME, "params": strategy.trace_params or {}, "steps": [],
                      "llm_calls": 0, "elapsed_ms": 0.0},
        }

    def _node_completed(self, node: Any) -> None:
        data = node.to_dict()
        with self._lock:
            self._nodes.append(data)
        self.emit({"type": "retrieval.node", "node": data})

    def emit(self, event: Event | _End) -> None:
        if self._on_event is not None:
            self._on_event(event)
        else:
            self.events.put(event)

    def check(self) -> None:
        if self.cancelled.is_set():
            raise Cancelled
        self.recorder.check_limits()

    @contextmanager
    def step(self, name: str, **details: Any) -> Iterator[dict[str, Any]]:
        """Record a step in the trace with its timing; the block fills ``entry`` with details."""
        self.check()
        entry: dict[str, Any] = {"step": name, **details}
        started = time.perf_counter()
        with self._lock:
            opened = (entry, started, len(self._nodes))
            self._open_steps.append(opened)
        try:
            yield entry
        except Cancelled:
            entry["interrupted"] = True
            raise
        finally:
            entry["elapsed_ms"] = round((time.perf_counter() - started) * 1000, 3)
            with self._lock:
                self._open_steps.remove(opened)
                self.state["trace"]["steps"].append(entry)

    def finish(self) -> None:
        trace = self.state["trace"]
        trace["llm_calls"] = self.recorder.llm_calls
        trace["usage"] = self.recorder.usage()
        if self.recorder.stopped is not None:
            trace["stopped_by"] = self.recorder.stopped.to_dict()
        if self.cancelled.is_set():
            trace["cancelled"] = True
        trace["elapsed_ms"] = round((time.perf_counter() - self.started) * 1000, 3)

    def snapshot(self) -> dict[str, Any]:
        """The trace and the chunks sent so far, copied while the run's thread may still be in a
        step (a stopped run whose model has not answered yet): the elapsed time and LLM calls up
        to now, and each step still open, marked ``interrupted``, with the time it has taken and,
        when it has no node yet, the retriever nodes completed inside it (``nodes``)."""
        for _attempt in range(3):
            try:
                trace, chunks_sent, now = self._copy_so_far()
                break
            except RuntimeError:  # a step's entry changed while copied: copy again
                continue
        else:
            return {"trace": {}, "chunks_sent": []}
        trace["llm_calls"] = self.recorder.llm_calls
        trace["usage"] = self.recorder.usage()
        trace["elapsed_ms"] = round((now - self.started) * 1000, 3)
        if self.cancelled.is_set():
            trace["cancelled"] = True
        return {"trace": trace, "chunks_sent": chunks_sent}

    def _copy_so_far(self) -> tuple[dict[str, Any], list[Any], float]:
        with self._lock:
            trace = copy.deepcopy(self.state["trace"])
            chunks_sent = copy.deepcopy(self.state.get("chunks_sent", []))
            now = time.perf_counter()
            for entry, started, first_node in self._open_steps:
                partial = {**copy.deepcopy(entry), "interrupted": True,
                           "elapsed_ms": round((now - started) * 1000, 3)}
                nodes = self._nodes[first_node:]
                if "node" not in partial and nodes:
                    inside = {child for node in nodes for child in _descendants(node)}
                    partial["nodes"] = copy.deepcopy([node for node in nodes if node.get("id") not in inside])
                trace["steps"].append(partial)
        return trace, chunks_sent, now


def _descendants(node: Mapping[str, Any]) -> Iterator[str]:
    for child in node.get("children") or []:
        yield child.get("id")
        yield from _descendants(child)


class RunHandle:
    """A started run: its events, one at a time, and a way to stop it."""

    def __init__(self, run: RunContext) -> None:
        self._run = run

    def next_event(self) -> Any:
        """The next event (blocking); the module's end marker once the run is over."""
        return self._run.events.get()

    def cancel(self) -> None:
        """Stop the run at its next step or token; what it produced so far is kept."""
        self._run.cancelled.set()

    @property
    def state(self) -> dict[str, Any]:
        return self._run.state

    def snapshot(self) -> dict[str, Any]:
        """The trace (``trace``) and chunks sent (``chunks_sent``) so far: ``RunContext.snapshot``."""
        return self._run.snapshot()


class Strategy(ConfigObject[ParamsT]):
    """Base of strategies. Subclasses implement ``_execute(run)`` with the helpers below.

    ``POSITIONAL`` names the parameters that may also be given by position, in order, as the
    reference signatures have them (``NaiveRAG(retriever, response_synthesizer)``).
    """

    KIND: ClassVar[str] = "strategy"
    CATEGORY: ClassVar[str] = "strategies"
    Params: ClassVar[type[Params]] = Params
    POSITIONAL: ClassVar[tuple[str, ...]] = ()
    # Only a follow-up that refers back asks this model; a pipeline answering with another
    # model should not load the packaged one when it is built.
    LOADED_ON_USE: ClassVar[frozenset[str]] = frozenset({"followup_llm"})

    def __init__(self, *args: Any, **params: Any) -> None:
        super().__init__(**positional_params(type(self), args, params))
        self.documents: Mapping[int, SourceDocument] = {}

    def inject_infra(self, documents: Mapping[int, SourceDocument] | None = None, **other: Any) -> None:
        self.documents = documents or {}

    # -- running ----------------------------------------------------------------------------

    def start(self, question: str, top_k: int | None = None, history: Sequence[Message] = (),
              on_event: Callable[[Any], None] | None = None) -> RunHandle:
        """Start a run on its own thread; read its events from the handle (or receive them in
        ``on_event``, called from the run's thread), cancel through it."""
        if top_k is not None and top_k < 1:
            raise ValueError(f"top_k must be ≥ 1, got {top_k}")
        run = RunContext(self, question, top_k, history, on_event)
        threading.Thread(target=self._work, args=(run,), name="trellis-strategy", daemon=True).start()
        return RunHandle(run)

    def stream(self, question: str, top_k: int | None = None, history: Sequence[Message] = ()) -> Iterator[Event]:
        """Events of one run as they happen; the last is ``answer.completed`` (with ``state``) or
        ``run.failed`` (with ``error`` and ``state``). Closing the iterator cancels the run."""
        handle = self.start(question, top_k, history)
        try:
            while (event := handle.next_event()) is not _END:
                yield event
        finally:
            handle.cancel()

    def _work(self, run: RunContext) -> None:
        try:
            with recording(run.recorder):
                self._execute(run)
            run.finish()
            run.emit({"type": "answer.completed", "answer": run.state["response"],
                      "citations": run.state["citations"], "declined": run.state["declined"],
                      "unsupported": run.state["unsupported"], "search_question": run.state["search_question"],
                      "trace": run.state["trace"], "state": run.state})
        except Cancelled:
            run.finish()
        except Exception as exc:
            run.finish()
            if not isinstance(exc, TrellisError):
                logger.error("%s failed", type(self).__name__, exc_info=exc)
            message = readable_error(exc).message
            run.state["trace"]["error"] = message
            run.emit({"type": "run.failed", "error": message, "trace": run.state["trace"], "state": run.state,
                      "exception": exc})
        finally:
            run.emit(_END)

    def run(self, question: str, top_k: int | None = None, history: Sequence[Message] = ()) -> dict[str, Any]:
        """The final state of one run; raises ``StrategyError`` (with the partial state) on failure."""
        for event in self.stream(question, top_k, history):
            if event["type"] == "answer.completed":
                return event["state"]
            if event["type"] == "run.failed":
                raise StrategyError(event["error"], event["state"]) from event.get("exception")
        raise StrategyError("the run ended without an answer", {})

    async def arun(self, question: str, top_k: int | None = None, history: Sequence[Message] = ()) -> dict[str, Any]:
        return await asyncio.to_thread(self.run, question, top_k, history)

    async def astream(
        self, question: str, top_k: int | None = None, history: Sequence[Message] = ()
    ) -> AsyncIterator[Event]:
        """``stream`` for async code: the run works on its own thread, the loop stays free, and
        cancelling the reading task cancels the run."""
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Any] = asyncio.Queue()
        # The run hands each event to the loop itself: no thread waits on its behalf, so many
        # runs can stream at once.
        def deliver(event: Any) -> None:
            try:
                loop.call_soon_threadsafe(events.put_nowait, event)
            except RuntimeError:
                pass  # the loop has closed: nobody is reading any more

        handle = self.start(question, top_k, history, on_event=deliver)
        try:
            while (event := await events.get()) is not _END:
                yield event
        finally:
            handle.cancel()

    def _execute(self, run: RunContext) -> None:
        raise NotImplementedError

    # -- steps ------------------------------------------------------------------------------

    def retrieve_step(self, run: RunContext, retriever: BaseRetriever, query: str, *, name: str = "retrieve",
                      top_k: int | None = None) -> list[Hit]:
        """Ask ``retriever``; the step's trace holds its node (and the error, if it failed)."""
        with run.step(name, query=query) as entry:
            try:
                hits, node = retriever.search(query, top_k if top_k is not None else run.state["top_k"])
            except RetrievalError as exc:
                entry["node"] = exc.node.to_dict() if exc.node else None
                raise
            entry["node"] = node.to_dict()
        return hits

    def search_question(self, run: RunContext) -> str:
        """The question this turn searches: as asked, or, when it refers to earlier turns, as
        the strategy's follow-up model rewrites it to stand alone (``rag.strategies.followups``).
        Decided once per run; after earlier turns, the trace's ``search_question`` step says how."""
        if run.state.get("search_question") is None:
            if not any(turn.get("role") == "user" for turn in run.state["history"]):
                # A first question is searched as asked; the retrieve step shows it.
                run.state["search_question"] = run.state["question"]
            else:
                with run.step("search_question") as entry:
                    decided = followups.standalone(run.state["question"], run.state["history"],
                                                   getattr(self, "followup_llm", None))
                    entry.update(decided.to_dict(run.state["question"]))
                run.state["search_question"] = decided.question
                run.state["answered_question"] = decided.answered
        return str(run.state["search_question"])

    def answered_question(self, run: RunContext) -> str:
        """The question the model answers and its answer is checked against: the search
        question, unless it was searched beside the previous question
        (``followups.SearchQuestion.answered``)."""
        searched = self.search_question(run)
        return str(run.state.get("answered_question") or searched)

    def generate_step(self, run: RunContext, synthesizer: Any, hits: Sequence[Hit], *,
                      passages: int | None = None) -> None:
        """Answer from ``hits`` with the synthesizer, streaming tokens as events, then check the
        answer against its passages: a declined answer (the model said the passages do not hold
        it, or no sentence is supported by the passage it cites) becomes the "not found" reply
        with no citation; an unsupported sentence is flagged. ``passages``: how many of ``hits``
        the strategy means the model to read (a re-ranker's or MapReduceRAG's top_k)."""
        with run.step("generate") as entry:
            prepared = synthesizer.prepare(self.answered_question(run), hits, run.state["history"], self.documents,
                                           passages)
            entry["budget"] = prepared.budget
            entry["language"] = prepared.language
            run.state["chunks_sent"] = [hit_row(hit, number) for number, hit in enumerate(prepared.sent, start=1)]
            floor = getattr(getattr(synthesizer, "params", None), "relevance_floor", None)
            # The passages are as close as what was searched for them.
            measured = relevance.measure(self.search_question(run), [hit.chunk for hit in prepared.sent], prepared.language,
                                         getattr(self, "retriever", None), floor)
            if measured is not None:
                entry["relevance"] = measured.to_dict()
                if measured.below:
                    self._decline(run, "relevance", prepared, synthesizer)
                    return
            run.emit({"type": "generation.started", "passages": len(prepared.sent),
                      "tokens": prepared.budget.get("new_tokens")})
            pieces: list[str] = []
            stream = synthesizer.stream_answer(prepared)
            try:
                for delta in stream:
                    run.check()
                    pieces.append(delta)
                    run.state["response"] = "".join(pieces)
                    run.emit({"type": "generation.delta", "text": delta})
            finally:
                close = getattr(stream, "close", None)
                if close is not None:
                    close()
            run.state["response"] = "".join(pieces)
            self._ask_again_without_examples(run, entry, synthesizer, prepared)
            added = uncited_source(run.state["response"], [hit.chunk.text for hit in prepared.sent])
            if added is not None:
                # The model repeated a passage without naming it: the answer names it, and the
                # trace says the citation was added, not written by the model.
                run.emit({"type": "generation.delta", "text": f" [{added}]"})
                run.state["response"] += f" [{added}]"
                entry["citation_added"] = {"n": added, "why": "the answer repeats this passage without citing it"}
            checked = synthesizer.ground(run.state["response"], prepared)
            if checked.declined_by is not None:
                entry["grounding"] = checked.to_dict()
                # The draft was streamed; the reply replaces it, and the trace keeps it.
                entry["draft"] = run.state["response"]
                self._decline(run, checked.declined_by, prepared, synthesizer)
                return
            streamed = run.state["response"]
            checked = self._answer_left_out_parts(run, entry, synthesizer, prepared, checked)
            if run.state["response"] != streamed:
                entry["draft"] = streamed
            written = run.state["response"]
            if CITATION_MARK.search(written):
                run.state["response"] = grounding.repointed(written, checked)
            else:
                # The model named no passage: each sentence a passage holds names it, so the reader
                # can check it; the trace says the numbers were added.
                run.state["response"], marked = grounding.marked(written, checked)
                if marked:
                    entry["citations_marked"] = marked
            if run.state["response"] != written:
                entry.setdefault("draft", written)  # as streamed: the stored answer cites the passages that hold it
            entry["grounding"] = checked.to_dict()
            citations = synthesizer.citations(run.state["response"], prepared, self.documents)
            supported = {number for sentence in checked.sentences if sentence.supported for number in sentence.cites}
            for citation in citations:
                citation["supported"] = citation["n"] in supported
            run.state["citations"] = citations
            run.state["unsupported"] = [sentence.text for sentence in checked.unsupported]
            run.state["trace"]["unsupported"] = run.state["unsupported"]

    def _ask_again_without_examples(self, run: RunContext, entry: dict[str, Any], synthesizer: Any,
                                    prepared: Any) -> None:
        """When the streamed draft repeats a worked example of the instructions instead of its own
        passages (``answer_prompts.copied_example``), the question is asked once more without the
        examples, over the same passages; the trace keeps the draft and what it copied. A failure
        of that call keeps the draft, which the answer check then judges."""
        if not prepared.budget.get("examples") or not hasattr(synthesizer, "without_examples"):
            return
        draft = run.state["response"]
        copied = copied_example(draft, prepared.language, [hit.chunk.text for hit in prepared.sent])
        if copied is None:
            return
        asked: dict[str, Any] = {"why": "the draft repeats a worked example instead of its passages",
                                 "draft": draft, "copied": copied}
        entry["asked_without_examples"] = asked
        try:
            run.check()
            run.state["response"] = synthesizer.answer(synthesizer.without_examples(prepared))
        except TrellisError as exc:
            logger.info("the question was not asked again without the examples: %s", exc)
            asked["error"] = readable_error(exc).message

    def _answer_left_out_parts(self, run: RunContext, entry: dict[str, Any], synthesizer: Any, prepared: Any,
                               checked: grounding.Grounding) -> grounding.Grounding:
        """The answer with each part of a several-part question it left out asked again on its own
        (``rag.strategies.left_out_parts``), and its check. The trace records each part asked, the
        model's answer and what was added; a limit or a failure of the extra call keeps the answer
        as it stands."""
        if not getattr(getattr(synthesizer, "params", None), "ask_left_out_parts", False):
            return checked
        asked: list[dict[str, Any]] = []
        for left_out in left_out_parts.left_out_parts(checked, prepared.question, prepared.language):
            part_prepared = synthesizer.asking(prepared, left_out.part)
            try:
                run.check()
                text = synthesizer.answer(part_prepared)
            except TrellisError as exc:
                logger.info("a left-out part was not asked again: %s", exc)
                asked.append({"part": left_out.part, "error": readable_error(exc).message})
                break
            part_checked = synthesizer.ground(text, part_prepared)
            added = left_out_parts.supported_answer(text, part_checked, left_out.part, prepared.language)
            asked.append(left_out_parts.trace_entry(left_out, text, part_checked, added))
            if not added:
                continue
            before = run.state["response"].strip()
            run.state["response"] = left_out_parts.with_part_answered(before, left_out, added)
            if run.state["response"].startswith(before):  # appended: the reader sees it come
                run.emit({"type": "generation.delta", "text": run.state["response"][len(before):]})
        if not asked:
            return checked
        entry["parts_asked_again"] = asked
        if not any(item.get("added") for item in asked):
            return checked
        return synthesizer.ground(run.state["response"], prepared)

    def _decline(self, run: RunContext, by: str, prepared: Any, synthesizer: Any) -> None:
        """The "not found" reply in the question's language, with no citation and the closest
        passages; ``by`` names the check that decided (``DECLINE_REASONS``)."""
        run.state["response"] = NOT_FOUND[prepared.language]
        run.state["citations"] = []
        run.state["declined"] = {"by": by, "why": DECLINE_REASONS[by],
                                 "closest": synthesizer.passage_refs(prepared, self.documents)}
        run.state["trace"]["declined"] = run.state["declined"]


DECLINE_REASONS = {
    "relevance": "no passage is close enough to the question (its similarity is below the relevance floor)",
    "answer": "the model said the passages do not hold the answer",
    "support": "no sentence of the draft answer is supported by the passage it cites",
    "number": "the question asks for a number and the draft answer states none",
}
"""Why an answer was declined, by the check that decided (the trace's ``declined.by``)."""


# An answer sharing this many consecutive words with one passage draws on it.
REPEATED_SPAN_WORDS = 8


def uncited_source(answer: str, passages: Sequence[str]) -> int | None:
    """The number (from 1) of the passage an answer with no ``[n]`` repeats at length, if any."""
    from rag.evaluation.answers import longest_shared_span  # the metric the evaluation reports

    if not answer.strip() or CITATION_MARK.search(answer):
        return None
    spans = [longest_shared_span(answer, [passage]) for passage in passages]
    if not spans or max(spans) < REPEATED_SPAN_WORDS:
        return None
    return spans.index(max(spans)) + 1


def positional_params(strategy: type[Strategy], args: Sequence[Any], params: dict[str, Any]) -> dict[str, Any]:
    """``params`` with ``args`` added under the names ``strategy.POSITIONAL`` gives them."""
    names = strategy.POSITIONAL
    if len(args) > len(names):
        raise TypeError(f"{strategy.__name__}() takes at most {len(names)} positional argument(s) "
                        f"({', '.join(names) or 'none'}), {len(args)} given")
    for name, value in zip(names, args, strict=False):
        if name in params:
            raise TypeError(f"{strategy.__name__}() got {name!r} both by position and by name")
        params[name] = value
    return params


def hit_row(hit: Hit, number: int | None = None) -> dict[str, Any]:
    """A chunk as the state and the stored trace keep it."""
    chunk = hit.chunk
    row = {"chunk_id": chunk.id, "document_id": chunk.document_id, "position": chunk.position,
           "score": float(hit.score), "text": chunk.text, "metadata": chunk.metadata}
    if number is not None:
        row["n"] = number
    return row


def set_chunks(run: RunContext, key: str, hits: Sequence[Hit]) -> None:
    run.state[key] = [hit_row(hit) for hit in hits]
