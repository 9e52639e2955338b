"""Trellis scaled out, for real: PostgreSQL, Redis, a Chroma server, two daphne servers and two
Celery workers on loopback (``make test-scaleout``; excluded from ``make test``).

A user uploads documents through server 1 and watches their progress on server 1's socket while
the Celery workers ingest them (their events cross processes through Redis); while ingestion
runs, a chat through server 2 gets its answer. Then every document is ready, each ingested by a
worker, the BM25 index of the final content version was built once and both servers read it, and
the Chroma server holds every vector. Last, Redis is stopped: ``/readyz`` says so, ``/healthz``
stays up; once Redis is back the servers are ready again and a new upload is ingested. An
evaluation started through server 1 runs on a worker while server 2's socket follows it.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest
import requests
from scripts.scaleout.stack import PYTHON, ROOT
from websockets.sync.client import connect

from rag.strategies.traces import retriever_nodes
from tests.support.scripted_openai import ScriptedOpenAIServer

pytestmark = [pytest.mark.scaleout, pytest.mark.timeout(420)]

PASSWORD = "scale-out correct horse"
ANSWER = ["Observers ", "recorded ", "how glaciers ", "change with ", "the seasons ", "[1]."]  # what the notes say
TOPICS = ["glaciers", "volcanoes", "coral reefs", "deserts", "rainforests", "tundra", "estuaries", "savannas"]
FIRST_BATCH, SECOND_BATCH = TOPICS[:2], TOPICS[2:]
ORDER = ["queued", "parsing", "chunking", "embedding", "indexing", "ready"]
CHUNKER = {"component": "RecursiveCharacterChunker", "params": {"chunk_size": 300, "chunk_overlap": 0}}


def document_text(topic: str, paragraphs: int) -> str:
    return "\n\n".join(
        f"Field note {number} on {topic}. Observers recorded how {topic} change with the seasons, measured "
        f"sample {number * 7 + len(topic)} at site {number % 13}, and compared it with the notes of earlier "
        f"expeditions to the {topic} of region {number % 5}. The {topic} held surprises in survey {number}."
        for number in range(paragraphs)
    )


class Api:
    """A signed-in REST client of one server; the session cookie is shared by every server."""

    def __init__(self, session: requests.Session, base_url: str) -> None:
        self.session, self.base_url = session, base_url

    def call(self, method: str, path: str, expect: int, **kwargs: Any) -> Any:
        headers = {"X-CSRFToken": self.session.cookies.get("csrftoken", ""), "Referer": self.base_url + "/"}
        response = self.session.request(method, self.base_url + path, headers=headers, timeout=60, **kwargs)
        assert response.status_code == expect, f"{method} {path}: {response.status_code} {response.text[:2000]}"
        return response.json() if response.content else None

    def socket(self, path: str):
        cookies = "; ".join(f"{cookie.name}={cookie.value}" for cookie in self.session.cookies)
        return connect(self.base_url.replace("http", "ws", 1) + path, open_timeout=30,
                       additional_headers={"Cookie": cookies, "Origin": self.base_url})


class KnowledgeEvents(threading.Thread):
    """Listens on ``ws/knowledge/<id>/`` and keeps every event with the time it arrived."""

    def __init__(self, api: Api, knowledge_base_id: int) -> None:
        super().__init__(name="knowledge-events", daemon=True)
        self.api, self.knowledge_base_id = api, knowledge_base_id
        self.events: list[tuple[float, dict]] = []
        self.statuses: dict[int, list[str]] = {}
        self.changed = threading.Condition()
        self.connected = threading.Event()
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            with self.api.socket(f"/ws/knowledge/{self.knowledge_base_id}/") as ws:
                self.connected.set()
                while not self.stopping.is_set():
                    try:
                        event = json.loads(ws.recv(timeout=0.5))
                    except TimeoutError:
                        continue
                    with self.changed:
                        self.events.append((time.monotonic(), event))
                        for document in event.get("documents", []) + [event.get("document") or {}]:
                            if document:
                                seen = self.statuses.setdefault(document["id"], [])
                                if not seen or seen[-1] != document["status"]:
                                    seen.append(document["status"])
                        self.changed.notify_all()
        except BaseException as exc:  # reported by wait_until
            self.error = exc
            self.connected.set()
            with self.changed:
                self.changed.notify_all()

    def wait_until(self, condition: Callable[[dict[int, list[str]]], bool], what: str, timeout: float) -> float:
        deadline = time.monotonic() + timeout
        with self.changed:
            while not condition(self.statuses):
                if self.error is not None:
                    raise AssertionError(f"the knowledge socket broke while waiting for {what}: {self.error!r}")
                if not self.changed.wait(max(0.0, deadline - time.monotonic())) and time.monotonic() >= deadline:
                    raise AssertionError(f"timed out waiting for {what}; statuses seen: {self.statuses}")
        return time.monotonic()

    def status_at(self, moment: float) -> dict[int, str]:
        """Each document's last status received before ``moment``."""
        state: dict[int, str] = {}
        for arrived, event in self.events:
            if arrived > moment:
                break
            for document in event.get("documents", []) + [event.get("document") or {}]:
                if document:
                    state[document["id"]] = document["status"]
        return state


def ask(api: Api, conversation_id: int, pipeline_id: int, question: str) -> list[dict]:
    with api.socket(f"/ws/chat/{conversation_id}/") as ws:
        ws.send(json.dumps({"type": "ask", "question": question, "pipeline_id": pipeline_id}))
        events = []
        while True:
            events.append(json.loads(ws.recv(timeout=120)))
            if events[-1]["type"] in ("answer.completed", "run.failed", "run.cancelled"):
                return events


def bm25_results(trace: dict) -> list[dict]:
    return retriever_results(trace, "BM25Retriever")


def retriever_results(trace: dict, component: str) -> list[dict]:
    """Results of every ``component`` node in a strategy trace."""
    return [row for node in retriever_nodes(trace) if node.get("class") == component
            for row in node.get("results") or []]


JOB_LINE = re.compile(r"(\S+) ran knowledge\.ingest_document (\{.*?\}) in ([\d.]+) s")


def ingestion_runs(stack) -> list[tuple[str, int, float]]:
    """(worker, document id, seconds) of every ingestion job, from the workers' logs."""
    return [(worker, json.loads(kwargs)["document_id"], float(seconds))
            for log in sorted(stack.logs.glob("worker*.log"))
            for worker, kwargs, seconds in JOB_LINE.findall(log.read_text(errors="replace"))]


def worker_log_lines(stack, text: str) -> list[str]:
    return [line for log in sorted(stack.logs.glob("worker*.log"))
            for line in log.read_text(errors="replace").splitlines() if text in line]


def manage(stack, *command: str) -> None:
    done = subprocess.run([str(PYTHON), "manage.py", *command], env=stack.env, cwd=ROOT, capture_output=True,
                          text=True, timeout=120, check=False)
    assert done.returncode == 0, f"manage.py {command[0]} failed:\n{done.stdout}\n{done.stderr}"


@pytest.fixture(scope="module")
def signed_in(stack) -> requests.Session:
    manage(stack, "shell", "-c", "from django.contrib.auth import get_user_model; "
                                 f"get_user_model().objects.create_user('scale', password={PASSWORD!r})")
    session = requests.Session()
    server1 = stack.server_urls[0]
    session.get(server1 + "/api/v1/auth/session/", timeout=30).raise_for_status()
    Api(session, server1).call("POST", "/api/v1/auth/session/", 200, json={"username": "scale", "password": PASSWORD})
    return session


def test_uploads_through_server_1_are_ingested_by_the_workers_while_server_2_answers_a_chat(stack, signed_in, capsys):
    began = time.monotonic()
    server1, server2 = (Api(signed_in, url) for url in stack.server_urls)
    knowledge_base = server1.call("POST", "/api/v1/knowledge-bases/", 201, json={"name": "Field notes",
                                                                                 "chunker": CHUNKER})
    kb_id = knowledge_base["id"]
    listener = KnowledgeEvents(server1, kb_id)
    listener.start()
    assert listener.connected.wait(30) and listener.error is None, listener.error

    def upload(topics: list[str], paragraphs: int) -> list[int]:
        # Text and Markdown: Markdown is parsed in a child process of the worker's pool process.
        files = [("files", (f"{topic.replace(' ', '-')}.{'md' if index % 2 else 'txt'}",
                            document_text(topic, paragraphs).encode(), "text/markdown" if index % 2 else "text/plain"))
                 for index, topic in enumerate(topics)]
        body = server1.call("POST", f"/api/v1/knowledge-bases/{kb_id}/documents/", 201, files=files)
        assert body["rejected"] == []
        return [document["id"] for document in body["documents"]]

    first = upload(FIRST_BATCH, paragraphs=10)
    listener.wait_until(lambda seen: any(seen.get(i, [""])[-1] == "ready" for i in first),
                        "a first document to be ready", timeout=180)
    # The second, larger batch keeps both workers busy while server 2 answers.
    second = upload(SECOND_BATCH, paragraphs=120)
    documents = first + second

    with ScriptedOpenAIServer(default_answer=ANSWER) as llm:
        def pipeline(name: str, retriever: dict) -> int:
            # The default follow-up model (the packaged local one) is loaded only if a follow-up
            # asks for it, so building these pipelines loads no local model.
            scripted = {"component": "OpenAICompatibleLLM", "params": {"base_url": llm.base_url, "model": "s"}}
            return server2.call("POST", "/api/v1/pipelines/", 201, json={
                "name": name, "knowledge_base": kb_id, "strategy": {"component": "NaiveRAG", "params": {
                    "retriever": retriever,
                    "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": scripted}}}}})["id"]

        keyword = pipeline("Keyword", {"component": "BM25Retriever", "params": {"top_k": 4}})
        conversation = server2.call("POST", "/api/v1/conversations/", 201, json={"pipeline": keyword})
        asked = time.monotonic()
        during = ask(server2, conversation["id"], keyword, "How do glaciers move?")
        answered = time.monotonic()
        assert during[-1]["type"] == "answer.completed", during[-1]
        assert during[-1]["answer"] == "".join(ANSWER)
        assert any(event["type"] == "generation.delta" for event in during), "the answer was streamed"
        assert bm25_results(during[-1]["trace"]), "server 2 read a BM25 index of the documents ready so far"

        all_ready = listener.wait_until(lambda seen: all(seen.get(i, [""])[-1] == "ready" for i in documents),
                                        "every document to be ready", timeout=240)
        ingestion_s = all_ready - began
        still_running = [i for i, status in listener.status_at(answered).items() if status != "ready"]
        assert still_running, (f"ingestion was over before the chat through server 2 answered "
                               f"(asked {asked - began:.1f} s, answered {answered - began:.1f} s)")

        # Every document went through the pipeline on a worker, and server 1's socket saw it.
        for document_id in documents:
            seen = listener.statuses[document_id]
            assert [status for status in ORDER if status in seen] == [s for s in seen if s in ORDER], seen
            assert {"parsing", "embedding", "ready"} <= set(seen), (document_id, seen)
        listed = server2.call("GET", f"/api/v1/knowledge-bases/{kb_id}/documents/", 200)
        assert {document["id"]: document["status"] for document in listed} == {i: "ready" for i in documents}
        chunk_total = sum(document["chunk_count"] for document in listed)

        runs = ingestion_runs(stack)
        assert sorted(document for _, document, _ in runs) == sorted(documents), f"ingestion jobs run: {runs}"
        workers = {worker for worker, _, _ in runs}
        assert workers == set(stack.worker_names), f"documents ingested by {workers}, workers {stack.worker_names}"
        # The two workers started together: one recovered (nothing to do), the other left it to it.
        assert len(worker_log_lines(stack, "first worker up")) == 1, worker_log_lines(stack, "recover")
        assert len(worker_log_lines(stack, "not recovering again")) == 1, worker_log_lines(stack, "recover")

        # The BM25 indices of the final content version (the default words, and the default pipeline's
        # stemmed ones): built once (by the warm-up job), then only read.
        with psycopg.connect(stack.database_url.replace("postgres://", "postgresql://")) as connection:
            content_version = connection.execute("SELECT content_version FROM knowledge_knowledgebase WHERE id = %s",
                                                 (kb_id,)).fetchone()[0]
        assert content_version == len(documents)
        indices = Path(stack.data_dir) / "indices" / f"kb{kb_id}"
        deadline = time.monotonic() + 60
        while True:
            homes = sorted(indices.glob("bm25-*"))
            manifests = [home / f"v{content_version}" / "manifest.json" for home in homes]
            if (len(homes) == 2 and all(manifest.exists() for manifest in manifests)) or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert len(homes) == 2, homes
        for home, manifest in zip(homes, manifests, strict=True):
            assert manifest.exists(), f"no BM25 index for version {content_version}: {list(home.iterdir())}"
        built = [manifest.stat() for manifest in manifests]
        hybrid = pipeline("Hybrid", {"component": "EnsembleRetriever", "params": {
            "fusion": "rrf", "top_k": 4, "children": [{"component": "BM25Retriever", "params": {"top_k": 4}},
                                                       {"component": "DenseEmbeddingRetriever", "params": {"top_k": 4}}]}})
        for server in (server1, server2):
            chat = server.call("POST", "/api/v1/conversations/", 201, json={"pipeline": hybrid})
            after = ask(server, chat["id"], hybrid, "What did observers record about tundra?")
            assert after[-1]["type"] == "answer.completed", after[-1]
            assert bm25_results(after[-1]["trace"]), f"{server.base_url}: the BM25 reader found nothing"
            assert retriever_results(after[-1]["trace"], "DenseEmbeddingRetriever"), \
                f"{server.base_url}: the Chroma server gave no neighbours"
        for home, manifest, before in zip(homes, manifests, built, strict=True):
            now = manifest.stat()
            assert (now.st_ino, now.st_mtime_ns) == (before.st_ino, before.st_mtime_ns), \
                f"a server rebuilt the BM25 index {home.name}"
            assert sorted(path.name for path in home.iterdir() if not path.name.startswith(".")) == \
                [f"v{content_version}"], "older versions are pruned and no half-written one is left"

    # Every vector lives in the Chroma server; no process fell back to a local store.
    import chromadb

    host, port = stack.chroma_url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(host=host, port=int(port))
    collections = [collection for collection in client.list_collections() if collection.name.startswith(f"kb{kb_id}-")]
    assert len(collections) == 1, collections
    assert client.get_collection(collections[0].name).count() == chunk_total
    assert not (Path(stack.data_dir) / "chroma").exists()

    listener.stopping.set()
    listener.join(5)
    per_document = sorted(seconds for _, _, seconds in runs)
    with capsys.disabled():  # the figures docs/deploy.md quotes, shown in every run's output
        print(f"\nscale-out stack started in {stack.timings['total']} s ({stack.timings})")
        print(f"scale-out timings: {len(documents)} documents, {chunk_total} chunks ingested in {ingestion_s:.1f} s "
              f"by {sorted(workers)} (per document on a worker: {', '.join(f'{s:.1f}' for s in per_document)} s); "
              f"chat through server 2 answered in {answered - asked:.1f} s during ingestion")
        memory = {service.name: stack.rss_mb(service.name) for service in stack.services}
        print(f"scale-out resident memory (MB): {memory}", flush=True)


def test_a_worker_joining_a_live_pool_re_queues_nothing(stack, signed_in):
    server1 = Api(signed_in, stack.server_urls[0])
    kb_id = server1.call("POST", "/api/v1/knowledge-bases/", 201, json={"name": "Busy", "chunker": CHUNKER})["id"]
    files = [("files", (f"busy-{topic}.txt", document_text(topic, 120).encode(), "text/plain")) for topic in TOPICS[:4]]
    documents = [document["id"] for document in
                 server1.call("POST", f"/api/v1/knowledge-bases/{kb_id}/documents/", 201, files=files)["documents"]]
    deadline = time.monotonic() + 60
    while not any(document["status"] in ("parsing", "chunking", "embedding", "indexing")
                  for document in server1.call("GET", f"/api/v1/knowledge-bases/{kb_id}/documents/", 200)):
        assert time.monotonic() < deadline, "no document was picked up by a worker"
        time.sleep(0.2)
    attempts = {document_id: attempt_of(stack, document_id) for document_id in documents}

    # Past the start-up window (the Redis keys), a new worker asks who is alive and finds the pool.
    subprocess.run([str(PYTHON), "-c", f"import redis; redis.Redis.from_url({stack.redis_url!r}).delete("
                    "'trellis:jobs:recovery', 'trellis:jobs:starting')"], check=True, timeout=30)
    joined = stack.add_worker()
    lines = [line for line in worker_log_lines(stack, joined) if "alive" in line or "first worker up" in line]
    assert len(lines) == 1 and "other workers are alive" in lines[0], lines
    assert all(name in lines[0] for name in stack.worker_names if name != joined), lines[0]
    assert {document_id: attempt_of(stack, document_id) for document_id in documents} == attempts, \
        "the joining worker re-queued documents the live workers were ingesting"

    deadline = time.monotonic() + 180
    while not all(document["status"] == "ready"
                  for document in server1.call("GET", f"/api/v1/knowledge-bases/{kb_id}/documents/", 200)):
        assert time.monotonic() < deadline, "the documents were not all ingested"
        time.sleep(0.5)


def test_an_evaluation_started_on_server_1_runs_on_a_worker_and_server_2_follows_its_progress(
        stack, signed_in, tmp_path):
    from tests.integration.evaluation.conftest import beir_zip, cranfield_head

    server1, server2 = (Api(signed_in, url) for url in stack.server_urls)
    archive = beir_zip(cranfield_head(30), tmp_path)
    dataset = server1.call("POST", "/api/v1/evaluations/datasets/upload/", 201, data={"name": "Cranfield head"},
                           files=[("file", ("cranfield-head.zip", archive, "application/zip"))])
    deadline = time.monotonic() + 180
    while (state := server2.call("GET", f"/api/v1/evaluations/datasets/{dataset['id']}/", 200))["status"] != "ready":
        assert state["status"] != "failed" and time.monotonic() < deadline, state
        time.sleep(0.5)
    assert state["documents"] == {"uploaded": 30, "ready": 30, "failed": 0, "in_progress": 0}

    evaluation = server1.call("POST", "/api/v1/evaluations/", 201,
                              json={"dataset": dataset["id"], "presets": ["keyword", "semantic"]})
    with server2.socket(f"/ws/evaluation/{evaluation['id']}/") as ws:
        states: list[dict] = []
        while not states or states[-1]["status"] not in ("done", "failed"):
            event = json.loads(ws.recv(timeout=180))
            assert event["type"] == "evaluation.progress", event
            states.append(event["evaluation"])
    total = 2 * state["query_count"]
    assert states[-1] == {"id": evaluation["id"], "status": "done", "done": total, "total": total, "error": None}
    assert [step["done"] for step in states] == sorted(step["done"] for step in states)

    detail = server2.call("GET", f"/api/v1/evaluations/{evaluation['id']}/", 200)
    assert [pipeline["name"] for pipeline in detail["results"]["pipelines"]] == ["keyword", "semantic"]
    assert all(pipeline["metrics"]["ndcg@10"] > 0.2 for pipeline in detail["results"]["pipelines"])
    plot = signed_in.get(detail["report"]["metrics"].replace(stack.server_urls[1], stack.server_urls[0]), timeout=30)
    assert plot.status_code == 200 and plot.content[:4] == b"\x89PNG", "server 1 serves the report a worker wrote"
    ran = [line for line in worker_log_lines(stack, "ran evaluation.run ")
           if f'"evaluation_id": {evaluation["id"]}' in line]
    assert len(ran) == 1, f"the evaluation ran {len(ran)} times on the workers: {ran}"


def attempt_of(stack, document_id: int) -> int:
    with psycopg.connect(stack.database_url.replace("postgres://", "postgresql://")) as connection:
        return connection.execute("SELECT attempt FROM knowledge_document WHERE id = %s", (document_id,)).fetchone()[0]


def test_when_redis_stops_readyz_fails_with_a_readable_reason_while_healthz_stays_up_and_all_resumes_after(
    stack, signed_in
):
    for url in stack.server_urls:
        assert requests.get(url + "/readyz", timeout=10).status_code == 200
    stack.stop_service("redis")
    for url in stack.server_urls:
        began = time.monotonic()
        response = requests.get(url + "/readyz", timeout=15)
        body = response.json()
        assert response.status_code == 503, body
        assert time.monotonic() - began < 6, "readiness answers quickly when a dependency is down"
        checks = body["checks"]
        assert {name: check["status"] for name, check in checks.items()} == {
            "database": "ok", "broker": "failing", "channel_layer": "failing", "vector_store": "ok"}, checks
        assert checks["broker"]["error"].startswith(f"cannot reach Redis at {stack.redis_url}: "), checks["broker"]
        assert "refused" in checks["broker"]["error"].lower()
        health = requests.get(url + "/healthz", timeout=10)
        assert (health.status_code, health.json()) == (200, {"status": "ok"})

    stack.start_redis()
    deadline = time.monotonic() + 30
    for url in stack.server_urls:
        while requests.get(url + "/readyz", timeout=15).status_code != 200:
            assert time.monotonic() < deadline, requests.get(url + "/readyz", timeout=15).json()
            time.sleep(0.5)
    # The servers queue jobs again and the workers, reconnected, run them.
    server2 = Api(signed_in, stack.server_urls[1])
    kb_id = server2.call("POST", "/api/v1/knowledge-bases/", 201, json={"name": "After the outage",
                                                                          "chunker": CHUNKER})["id"]
    files = [("files", ("tundra.txt", document_text("tundra", 5).encode(), "text/plain"))]
    document_id = server2.call("POST", f"/api/v1/knowledge-bases/{kb_id}/documents/", 201, files=files)["documents"][0]["id"]
    deadline = time.monotonic() + 90
    while (status := server2.call("GET", f"/api/v1/knowledge-bases/{kb_id}/documents/{document_id}/", 200)["status"]) \
            != "ready":
        assert status != "failed" and time.monotonic() < deadline, status
        time.sleep(0.5)
