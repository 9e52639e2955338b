"""The MCP server (the official ``mcp`` SDK's low-level ``Server``): each of the user's
pipelines is a tool ``ask_<slug>`` (the answer and its citations, asked through the chat's own
run, so it is a conversation on the chat page) and each knowledge base a tool
``search_<slug>`` (its best chunks by BM25, with their scores).

The same server runs over stdio (``manage.py mcp``, for one user) and over streamable HTTP on
the web server (``gateway.asgi``, for whoever's API token comes with each request): both hand
it a function that says, for a request, whose tools these are."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as types
from channels.db import database_sync_to_async
from django.contrib.auth.models import AbstractBaseUser
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server

from chat.models import Conversation
from chat.services import FINAL_EVENTS, chat_run_follow, conversation_create, conversation_delete
from common.i18n import translate
from knowledge.models import KnowledgeBase
from knowledge.selectors import knowledge_base_everyday_list, knowledge_base_search, knowledge_base_slugs
from pipelines.models import Pipeline
from pipelines.selectors import pipeline_list, pipeline_slugs
from rag.core import readable_error
from rag.core.i18n import gettext_noop

logger = logging.getLogger(__name__)

SEARCH_TOP_K = 5
SEARCH_MAX_TOP_K = 50
NO_SUCH_TOOL = gettext_noop("no tool {name!r}: list the tools again, a pipeline or knowledge base may have gone")
QUESTION_NEEDED = gettext_noop("give the question as the argument 'question' (a non-empty string)")
QUERY_NEEDED = gettext_noop("give the search as the argument 'query' (a non-empty string)")
TOP_K_RANGE = gettext_noop("'top_k' must be a whole number from 1 to {limit}")

UserOf = Callable[[ServerRequestContext[Any, Any]], Awaitable[AbstractBaseUser]]
"""Whose pipelines and knowledge bases a request reaches."""
TraceUrlOf = Callable[[ServerRequestContext[Any, Any], int], str | None]


@dataclass(frozen=True)
class Target:
    """What a tool name stands for."""

    kind: str  # "ask" or "search"
    id: int
    name: str
    detail: str


def _targets(user: AbstractBaseUser) -> dict[str, Target]:
    pipelines = pipeline_slugs(user=user)
    bases = knowledge_base_slugs(user=user)
    targets = {}
    for pipeline in pipeline_list(user=user):
        targets[f"ask_{pipelines[pipeline.pk]}"] = Target("ask", pipeline.pk, pipeline.name,
                                                          pipeline.description or pipeline.knowledge_base.name)
    for base in knowledge_base_everyday_list(user=user):
        targets[f"search_{bases[base.pk]}"] = Target("search", base.pk, base.name, base.description)
    return targets


def _tool(name: str, target: Target) -> types.Tool:
    if target.kind == "ask":
        return types.Tool(
            name=name, title=f"Ask {target.name}",
            description=(f"Ask the Trellis pipeline {target.name!r} ({target.detail}) a question. It retrieves "
                         "passages from its knowledge base and answers from them, citing them as [1], [2]…; "
                         "the citations come with the answer."),
            input_schema={"type": "object", "required": ["question"], "additionalProperties": False,
                          "properties": {"question": {"type": "string", "minLength": 1,
                                                      "description": "The question, in any language."}}})
    detail = f" ({target.detail})" if target.detail else ""
    return types.Tool(
        name=name, title=f"Search {target.name}",
        description=(f"Search the Trellis knowledge base {target.name!r}{detail} with BM25 keyword ranking. "
                     "Returns its best chunks, best first, each with its BM25 score (higher is closer), "
                     "its document's name and its text."),
        input_schema={"type": "object", "required": ["query"], "additionalProperties": False,
                      "properties": {"query": {"type": "string", "minLength": 1, "description": "What to look for."},
                                     "top_k": {"type": "integer", "minimum": 1, "maximum": SEARCH_MAX_TOP_K,
                                               "default": SEARCH_TOP_K,
                                               "description": "How many chunks to return."}}})


def _error(template: str, **context: Any) -> types.CallToolResult:
    text = translate(template, context, None, fallback=template.format(**context))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def _result(text: str, structured: dict[str, Any]) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], structured_content=structured)


async def _ask(user: AbstractBaseUser, target: Target, arguments: dict[str, Any],
               trace_url: Callable[[int], str | None]) -> types.CallToolResult:
    question = arguments.get("question")
    if not isinstance(question, str) or not question.strip():
        return _error(QUESTION_NEEDED)
    pipeline = await database_sync_to_async(Pipeline.objects.get)(pk=target.id, owner=user)
    conversation = await database_sync_to_async(conversation_create)(owner=user, pipeline=pipeline,
                                                                      origin=Conversation.Origin.MCP)
    final: dict[str, Any] = {}
    async for event in chat_run_follow(conversation=conversation, user=user, question=question,
                                       pipeline_id=pipeline.pk):
        if event["type"] in FINAL_EVENTS:
            final = event
    if final.get("type") != "answer.completed":
        if final.get("message_id") is None:  # refused before anything was recorded: nothing to keep
            await database_sync_to_async(conversation_delete)(conversation=conversation)
        return types.CallToolResult(content=[types.TextContent(type="text", text=final.get("error") or str(final))],
                                    is_error=True)
    citations = final.get("citations", [])
    sources = "\n".join(f"[{citation['n']}] {citation.get('document_name') or ''}: {citation.get('preview') or ''}"
                        for citation in citations)
    text = final["answer"] + (f"\n\nSources:\n{sources}" if sources else "")
    if final.get("declined"):
        closest = "\n".join(f"- {passage.get('document_name') or ''}: {passage.get('preview') or ''}"
                            for passage in final["declined"].get("closest") or [])
        text = final["answer"] + (f"\n\nClosest passages:\n{closest}" if closest else "")
    return _result(text, {"answer": final["answer"], "citations": citations, "declined": final.get("declined"),
                          "conversation_id": conversation.pk,
                          "message_id": final["message_id"], "trace_url": trace_url(conversation.pk)})


def _search(user: AbstractBaseUser, target: Target, arguments: dict[str, Any]) -> types.CallToolResult:
    query = arguments.get("query")
    if not isinstance(query, str) or not query.strip():
        return _error(QUERY_NEEDED)
    top_k = arguments.get("top_k", SEARCH_TOP_K)
    if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= SEARCH_MAX_TOP_K:
        return _error(TOP_K_RANGE, limit=SEARCH_MAX_TOP_K)
    knowledge_base = KnowledgeBase.objects.get(pk=target.id, owner=user)
    chunks = knowledge_base_search(knowledge_base=knowledge_base, query=query, top_k=top_k)
    text = "\n\n".join(f"#{chunk['rank']} score {chunk['score']:.3f} · {chunk['document']} #{chunk['position']}\n"
                       f"{chunk['text']}" for chunk in chunks) or "No chunk matches."
    return _result(text, {"chunks": chunks})


def mcp_server(user_of: UserOf, trace_url_of: TraceUrlOf | None = None) -> Server:
    """The MCP server whose tools, for each request, are those of the user ``user_of`` finds;
    ``trace_url_of(ctx, conversation_id)`` links an answer to its conversation on the chat page."""

    async def list_tools(ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        user = await user_of(ctx)
        targets = await database_sync_to_async(_targets)(user)
        return types.ListToolsResult(tools=[_tool(name, target) for name, target in targets.items()])

    async def call_tool(ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        user = await user_of(ctx)
        target = (await database_sync_to_async(_targets)(user)).get(params.name)
        if target is None:
            return _error(NO_SUCH_TOOL, name=params.name)
        arguments = params.arguments or {}
        try:
            if target.kind == "ask":
                return await _ask(user, target, arguments,
                                  lambda conversation_id: trace_url_of(ctx, conversation_id) if trace_url_of else None)
            return await database_sync_to_async(_search)(user, target, arguments)
        except (Pipeline.DoesNotExist, KnowledgeBase.DoesNotExist):
            return _error(NO_SUCH_TOOL, name=params.name)
        except Exception as exc:
            logger.exception("the MCP tool %s failed", params.name)
            error = readable_error(exc)
            return _error(error.template, **error.context)

    return Server("trellis", version="1", title="Trellis",
                  instructions=("Tools over your Trellis workbench: ask_<pipeline> answers a question from a "
                                "pipeline's knowledge base, with citations; search_<knowledge base> returns the "
                                "chunks that best match a query, with their scores."),
                  on_list_tools=list_tools, on_call_tool=call_tool)

