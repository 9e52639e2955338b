"""The LLM contract: chat, streaming, and function calls with validated arguments."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

from rag.core import ConfigObject, TrellisError
from rag.tracing import current_recorder

from .params import LLMParams

Message = dict[str, str]
"""``{"role": "system" | "user" | "assistant", "content": "..."}``"""

_FENCED = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u3000-\u303f\uff00-\uffef]")


def estimate_tokens(text: str) -> int:
    """A model-independent token estimate: a CJK character is about one token, other text
    about four characters per token (BPE tokenizers' usual rate), rounded up."""
    cjk = len(_CJK.findall(text))
    return cjk + math.ceil((len(text) - cjk) / 4)


class LLMError(TrellisError):
    """The model or its server failed; the message is readable and never carries a secret."""


class FunctionCallError(LLMError):
    """An answer that is not a valid function call; ``problems`` lists why, for feeding back."""

    def __init__(self, problems: Sequence[str], raw: str = "") -> None:
        self.problems = list(problems)
        self.raw = raw
        super().__init__("; ".join(self.problems))


def parse_arguments(raw: str | dict[str, Any]) -> dict[str, Any]:
    """Strictly parse a function call's arguments: one JSON object (a ```json fence around it is
    tolerated, nothing else)."""
    if isinstance(raw, dict):
        return raw
    text = (raw or "").strip()
    fenced = _FENCED.match(text)
    if fenced:
        text = fenced.group(1)
    if not text:
        raise FunctionCallError(["the answer was empty; a JSON object was expected"], raw or "")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FunctionCallError([f"the answer is not valid JSON ({exc.msg} at character {exc.pos})"], raw) from None
    if not isinstance(value, dict):
        raise FunctionCallError([f"the answer is a JSON {type(value).__name__}, not an object"], raw)
    return value


GRAMMAR_LIMITS = "x-grammar-limits"
"""A schema node's bounds for a model whose output a grammar constrains, e.g. ``{"maxLength":
240}``. A small local model can repeat itself until its ``max_tokens`` (25-30 s of the 0.5B, then
a retry) where a grammar would have closed the string; validation ignores the bounds, so a hosted
model that writes a longer reason is not asked again for it."""


def schema_with_grammar_limits(schema: Any, *, apply: bool = True) -> Any:
    """``schema`` with each node's ``GRAMMAR_LIMITS`` applied as plain JSON Schema keywords, or
    with ``apply=False`` removed, as a server that enforces no grammar is sent it."""
    if isinstance(schema, list):
        return [schema_with_grammar_limits(item, apply=apply) for item in schema]
    if not isinstance(schema, dict):
        return schema
    node = {key: schema_with_grammar_limits(value, apply=apply) for key, value in schema.items()
            if key != GRAMMAR_LIMITS}
    return {**node, **schema.get(GRAMMAR_LIMITS, {})} if apply else node


def schema_problems(arguments: dict[str, Any], schema: dict[str, Any]) -> list[str]:
    """Every way ``arguments`` break ``schema``, as readable sentences with their paths."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(schema)
    problems = []
    for error in sorted(validator.iter_errors(arguments), key=lambda error: list(error.absolute_path)):
        where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error.absolute_path)
        problems.append(f"{where.lstrip('.') or 'the object'}: {error.message}")
    return problems


@dataclass
class Attempt:
    """One try at a function call: what came back and what was wrong with it."""

    raw: str
    problems: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"raw": self.raw[:2000], "problems": self.problems}


LLMParamsT = TypeVar("LLMParamsT", bound=LLMParams)


@dataclass(frozen=True)
class ReadingDefaults:
    """What a model reads when the pipeline does not say how many passages to send: at most
    ``passages`` passages within ``reading_tokens`` new prompt tokens."""

    passages: int
    reading_tokens: int


class LLM(ConfigObject[LLMParamsT]):
    """Base of LLM components. Subclasses implement ``_generate``, ``_stream`` and
    ``_function_call_text``; the base counts calls and validates function-call arguments."""

    KIND: ClassVar[str] = "llm"
    CATEGORY: ClassVar[str] = "language models"

    def generate(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> str:
        """The model's whole answer to ``messages``; ``max_tokens`` shortens the longest answer
        this call may get (never beyond the component's own ``max_tokens``)."""
        self._count()
        return self._generate(list(messages), self._answer_tokens(max_tokens))

    def stream(self, messages: Sequence[Message], *, max_tokens: int | None = None) -> Iterator[str]:
        """The answer as text deltas, as they are produced. Closing the iterator stops generation.
        ``max_tokens`` as in ``generate``."""
        self._count()
        return self._stream(list(messages), self._answer_tokens(max_tokens))

    def _answer_tokens(self, max_tokens: int | None) -> int:
        own = int(self.params.max_tokens)
        return own if max_tokens is None else max(1, min(own, int(max_tokens)))

    def call_function(
        self, messages: Sequence[Message], schema: dict[str, Any], *, name: str = "answer", description: str = ""
    ) -> dict[str, Any]:
        """Arguments of a call to function ``name`` whose parameters follow ``schema``, valid
        against it; raises ``FunctionCallError`` (with every problem) otherwise."""
        self._count()
        raw = self._function_call_text(list(messages), self._schema_to_follow(schema), name, description)
        arguments = parse_arguments(raw)
        problems = schema_problems(arguments, schema)
        if problems:
            raise FunctionCallError(problems, raw if isinstance(raw, str) else json.dumps(raw))
        return arguments

    def call_function_with_retries(
        self,
        messages: Sequence[Message],
        schema: dict[str, Any],
        *,
        check: Callable[[dict[str, Any]], list[str]] | None = None,
        max_trials: int = 3,
        name: str = "answer",
        description: str = "",
    ) -> tuple[dict[str, Any] | None, list[Attempt]]:
        """Call until the arguments are valid and ``check`` (domain rules) finds no problem, at
        most ``max_trials`` times, feeding each attempt's problems back to the model.

        Returns the accepted arguments (or None) and every attempt made.
        """
        conversation = list(messages)
        attempts: list[Attempt] = []
        for _ in range(max_trials):
            try:
                arguments = self.call_function(conversation, schema, name=name, description=description)
                problems = check(arguments) if check else []
                raw = json.dumps(arguments, ensure_ascii=False)
            except FunctionCallError as exc:
                arguments, problems, raw = None, exc.problems, exc.raw
            attempts.append(Attempt(raw, list(problems)))
            if arguments is not None and not problems:
                return arguments, attempts
            conversation = [
                *conversation,
                {"role": "assistant", "content": raw},
                {"role": "user", "content": "That answer was not usable:\n- " + "\n- ".join(problems)
                 + "\nAnswer again with one JSON object that fixes every problem."},
            ]
        return None, attempts

    def _schema_to_follow(self, schema: dict[str, Any]) -> dict[str, Any]:
        """The schema this model is asked to follow: without ``GRAMMAR_LIMITS``, which only a
        model decoding under a grammar enforces (``LocalLLM``)."""
        return schema_with_grammar_limits(schema, apply=False)

    def input_limits(self) -> dict[str, int]:
        """What bounds a prompt for this model, as far as it is known: ``context_tokens`` (the
        window, prompt and answer together), ``answer_tokens`` (the most it writes) and
        ``reading_tokens`` (the most new prompt tokens one request may send it, when set).
        Hosted models whose window is unknown give only ``answer_tokens``."""
        max_tokens = getattr(self.params, "max_tokens", None)
        return {"answer_tokens": max_tokens} if isinstance(max_tokens, int) else {}

    def reading_defaults(self) -> ReadingDefaults | None:
        """How much this model reads when the pipeline does not say how many passages to send;
        None: every passage within the input budget (a hosted model reads fast)."""
        return None

    def count_tokens(self, text: str) -> int:
        """The tokens ``text`` takes in this model's prompt; without the model's tokenizer, an
        estimate (``estimate_tokens``)."""
        return estimate_tokens(text)

    def tokens_counted_by(self) -> str:
        """How ``count_tokens`` counts now, for the trace."""
        return "estimate: CJK characters + other characters / 4"

    def _count(self) -> None:
        recorder = current_recorder()
        if recorder is not None:
            recorder.count_llm_call()

    @staticmethod
    def _count_usage(usage: Any) -> None:
        """Tell the run's recorder the tokens a response reports (an OpenAI ``usage`` object or
        dict; None when it reports none). Call it from the run's thread: the recorder is found
        through the context."""
        recorder = current_recorder()
        if recorder is None:
            return
        if usage is not None and not isinstance(usage, Mapping):
            usage = {"prompt_tokens": getattr(usage, "prompt_tokens", None),
                     "completion_tokens": getattr(usage, "completion_tokens", None)}
        recorder.count_usage(usage)

    def _generate(self, messages: list[Message], max_tokens: int) -> str:
        raise NotImplementedError

    def _stream(self, messages: list[Message], max_tokens: int) -> Iterator[str]:
        raise NotImplementedError

    def _function_call_text(self, messages: list[Message], schema: dict[str, Any], name: str,
                            description: str) -> str | dict[str, Any]:
        raise NotImplementedError


def json_only_instruction(schema: dict[str, Any], name: str, description: str) -> Message:
    """The system message that asks for a bare JSON object when tools are not available."""
    purpose = f" ({description})" if description else ""
    return {
        "role": "system",
        "content": (
            f"Answer by calling the function `{name}`{purpose}. Reply with ONLY its arguments: one JSON "
            f"object matching this JSON Schema, with no prose and no code fences.\n"
            f"{json.dumps(schema, ensure_ascii=False)}"
        ),
    }
