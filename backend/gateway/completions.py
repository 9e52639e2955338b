"""The OpenAI chat-completions format: reading a request, writing a completion, its stream
chunks and errors. Only the fields Trellis can honour are read; the rest (``temperature``,
``tools``…) belong to the pipeline, which sets them itself, and are ignored as OpenAI-compatible
servers ignore what they do not support."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from chat.services import QUESTION_MAX_LENGTH
from common.i18n import translate
from rag.core.i18n import gettext_noop

MODEL_MAX_LENGTH = 200
"""The longest ``model``: a pipeline's slug or id is far shorter."""
ROLES_KEPT = ("user", "assistant")
"""The roles that make the history. A system prompt is the pipeline's own; tool messages
belong to a client's own tools, which a pipeline does not call."""


class BadRequest(Exception):
    """A request body the API cannot read; ``param`` names the field (OpenAI's ``param``)."""

    def __init__(self, template: str, param: str | None = None, **context: Any) -> None:
        super().__init__(template.format(**context))
        self.template, self.param, self.context = template, param, context


@dataclass(frozen=True)
class ChatRequest:
    model: str
    question: str
    history: list[dict[str, str]]
    stream: bool
    include_usage: bool = False
    """``stream_options.include_usage``: a streamed answer ends with a chunk holding ``usage``."""


def _text(content: Any, param: str) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for part in content:
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise BadRequest(gettext_noop("each content part must be an object with a type"), param)
            if part["type"] == "text":
                if not isinstance(part.get("text"), str):
                    raise BadRequest(gettext_noop("a text part must have a text"), param)
                parts.append(part["text"])
        return "\n".join(parts)
    raise BadRequest(gettext_noop("a message's content must be a string or a list of content parts"), param)


def chat_request(body: Any) -> ChatRequest:
    """The question, the earlier turns (``user``/``assistant`` pairs, oldest first) and the
    options of a ``POST /v1/chat/completions`` body; ``BadRequest`` when it cannot be read."""
    if not isinstance(body, dict):
        raise BadRequest(gettext_noop("the body must be a JSON object"))
    model = body.get("model")
    if not isinstance(model, str) or not model.strip():
        raise BadRequest(gettext_noop("name a pipeline in 'model' (GET /v1/models lists yours)"), "model")
    if len(model) > MODEL_MAX_LENGTH:
        raise BadRequest(gettext_noop("'model' is longer than {limit} characters; GET /v1/models lists your "
                                      "pipelines"), "model", limit=MODEL_MAX_LENGTH)
    stream = body.get("stream", False)
    if stream is not None and not isinstance(stream, bool):
        raise BadRequest(gettext_noop("'stream' must be true or false"), "stream")
    stream_options = body.get("stream_options")
    if stream_options is not None and (not isinstance(stream_options, dict)
                                       or not isinstance(stream_options.get("include_usage", False), bool)):
        raise BadRequest(gettext_noop("'stream_options' must be an object whose include_usage is true or false"),
                         "stream_options")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest(gettext_noop("'messages' must be a non-empty list of messages"), "messages")
    read = []
    for index, message in enumerate(messages):
        param = f"messages[{index}]"
        if not isinstance(message, dict) or not isinstance(message.get("role"), str):
            raise BadRequest(gettext_noop("each message must be an object with a role"), param)
        read.append((message["role"], _text(message.get("content"), f"{param}.content")))
    role, question = read[-1]
    if role != "user" or not question.strip():
        raise BadRequest(gettext_noop("the last message must be the user's question, with text"),
                         f"messages[{len(read) - 1}]")
    if len(question) > QUESTION_MAX_LENGTH:
        raise BadRequest(gettext_noop("the question is longer than {limit} characters"),
                         f"messages[{len(read) - 1}].content", limit=QUESTION_MAX_LENGTH)
    # Only the latest turns are kept: they are all a run reads, and each is stored with the
    # conversation, so a long history must not become thousands of rows per request.
    history = _turns(read[:-1])[-2 * settings.TRELLIS_GATEWAY_HISTORY_TURNS:] \
        if settings.TRELLIS_GATEWAY_HISTORY_TURNS > 0 else []
    include_usage = bool(stream) and bool((stream_options or {}).get("include_usage", False))
    return ChatRequest(model.strip(), question, history, bool(stream), include_usage)


def _turns(messages: list[tuple[str, str]]) -> list[dict[str, str]]:
    """Earlier messages as question–answer pairs: consecutive messages of one role read as one,
    and a question left without an answer (or an answer without a question) is no turn."""
    merged: list[list[str]] = []
    for role, text in messages:
        if role not in ROLES_KEPT or not text.strip():
            continue
        if merged and merged[-1][0] == role:
            merged[-1][1] += "\n\n" + text
        else:
            merged.append([role, text])
    history = []
    for first, second in zip(merged, merged[1:], strict=False):
        if first[0] == "user" and second[0] == "assistant":
            history += [{"role": "user", "content": first[1]}, {"role": "assistant", "content": second[1]}]
    return history


def error_body(template: str, code: str, language: str | None, *, kind: str = "invalid_request_error",
               param: str | None = None, **context: Any) -> dict[str, Any]:
    """OpenAI's error shape, the message in ``language``."""
    message = translate(template, context, language, fallback=template.format(**context))
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def completion_id(message_id: int) -> str:
    return f"chatcmpl-trellis-{message_id}"


def extension(final: dict[str, Any], trace_url: str) -> dict[str, Any]:
    """The ``trellis`` field: what standard clients ignore and Trellis-aware ones show."""
    return {"citations": final.get("citations", []), "trace_url": trace_url, "message_id": final.get("message_id"),
            "declined": final.get("declined"), "unsupported": final.get("unsupported", []),
            "search_question": search_question(final.get("trace") or {})}


def search_question(trace: dict[str, Any]) -> str | None:
    """The question the turn searched (a follow-up rewritten to stand alone), from its trace."""
    for step in trace.get("steps") or []:
        if step.get("step") == "search_question":
            return step.get("search_question")
        if step.get("step") == "retrieve":
            return step.get("query")
    return None


def usage(trace: dict[str, Any]) -> dict[str, int] | None:
    """OpenAI's ``usage`` of an answer: the tokens read and written summed over every LLM call
    the run made — the answer's, and those of retrieval and checks (an agentic plan, an LLM
    re-ranking, a follow-up rewritten), all of which the pipeline spent on this question. None
    when a model server did not report its counts for some call: a guess is not a count."""
    counted = trace.get("usage")
    if not isinstance(counted, dict) or counted.get("responses_without_usage"):
        return None
    return {"prompt_tokens": counted["prompt_tokens"], "completion_tokens": counted["completion_tokens"],
            "total_tokens": counted["total_tokens"]}


def completion(final: dict[str, Any], model: str, trace_url: str) -> dict[str, Any]:
    """A ``chat.completion`` of a finished answer (``answer.completed``), with its ``usage``."""
    return {"id": completion_id(final["message_id"]), "object": "chat.completion", "created": int(time.time()),
            "model": model, "system_fingerprint": None,
            "choices": [{"index": 0, "finish_reason": "stop", "logprobs": None,
                         "message": {"role": "assistant", "content": final["answer"], "refusal": None}}],
            "usage": usage(final.get("trace") or {}),
            "trellis": extension(final, trace_url)}


def usage_chunk(message_id: int, model: str, counted: dict[str, int] | None) -> bytes:
    """The last chunk of a stream asked with ``include_usage``: no choices, the answer's usage."""
    return sse({"id": completion_id(message_id), "object": "chat.completion.chunk", "created": int(time.time()),
                "model": model, "system_fingerprint": None, "choices": [], "usage": counted})


def chunk(message_id: int, model: str, delta: dict[str, Any], finish_reason: str | None = None,
          **extra: Any) -> bytes:
    """One server-sent event of a streamed answer (``chat.completion.chunk``)."""
    body = {"id": completion_id(message_id), "object": "chat.completion.chunk", "created": int(time.time()),
            "model": model, "system_fingerprint": None,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}], **extra}
    return sse(body)


def sse(body: Any) -> bytes:
    return f"data: {json.dumps(body, ensure_ascii=False)}\n\n".encode()


DONE = b"data: [DONE]\n\n"
