#!/usr/bin/env python3
"""Chat load on the scaled-out stack: the same conversations against one server, then spread
over two (``bench/chat_load.py``'s client, ``chat()``, for every conversation).

Starts ``stack.py``'s stack (two daphne servers, two Celery workers, PostgreSQL, Redis, a Chroma
server), ingests ``bench/chat_load.py``'s guide through server 1, saves its pipeline (BM25 and an
OpenAI-compatible LLM answered by a fast scripted server on loopback) and runs the load twice.
The figures in docs/deploy.md come from here.

    .venv/bin/python scripts/scaleout/chat_load.py [--chats 50] [--questions 2]

Ends with one JSON line: {"one_server": {...}, "two_servers": {...}}, each as bench/chat_load.py
reports (servers, chats, completed, failed, lost, ttft_p50_ms, ttft_p95_ms, total_s).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

import chat_load  # noqa: E402  (bench/chat_load.py)
from scripts.scaleout.stack import PYTHON, Stack  # noqa: E402

from tests.support.scripted_openai import ScriptedOpenAIServer  # noqa: E402

PASSWORD = "chat-load correct horse"


class Client:
    def __init__(self, base_url: str, session: requests.Session) -> None:
        self.base_url, self.session = base_url, session

    def call(self, method: str, path: str, **kwargs):
        headers = {"X-CSRFToken": self.session.cookies.get("csrftoken", ""), "Referer": self.base_url + "/"}
        response = self.session.request(method, self.base_url + path, headers=headers, timeout=60, **kwargs)
        response.raise_for_status()
        return response.json() if response.content else None


def prepare(stack: Stack, llm_url: str, conversations: int) -> tuple[str, int, list[int]]:
    subprocess.run([str(PYTHON), "manage.py", "shell", "-c",
                    "from django.contrib.auth import get_user_model; "
                    f"get_user_model().objects.create_user('load', password={PASSWORD!r})"],
                   env=stack.env, cwd=ROOT, check=True, capture_output=True)
    session = requests.Session()
    api = Client(stack.server_urls[0], session)
    api.call("GET", "/api/v1/auth/session/")
    api.call("POST", "/api/v1/auth/session/", json={"username": "load", "password": PASSWORD})
    base = api.call("POST", "/api/v1/knowledge-bases/", json={"name": "Load", "chunker": {
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 120, "chunk_overlap": 0}}})
    api.call("POST", f"/api/v1/knowledge-bases/{base['id']}/documents/",
             files=[("files", ("guide.txt", chat_load.GUIDE.encode(), "text/plain"))])
    deadline = time.monotonic() + 300
    while not all(document["status"] == "ready"
                  for document in api.call("GET", f"/api/v1/knowledge-bases/{base['id']}/documents/")):
        if time.monotonic() > deadline:
            raise SystemExit("ingestion did not finish")
        time.sleep(0.5)
    pipeline = api.call("POST", "/api/v1/pipelines/", json={"name": "Load", "knowledge_base": base["id"], "strategy": {
        "component": "NaiveRAG", "params": {
            "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
            "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": {
                "component": "OpenAICompatibleLLM", "params": {"base_url": llm_url, "model": "load"}}}}}}})["id"]
    made = [api.call("POST", "/api/v1/conversations/", json={"pipeline": pipeline})["id"] for _ in range(conversations)]
    return session.cookies["sessionid"], pipeline, made


def database_connections(stack: Stack) -> int:
    """Connections the stack's processes hold to PostgreSQL now (with DATABASE_CONN_MAX_AGE they stay open)."""
    import psycopg

    with psycopg.connect(stack.database_url.replace("postgres://", "postgresql://")) as connection:
        return connection.execute("SELECT count(*) - 1 FROM pg_stat_activity WHERE datname = 'trellis'").fetchone()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--questions", type=int, default=2)
    args = parser.parse_args()
    answer = ["A hybrid ", "retriever ", "fuses ", "BM25 ", "and ", "dense ", "search ", "[1]."]
    with ScriptedOpenAIServer(default_answer=answer, record=False) as llm, Stack(servers=2, workers=2) as stack:
        session, pipeline, conversations = prepare(stack, llm.base_url, 2 * args.chats)
        # A warm-up question per server, so neither run pays for building the pipeline.
        servers = stack.server_urls
        asyncio.run(chat_load.load(servers, session, pipeline, conversations[:2], 1))
        one = asyncio.run(chat_load.load(servers[:1], session, pipeline, conversations[:args.chats], args.questions))
        two = asyncio.run(chat_load.load(servers, session, pipeline, conversations[args.chats:], args.questions))
        two["database_connections"] = database_connections(stack)
    for name, figures in (("one server", one), ("two servers", two)):
        print(f"{name}: completed {figures['completed']}, failed {figures['failed']}, lost {figures['lost']}, time to first token "
              f"p50 {figures['ttft_p50_ms']} ms, p95 {figures['ttft_p95_ms']} ms, total {figures['total_s']} s",
              file=sys.stderr)
    print(json.dumps({"one_server": one, "two_servers": two}))


if __name__ == "__main__":
    main()
