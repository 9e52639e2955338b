"""The MCP server, driven by the SDK's own client: over stdio against ``manage.py mcp``, and
over streamable HTTP against ``/mcp`` on the served application. Each lists the token owner's
tools (``ask_<pipeline>``, ``search_<knowledge base>``) and calls one."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
import httpx2
import pytest
from django.db import connection
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from accounts.models import ApiToken
from accounts.services import api_token_create, api_token_revoke
from chat.models import Conversation
from knowledge.services import knowledge_base_create, knowledge_base_promote
from tests.support.scripted_openai import chat_stream

from .conftest import naive_pipeline

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[3]
CHAT = "/v1/chat/completions"


def stdio_server(token: str) -> StdioServerParameters:
    """``manage.py mcp`` as an MCP client starts it, over this test's (committed) database."""
    environment = {**os.environ, "DATABASE_URL": f"sqlite:///{connection.settings_dict['NAME']}",
                   "TRELLIS_API_TOKEN": token, "LOG_LEVEL": "WARNING"}
    return StdioServerParameters(command=sys.executable, args=["manage.py", "mcp"], cwd=str(ROOT), env=environment)


def http_server(server_url: str, token: str) -> object:
    return streamable_http_client(f"{server_url}/mcp",
                                  http_client=httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}))


def test_the_stdio_server_lists_the_owners_tools_and_answers_with_citations(owner, stranger, knowledge_base,
                                                                             scripted_openai, token):
    naive_pipeline(owner, knowledge_base, scripted_openai, name="Keyword search")
    knowledge_base_create(owner=stranger, name="Not yours", chunker={"component": "RecursiveCharacterChunker",
                                                                      "params": {}})
    scripted_openai.enqueue(CHAT, chat_stream(["Fused by reciprocal rank fusion [1]."]))

    async def session() -> tuple[list, object]:
        async with Client(stdio_server(token), read_timeout_seconds=120) as client:
            tools = (await client.list_tools()).tools
            answer = await client.call_tool("ask_keyword-search", {"question": "What is a hybrid retriever?"})
            return tools, answer

    tools, answer = anyio.run(session)
    assert sorted(tool.name for tool in tools) == ["ask_keyword-search", "search_guide"]
    assert tools[0].input_schema["required"] in (["question"], ["query"])
    assert not answer.is_error, answer.content
    assert answer.structured_content["answer"] == "Fused by reciprocal rank fusion [1]."
    assert answer.structured_content["citations"][0]["n"] == 1
    assert "Sources:\n[1] guide.txt:" in answer.content[0].text
    conversation = Conversation.objects.get(owner=owner)  # on the chat page, with its trace
    assert conversation.pk == answer.structured_content["conversation_id"]
    assert conversation.origin == Conversation.Origin.MCP  # marked as asked by a program
    assert conversation.messages.get(role="assistant").trace.trace["strategy"] == "NaiveRAG"


def test_the_http_server_searches_a_knowledge_base_for_the_tokens_owner_only(owner, stranger, knowledge_base,
                                                                               server_url, token, stranger_token):
    async def owners_session() -> tuple[list, object, object]:
        async with Client(http_server(server_url, token)) as client:
            tools = (await client.list_tools()).tools
            found = await client.call_tool("search_guide", {"query": "rank fusion of the neighbours", "top_k": 2})
            bad = await client.call_tool("search_guide", {"query": "fusion", "top_k": 0})
            return tools, found, bad

    tools, found, bad = anyio.run(owners_session)
    assert [tool.name for tool in tools] == ["search_guide"]
    chunks = found.structured_content["chunks"]
    assert [chunk["rank"] for chunk in chunks] == [1, 2] and chunks[0]["score"] >= chunks[1]["score"] > 0
    assert {chunk["document"] for chunk in chunks} == {"guide.txt"}
    assert "reciprocal rank fusion" in " ".join(chunk["text"] for chunk in chunks)
    assert bad.is_error and "top_k" in bad.content[0].text

    async def strangers_session() -> tuple[list, object]:
        async with Client(http_server(server_url, stranger_token)) as client:
            return (await client.list_tools()).tools, await client.call_tool("search_guide", {"query": "fusion"})

    tools, refused = anyio.run(strangers_session)
    assert tools == [] and refused.is_error and "no tool 'search_guide'" in refused.content[0].text


def test_the_http_server_refuses_a_missing_revoked_or_throttled_token(owner, server_url, token, settings):
    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    missing = httpx2.post(f"{server_url}/mcp", json=listing)
    assert missing.status_code == 401 and missing.headers["www-authenticate"].startswith("Bearer")
    assert missing.json()["error"] == "invalid_token"
    api_token_revoke(token=ApiToken.objects.get(owner=owner))
    revoked = httpx2.post(f"{server_url}/mcp", json=listing, headers={"Authorization": f"Bearer {token}"})
    assert revoked.status_code == 401 and "revoked" in revoked.json()["error_description"]
    settings.TRELLIS_API_RATE_LIMIT = 1
    other = {"Authorization": f"Bearer {api_token_create(owner=owner, name='agent').secret}"}
    first, second = (httpx2.post(f"{server_url}/mcp", json=listing, headers=other) for _ in range(2))
    assert first.status_code != 429 and second.status_code == 429 and int(second.headers["retry-after"]) >= 1


def test_an_evaluation_corpus_is_no_search_tool_until_it_is_promoted(owner, knowledge_base, server_url, token):
    corpus = knowledge_base_create(owner=owner, name="Evaluation · cranfield-small", evaluation_only=True,
                                   chunker={"component": "RecursiveCharacterChunker", "params": {}})

    async def names() -> list[str]:
        async with Client(http_server(server_url, token)) as client:
            return sorted(tool.name for tool in (await client.list_tools()).tools)

    async def search() -> object:
        async with Client(http_server(server_url, token)) as client:
            return await client.call_tool("search_evaluation-cranfield-small", {"query": "wing"})

    assert anyio.run(names) == ["search_guide"]
    refused = anyio.run(search)
    assert refused.is_error and "no tool 'search_evaluation-cranfield-small'" in refused.content[0].text
    knowledge_base_promote(knowledge_base=corpus)
    assert anyio.run(names) == ["search_evaluation-cranfield-small", "search_guide"]
    assert not anyio.run(search).is_error
