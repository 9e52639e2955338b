"""Crash safety of the embedded server: a real daphne process over its own data directory,
killed with SIGKILL while a document is being embedded, then started again; and the SQLite
default (WAL) under concurrent uploads and chats."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import websockets

from tests.support.scripted_openai import ScriptedOpenAIServer

from .embedded import EmbeddedServer

pytestmark = [pytest.mark.integration, pytest.mark.slow]

SMALL = ("Pear trees are pruned in winter, when the buds are dormant. Orchard sentence about pruning "
         "pears and the spurs that carry next year's fruit.")


def big_text(chunks: int) -> str:
    """About ``chunks`` chunks of 200 characters, each a different sentence."""
    return "\n\n".join(f"Orchard sentence {index}: the espalier on wall {index % 37} is pruned to spur {index % 11} "
                       f"in winter, and tree {index} is tied along wire {index % 5} before the sap rises."
                       for index in range(chunks))


def document_row(server: EmbeddedServer, document_id: int) -> tuple[str, int, int]:
    """(status, progress_done, attempt) read straight from the server's SQLite file."""
    with sqlite3.connect(f"file:{server.database()}?mode=ro", uri=True, timeout=10) as connection:
        return connection.execute("SELECT status, progress_done, attempt FROM knowledge_document WHERE id = ?",
                                  (document_id,)).fetchone()


def wait_for(server: EmbeddedServer, document_id: int, condition, timeout: float) -> tuple[str, int, int]:
    deadline = time.monotonic() + timeout
    row = None
    while time.monotonic() < deadline:
        row = document_row(server, document_id)
        if condition(row):
            return row
        time.sleep(0.05)
    raise AssertionError(f"document {document_id} never met the condition; last seen {row}\n"
                         f"{server.log_text()[-3000:]}")


def upload(client, knowledge_base: int, name: str, text: str) -> int:
    response = client.post(f"/api/v1/knowledge-bases/{knowledge_base}/documents/",
                           files={"files": (name, text.encode(), "text/plain")})
    assert response.status_code == 201, response.text
    return response.json()["documents"][0]["id"]


@pytest.fixture
def server(tmp_path):
    embedded = EmbeddedServer(tmp_path / "data")
    embedded.data_dir.mkdir()
    yield embedded
    embedded.stop()


def test_a_server_killed_while_embedding_leaves_no_vectors_and_finishes_the_document_after_a_restart(server):
    started = time.monotonic()
    prepared = server.prepare(chunk_size=200)
    server.start()
    with server.client() as client:
        small = upload(client, prepared["knowledge_base"], "small.txt", SMALL)
        wait_for(server, small, lambda row: row[0] == "ready", 180)
        big = upload(client, prepared["knowledge_base"], "big.txt", big_text(1200))
    # Killed once at least one slice of vectors was computed (the old pipeline had stored it).
    status, done, attempt = wait_for(server, big, lambda row: row[0] == "embedding" and row[1] >= 256, 180)
    server.kill()
    killed_at = time.monotonic()

    after_kill = server.run("inspect", str(big))
    assert after_kill["status"] == "embedding" and after_kill["attempt"] == attempt
    assert len(after_kill["chunk_ids"]) > 1000, "the chunk rows are written before embedding starts"
    assert after_kill["vector_ids"] == [], f"{len(after_kill['vector_ids'])} vectors of a document that is not ready"
    assert big not in after_kill["bm25_documents"] and small in after_kill["bm25_documents"]
    assert after_kill["bm25_hit_documents"] == [small]
    version = after_kill["content_version"]

    server.start()  # config/asgi.py re-queues what the crash interrupted
    wait_for(server, big, lambda row: row[0] in ("ready", "failed"), 300)
    recovered = server.run("inspect", str(big))
    assert recovered["status"] == "ready", recovered["error"]
    assert recovered["attempt"] == attempt + 1, "re-queued exactly once"
    assert recovered["content_version"] == version + 1, "turned ready exactly once"
    assert recovered["vector_ids"] == recovered["chunk_ids"], "every chunk has exactly one vector, no stale ones"
    assert len(recovered["chunk_ids"]) == len(after_kill["chunk_ids"])
    assert big in recovered["bm25_documents"]
    assert document_row(server, small)[0] == "ready"
    print(f"killed at {done} embedded chunks after {killed_at - started:.0f} s; recovered in "
          f"{time.monotonic() - killed_at:.0f} s")


async def _chat(server: EmbeddedServer, conversation: int, pipeline: int) -> str:
    address = server.url.replace("http", "ws", 1) + f"/ws/chat/{conversation}/"
    headers = {"Cookie": f"sessionid={server.session}", "Origin": server.url}
    async with websockets.connect(address, additional_headers=headers, open_timeout=60) as socket:
        await socket.send(json.dumps({"type": "ask", "question": "How are pear trees pruned?",
                                      "pipeline_id": pipeline}))
        while True:
            event = json.loads(await asyncio.wait_for(socket.recv(), timeout=120))
            if event["type"] in ("answer.completed", "run.failed"):
                return event["type"] if event["type"] == "answer.completed" else event["error"]


def test_concurrent_uploads_and_chats_on_sqlite_do_not_hit_a_locked_database(server):
    with ScriptedOpenAIServer(default_answer=["Pears ", "are ", "pruned ", "in ", "winter."], record=False) as llm:
        prepared = server.prepare(chunk_size=200, llm_url=llm.base_url, conversations=12)
        server.start()
        with server.client() as client:
            first = upload(client, prepared["knowledge_base"], "first.txt", SMALL)
            wait_for(server, first, lambda row: row[0] == "ready", 180)

            def upload_one(index: int) -> int:
                with server.client() as own:
                    return upload(own, prepared["knowledge_base"], f"notes-{index}.txt",
                                  big_text(40).replace("Orchard", f"Garden {index}"))

            async def chats() -> list[str]:
                return await asyncio.gather(*(_chat(server, conversation, prepared["pipeline"])
                                              for conversation in prepared["conversations"]))

            with ThreadPoolExecutor(8) as pool:
                uploads = [pool.submit(upload_one, index) for index in range(16)]
                outcomes = asyncio.run(chats())
                documents = [future.result() for future in uploads]
        assert outcomes == ["answer.completed"] * len(prepared["conversations"]), outcomes
        for document in documents:
            status, _, _ = wait_for(server, document, lambda row: row[0] in ("ready", "failed"), 300)
            assert status == "ready"
        with sqlite3.connect(server.database()) as connection:
            assert connection.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
            failed = connection.execute(
                "SELECT count(*) FROM chat_message WHERE status != 'done' AND role = 'assistant'").fetchone()[0]
        assert failed == 0
    assert "database is locked" not in server.log_text()
