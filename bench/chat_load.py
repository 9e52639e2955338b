"""Load check of the chat: N concurrent websocket conversations against a real server.

Without ``--url`` it sets everything up in a temporary data directory: a migrated SQLite
database, a user, a knowledge base with a small ready document, a pipeline (BM25 + an
OpenAI-compatible LLM served by a fast scripted server on loopback), then starts daphne on a
free port. Each chat asks its questions one after the other over ``ws/chat/<id>/``.

    .venv/bin/python bench/chat_load.py [--chats 50] [--questions 2]
    .venv/bin/python bench/chat_load.py --chats 5 --questions 1   # a quick check that it runs
    .venv/bin/python bench/chat_load.py --url http://127.0.0.1:8000 --session <sessionid> --pipeline 3

Ends with one JSON line: chats, completed, failed, lost, ttft_p50_ms, ttft_p95_ms, total_s. ``lost``
counts answers that never arrived (neither ``answer.completed`` nor ``run.failed`` came back)
plus completed answers that the server did not store as ``done`` with the streamed text (read
back through the messages API afterwards).
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "backend"), str(ROOT)]

QUESTIONS = ["What is a hybrid retriever?", "How does retrieve-then-expand work?", "What does the agentic ensemble do?"]
GUIDE = (
    "A hybrid retriever fuses BM25 keyword search and dense semantic search with reciprocal rank fusion.\n\n"
    "Retrieve-then-expand returns each retrieved chunk with its neighbours in the document.\n\n"
    "The agentic ensemble lets an LLM choose which retrievers to consult, round by round."
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def percentile(values: list[float], share: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def prepare(data_dir: Path, llm_url: str, chats: int) -> tuple[str, int, list[int]]:
    """Database, user, knowledge base, pipeline and conversations; returns (session, pipeline, conversations)."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.contrib.sessions.backends.db import SessionStore
    from django.core.files.uploadedfile import SimpleUploadedFile
    from django.core.management import call_command

    import jobs
    from chat.services import conversation_create
    from knowledge.services import documents_upload, knowledge_base_create
    from pipelines.services import pipeline_create

    call_command("migrate", verbosity=0)
    user = get_user_model().objects.create_user(username="load", password="load-test-password")
    base = knowledge_base_create(owner=user, name="Load", chunker={
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 120, "chunk_overlap": 0}})
    documents_upload(knowledge_base=base, files=[SimpleUploadedFile("guide.txt", GUIDE.encode())])
    if not jobs.wait_until_idle(300):
        raise SystemExit("ingestion did not finish")
    pipeline = pipeline_create(owner=user, name="Load", knowledge_base=base, strategy={
        "component": "NaiveRAG", "params": {
            "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
            "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": {
                "component": "OpenAICompatibleLLM", "params": {"base_url": llm_url, "model": "load"}}}}}})
    conversations = [conversation_create(owner=user, pipeline=pipeline).pk for _ in range(chats)]
    session = SessionStore()
    session["_auth_user_id"] = str(user.pk)
    session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
    session["_auth_user_hash"] = user.get_session_auth_hash()
    session.create()
    return session.session_key, pipeline.pk, conversations


async def chat(url: str, session: str, pipeline: int, conversation: int, questions: int,
               answers: dict[int, str]) -> tuple[list[float], int, int]:
    """One conversation: ask ``questions`` in turn; returns (time-to-first-token list, completed,
    failed). Each completed answer's text is put in ``answers`` under its message id."""
    import websockets

    address = url.replace("http", "ws", 1).rstrip("/") + f"/ws/chat/{conversation}/"
    headers = {"Cookie": f"sessionid={session}", "Origin": url.rstrip("/")}
    ttfts, completed, failed = [], 0, 0
    async with websockets.connect(address, additional_headers=headers, open_timeout=30, max_size=None) as ws:
        for index in range(questions):
            asked = time.perf_counter()
            first = None
            await ws.send(json.dumps({"type": "ask", "question": QUESTIONS[index % len(QUESTIONS)],
                                      "pipeline_id": pipeline}))
            while True:
                event = json.loads(await asyncio.wait_for(ws.recv(), timeout=120))
                if event["type"] == "generation.delta" and first is None:
                    first = time.perf_counter()
                elif event["type"] == "answer.completed":
                    completed += 1
                    answers[event["message_id"]] = event["answer"]
                    ttfts.append((first - asked) * 1000 if first else float("nan"))
                    break
                elif event["type"] in ("run.failed", "run.cancelled"):
                    failed += 1
                    print(f"  conversation {conversation}: {event.get('error', event['type'])}", file=sys.stderr)
                    break
    return ttfts, completed, failed


def stored_answers(url: str, session: str, conversations: list[int]) -> dict[int, tuple[str, str]]:
    """``{message id: (status, text)}`` of every assistant message, read through the API."""
    stored: dict[int, tuple[str, str]] = {}
    for conversation in conversations:
        request = urllib.request.Request(f"{url.rstrip('/')}/api/v1/conversations/{conversation}/messages/",
                                         headers={"Cookie": f"sessionid={session}"})
        for message in json.loads(urllib.request.urlopen(request, timeout=60).read()):
            if message["role"] == "assistant":
                stored[message["id"]] = (message["status"], message["text"])
    return stored


async def load(urls: list[str], session: str, pipeline: int, conversations: list[int], questions: int) -> dict:
    """Every conversation at once, conversation i on server i mod len(urls); answers are read
    back through the first server."""
    started = time.perf_counter()
    answers: dict[int, str] = {}
    results = await asyncio.gather(*(chat(urls[index % len(urls)], session, pipeline, conversation, questions, answers)
                                     for index, conversation in enumerate(conversations)), return_exceptions=True)
    total = time.perf_counter() - started
    ttfts, completed, failed = [], 0, 0
    for result in results:
        if isinstance(result, BaseException):
            failed += questions
            print(f"  a chat broke: {type(result).__name__}: {result}", file=sys.stderr)
            continue
        ttfts += [value for value in result[0] if value == value]
        completed += result[1]
        failed += result[2]
    never_arrived = len(conversations) * questions - completed - sum(
        result[2] for result in results if not isinstance(result, BaseException))
    stored = await asyncio.to_thread(stored_answers, urls[0], session, conversations)
    not_stored = sum(stored.get(message_id) != ("done", text) for message_id, text in answers.items())
    return {"servers": len(urls), "chats": len(conversations), "questions_per_chat": questions,
            "completed": completed, "failed": failed, "lost": never_arrived + not_stored,
            "ttft_p50_ms": round(percentile(ttfts, 0.5), 1), "ttft_p95_ms": round(percentile(ttfts, 0.95), 1),
            "mean_ttft_ms": round(statistics.fmean(ttfts), 1) if ttfts else None, "total_s": round(total, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chats", type=int, default=50)
    parser.add_argument("--questions", type=int, default=2)
    parser.add_argument("--url", help="an already running server (needs --session and --pipeline)")
    parser.add_argument("--session", help="a session cookie value of a signed-in user (with --url)")
    parser.add_argument("--pipeline", type=int, help="a ready pipeline of that user (with --url)")
    args = parser.parse_args()

    if args.url:
        if not (args.session and args.pipeline):
            parser.error("--url needs --session and --pipeline")
        # Session-authenticated writes need the CSRF token the session endpoint hands out.
        probe = urllib.request.urlopen(urllib.request.Request(
            args.url.rstrip("/") + "/api/v1/auth/session/", headers={"Cookie": f"sessionid={args.session}"}))
        token = next(part.split("=", 1)[1] for header in probe.headers.get_all("Set-Cookie") or []
                     for part in header.split(";") if part.strip().startswith("csrftoken="))
        conversations = []
        for _ in range(args.chats):
            request = urllib.request.Request(args.url.rstrip("/") + "/api/v1/conversations/", method="POST",
                                             data=json.dumps({"pipeline": args.pipeline}).encode(),
                                             headers={"Content-Type": "application/json", "X-CSRFToken": token,
                                                      "Referer": args.url, "Origin": args.url.rstrip("/"),
                                                      "Cookie": f"sessionid={args.session}; csrftoken={token}"})
            conversations.append(json.loads(urllib.request.urlopen(request).read())["id"])
        figures = asyncio.run(load([args.url], args.session, args.pipeline, conversations, args.questions))
        print(json.dumps(figures))
        return

    from tests.support.scripted_openai import ScriptedOpenAIServer

    data_dir = Path(tempfile.mkdtemp(prefix="trellis-chat-load-"))
    atexit.register(shutil.rmtree, data_dir, ignore_errors=True)  # its assembled models weigh ~60 MB
    answer = ["A hybrid ", "retriever ", "fuses ", "BM25 ", "and ", "dense ", "search ", "[1]."]
    with ScriptedOpenAIServer(default_answer=answer, record=False) as llm:
        llm_origin = llm.base_url.split("://", 1)[1].split("/", 1)[0]
        env = {**os.environ, "TRELLIS_DATA_DIR": str(data_dir), "DJANGO_SETTINGS_MODULE": "config.settings",
               "SECRET_KEY": "chat-load-secret", "DEBUG": "0", "HF_HUB_OFFLINE": "1", "LOG_LEVEL": "WARNING",
               "TRELLIS_CREDENTIALS_KEY": "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=",
               # One user asks in every conversation at once: not the per-user cap this measures.
               "TRELLIS_MAX_CONCURRENT_RUNS_PER_USER": "0", "TRELLIS_SESSION_API_RATE_LIMIT": "0",
               # The pipeline's user is no administrator, and the outbound policy keeps such users'
               # pipelines off loopback: this server, and only it, allows the scripted LLM's one port,
               # as an administrator would (the caller's own allow-list is kept beside it).
               "TRELLIS_OUTBOUND_ALLOW": ",".join(filter(None, [os.environ.get("TRELLIS_OUTBOUND_ALLOW"), llm_origin])),
               "PYTHONPATH": f"{ROOT / 'backend'}:{ROOT}"}
        os.environ.update(env)
        session, pipeline, conversations = prepare(data_dir, llm.base_url, args.chats)
        port = free_port()
        server = subprocess.Popen([sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port),
                                   "--websocket_connect_timeout", "30", "config.asgi:application"], env=env, cwd=ROOT,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        url = f"http://127.0.0.1:{port}"
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(url + "/api/v1/auth/session/", timeout=1)
                    break
                except OSError:
                    if server.poll() is not None:
                        raise SystemExit("daphne exited: " + server.stderr.read().decode()[-2000:]) from None
                    time.sleep(0.2)
            print(f"server up at {url}; {args.chats} chats × {args.questions} questions", file=sys.stderr)
            figures = asyncio.run(load([url], session, pipeline, conversations, args.questions))
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"completed {figures['completed']}, failed {figures['failed']}, lost {figures['lost']}, "
          f"time to first token p50 {figures['ttft_p50_ms']} ms, p95 {figures['ttft_p95_ms']} ms, "
          f"total {figures['total_s']} s", file=sys.stderr)
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
