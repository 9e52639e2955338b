"""A chat answer belongs to its conversation across server processes: asked through server 1,
it is followed by a socket opened on server 2 in the middle of it (the events so far from the
database, the rest through Redis), and a cancel sent through server 2 stops the next answer
that server 1 is writing, which keeps its trace."""

from __future__ import annotations

import json
import threading
import time

import pytest

from tests.support.scripted_openai import ScriptedOpenAIServer, chat_stream

from .test_scaleout import Api, signed_in  # noqa: F401  (fixture)

pytestmark = [pytest.mark.scaleout, pytest.mark.timeout(420)]

CHAT = "/v1/chat/completions"
FINAL = ("answer.completed", "run.failed", "run.cancelled")
# 400 words, then a sentence the notes support (an answer nothing supports would be declined).
WORDS = [f"word{n} " for n in range(399)] + ["word399. ", "Reciprocal rank fusion adds one over sixty plus each rank [1]."]
"""20 s of answer at 20 tokens a second: long enough to open a socket on server 2 in the middle."""


def receive(ws, until) -> list[dict]:
    events = []
    while not events or not until(events):
        events.append(json.loads(ws.recv(timeout=120)))
    return events


def deltas(count: int):
    return lambda events: sum(event["type"] == "generation.delta" for event in events) >= count


def final(events: list[dict]) -> bool:
    return events[-1]["type"] in FINAL


class Reader(threading.Thread):
    """Reads a socket to its run's final event, so the client never stops reading (a client
    that does stops answering pings, and the connection is closed)."""

    def __init__(self, ws) -> None:
        super().__init__(daemon=True)
        self.ws, self.events, self.error = ws, [], None
        self.started_writing = threading.Event()

    def run(self) -> None:
        try:
            while not self.events or not final(self.events):
                self.events.append(json.loads(self.ws.recv(timeout=120)))
                if deltas(3)(self.events):
                    self.started_writing.set()
        except BaseException as exc:
            self.error = exc
            self.started_writing.set()

    def result(self) -> list[dict]:
        self.join(150)
        assert self.error is None and self.events and final(self.events), (self.error, self.events[-1:])
        return self.events


def test_an_answer_asked_through_server_1_is_followed_and_stopped_through_server_2(stack, signed_in):  # noqa: F811
    server1, server2 = (Api(signed_in, url) for url in stack.server_urls)
    kb_id = server1.call("POST", "/api/v1/knowledge-bases/", 201, json={"name": "Fusion notes"})["id"]
    files = [("files", ("fusion.txt", b"Reciprocal rank fusion adds one over sixty plus each rank.", "text/plain"))]
    server1.call("POST", f"/api/v1/knowledge-bases/{kb_id}/documents/", 201, files=files)
    deadline = time.monotonic() + 180
    while server1.call("GET", f"/api/v1/knowledge-bases/{kb_id}/documents/", 200)[0]["status"] != "ready":
        assert time.monotonic() < deadline, "the document was not ingested"
        time.sleep(0.5)

    with ScriptedOpenAIServer() as llm:
        scripted = {"component": "OpenAICompatibleLLM", "params": {"base_url": llm.base_url, "model": "s"}}
        pipeline = server1.call("POST", "/api/v1/pipelines/", 201, json={
            "name": "Keyword", "knowledge_base": kb_id, "strategy": {"component": "NaiveRAG", "params": {
                "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
                "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": scripted}}}}})["id"]
        conversation = server1.call("POST", "/api/v1/conversations/", 201, json={"pipeline": pipeline})["id"]
        path = f"/ws/chat/{conversation}/"
        ask = json.dumps({"type": "ask", "question": "How does fusion score?", "pipeline_id": pipeline})
        with server2.socket(path):
            pass  # server 2 has served this path once: opening it mid-run takes no warm-up

        llm.enqueue(CHAT, chat_stream(WORDS, interval=0.05))
        with server1.socket(path) as asking:
            reader = Reader(asking)
            reader.start()
            asking.send(ask)
            assert reader.started_writing.wait(120) and reader.error is None, reader.error
            with server2.socket(path) as watching:
                followed = receive(watching, final)
            asked = reader.result()
        assert followed[0]["type"] == "run.started", "server 2's socket opened after the answer ended"
        assert followed == asked, "server 2's socket got the same events, the first ones replayed"
        assert [event["seq"] for event in followed] == list(range(1, len(followed) + 1))
        assert followed[-1]["type"] == "answer.completed" and followed[-1]["answer"] == "".join(WORDS)

        llm.enqueue(CHAT, chat_stream(WORDS, interval=0.05))
        with server1.socket(path) as asking, server2.socket(path) as stopping:
            reader = Reader(asking)
            reader.start()
            asking.send(ask)
            receive(stopping, deltas(3))
            stopping.send(json.dumps({"type": "cancel"}))
            stopped = reader.result()[-1]
        assert stopped["type"] == "run.cancelled", stopped
        assert 0 < len(stopped["answer"].split()) < len(WORDS)
        # A second turn: the question stands alone, so it is searched as asked (and the trace says so).
        assert [step["step"] for step in stopped["trace"]["steps"]] == ["search_question", "retrieve", "generate"]
        messages = server2.call("GET", f"/api/v1/conversations/{conversation}/messages/", 200)
        assert [message["status"] for message in messages[1::2]] == ["done", "cancelled"]
        assert messages[-1]["trace"] == stopped["trace"]
