"""What a newcomer does, for real: ``make run`` on a fresh data directory and a free port, then
the browser (every page, an upload, the default pipeline, a streamed answer with a citation),
then every command the README and the guide show, run as written in a shell that exported
nothing (only the data directory points at the test's own instead of ``var/``)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from http.cookiejar import CookieJar
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from playwright.sync_api import expect

from tests.support.server import ROOT, free_port, user_environment, wait_until_serving

# make run on a fresh data directory, and commands that embed whole datasets: more than the default limit.
pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.timeout(1800)]

MAKE_RUN_TIMEOUT_S = 900  # a first run on this data directory joins the local model and migrates
DEMO_READY_TIMEOUT_S = 600
ANSWER_TIMEOUT_MS = 240_000
READY_TIMEOUT_MS = 600_000
PAGE_TIMEOUT_MS = 90_000
NOTES = """# Field notes from Quillon

The Zorblax lantern festival is held in Quillon every March, on the first full moon of spring.
Families float paper lanterns down the Vell river, and the oldest lantern maker lights the first one.

The festival began in 1874, after a flood spared the town's lower quarter.
"""


@dataclass
class Newcomer:
    url: str
    data_dir: Path
    password: str
    environment: dict[str, str]
    log: Path


def _demo_password(log: Path) -> str | None:
    found = re.search(r"Demo login: user 'demo', password '([^']+)'", log.read_text(errors="replace"))
    return found.group(1) if found else None


@pytest.fixture(scope="module")
def newcomer(tmp_path_factory) -> Iterator[Newcomer]:
    """``make run PORT=<free>`` on a fresh data directory, stopped after the module."""
    data_dir = tmp_path_factory.mktemp("newcomer-var")
    log = data_dir.parent / "make-run.log"
    port = free_port()
    environment = user_environment(data_dir)
    with open(log, "wb") as output:
        process = subprocess.Popen(["make", "run", f"PORT={port}"], cwd=ROOT, env=environment, stdout=output,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_serving(url + "/healthz", process, log, timeout_s=MAKE_RUN_TIMEOUT_S)
        password = _demo_password(log)
        assert password, f"make run printed no demo login:\n{log.read_text(errors='replace')[-3000:]}"
        yield Newcomer(url, data_dir, password, environment, log)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


class Api:
    """The REST API with a signed-in session, as the browser has it."""

    def __init__(self, url: str, username: str, password: str) -> None:
        self.url = url
        self.cookies = CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))
        self.opener.open(url + "/").close()
        self.send("POST", "/api/v1/auth/session/", {"username": username, "password": password})

    def _csrf(self) -> str:
        return next((cookie.value for cookie in self.cookies if cookie.name == "csrftoken"), "")

    def send(self, method: str, path: str, body: dict | None = None):
        request = urllib.request.Request(
            self.url + path, method=method, data=json.dumps(body).encode() if body is not None else None,
            headers={"Content-Type": "application/json", "X-CSRFToken": self._csrf(), "Referer": self.url + "/"},
        )
        with self.opener.open(request, timeout=30) as response:
            raw = response.read()
        return json.loads(raw) if raw else None


def wait_for_demo_knowledge_base(newcomer: Newcomer) -> None:
    """Until every page of the demo knowledge base (the guide) is ingested."""
    api = Api(newcomer.url, "demo", newcomer.password)
    demo = next(base for base in api.send("GET", "/api/v1/knowledge-bases/") if base["name"] == "Trellis guide")
    deadline = time.monotonic() + DEMO_READY_TIMEOUT_S
    while True:
        documents = api.send("GET", f"/api/v1/knowledge-bases/{demo['id']}/documents/")
        statuses = {document["status"] for document in documents}
        assert "failed" not in statuses, [d["name"] for d in documents if d["status"] == "failed"]
        if documents and statuses == {"ready"}:
            return
        assert time.monotonic() < deadline, f"the demo knowledge base is not ready: {statuses}"
        time.sleep(2)


def test_a_newcomer_signs_in_uploads_and_gets_a_streamed_cited_answer(newcomer, page, tmp_path, screenshot):
    deltas: list[str] = []

    def watch(socket) -> None:
        if "/ws/chat/" in socket.url:
            def frame(payload) -> None:
                event = json.loads(payload) if isinstance(payload, str) else {}
                if event.get("type") == "generation.delta":
                    deltas.append(event["text"])
            socket.on("framereceived", frame)

    page.on("websocket", watch)
    # Sign in with the password make run printed.
    page.goto(newcomer.url + "/")
    page.get_by_label("User name").fill("demo")
    page.get_by_label("Password").fill(newcomer.password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Knowledge bases", level=1)).to_be_visible()
    expect(page.get_by_role("link", name="Trellis guide")).to_be_visible()
    screenshot("newcomer-knowledge-bases")

    # Every page renders (the page fixture fails the test on any console error).
    page.get_by_role("link", name="Trellis guide").click()
    expect(page.get_by_role("heading", name="Trellis guide", level=1)).to_be_visible()
    expect(page.get_by_role("list", name="Documents")).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="Pipelines").click()
    expect(page.get_by_role("heading", name="Pipelines", level=1)).to_be_visible()
    page.get_by_role("link", name="Hybrid", exact=True).click()  # the demo's pipeline, in the builder
    expect(page.locator(".editor__status").get_by_text("Valid", exact=True)).to_be_visible()
    expect(page.locator('.tree-card[data-component="EnsembleRetriever"]')).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="Chat").click()
    expect(page.get_by_role("heading", name="Chat", level=1)).to_be_visible()
    expect(page.get_by_text("Ask your documents")).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="Evaluation").click()
    expect(page.get_by_role("heading", name="Evaluation", level=1)).to_be_visible()
    page.get_by_role("navigation").get_by_role("link", name="Models").click()
    expect(page.get_by_role("heading", name="Models", level=1)).to_be_visible()
    expect(page.locator('section[data-kind="embedding"] li[data-model-name="all-minilm-l6-v2-int8"]')).to_be_visible()
    page.goto(newcomer.url + "/admin/")
    expect(page.get_by_role("heading", name=re.compile("Site administration"))).to_be_visible()
    screenshot("newcomer-admin")

    # A knowledge base of one's own, filled by upload.
    page.goto(newcomer.url + "/")
    page.get_by_role("button", name="New knowledge base").click()
    dialog = page.get_by_role("dialog", name="New knowledge base")
    dialog.get_by_label("Name").fill("Quillon notes")
    dialog.get_by_role("button", name="Create").click()
    expect(page.get_by_role("heading", name="Quillon notes", level=1)).to_be_visible()
    notes = tmp_path / "quillon.md"
    notes.write_text(NOTES, encoding="utf-8")
    page.get_by_test_id("upload-input").set_input_files(str(notes))
    row = page.get_by_role("list", name="Documents").locator('li[data-document-name="quillon.md"]')
    expect(row.get_by_text("Ready", exact=True)).to_be_visible(timeout=READY_TIMEOUT_MS)
    screenshot("newcomer-knowledge-base")

    # The default pipeline (the recommended template), saved from the builder.
    page.get_by_role("navigation").get_by_role("link", name="Pipelines").click()
    page.get_by_role("button", name="New pipeline").click()
    dialog = page.get_by_role("dialog", name="New pipeline")
    dialog.get_by_label("Name", exact=True).fill("My first pipeline")
    dialog.get_by_label("Knowledge base").select_option(label="Quillon notes")
    expect(dialog.locator("label.template-card.is-selected")).to_contain_text("Recommended")
    dialog.get_by_role("button", name="Open in the builder").click()
    expect(page.locator(".editor__status").get_by_text("Valid", exact=True)).to_be_visible()
    page.get_by_role("button", name="Save").click()
    expect(page.get_by_text("“My first pipeline” saved.")).to_be_visible()
    screenshot("newcomer-builder")

    # Ask it: the answer streams in, then shows a citation.
    page.get_by_role("navigation").get_by_role("link", name="Chat").click()
    # The server is still embedding the demo's guide with e5 on both cores: give the page time.
    page.get_by_role("button", name="New conversation").click(timeout=PAGE_TIMEOUT_MS)
    expect(page.get_by_text("Live", exact=True)).to_be_visible(timeout=30_000)  # the answer comes over the socket
    page.get_by_label("Pipeline").select_option(label="My first pipeline · Quillon notes")
    # The conversation takes the pipeline once the server has it: ask only then.
    current = page.get_by_role("list", name="Conversations").locator("[aria-current=page]")
    expect(current).to_contain_text("My first pipeline")
    page.get_by_label("Your question").fill("When is the Zorblax lantern festival held?")
    page.get_by_role("button", name="Ask", exact=True).click()
    answer = page.get_by_role("listitem", name="Answer").last
    expect(answer).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    assert len(deltas) >= 2, f"the answer arrived in {len(deltas)} piece(s), not streamed"
    expect(answer.get_by_role("button", name="Open source 1 (quillon.md)")).to_be_visible()
    screenshot("newcomer-chat")


# -- the README's and the guide's commands, as written -------------------------------------------

FENCE = re.compile(r"```(sh|python)\n(.*?)```", re.DOTALL)
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")), ROOT / "bench" / "README.md"]

# Commands shown in the documents that this module does not run, and what runs them instead.
RUN_ELSEWHERE = {
    "make run": "the newcomer fixture above runs it",
    "make test": "is this test suite",
    "make test-scaleout": ".ci/run runs it after make test",
    "make test-python": "half of make test",
    "make test-frontend": "half of make test",
    "make bench-quality": "30 minutes; its figures are committed in bench/quality.md",
    "make messages": "rewrites the catalogues; tests/integration/test_translations.py checks them",
    "ALLOWED_HOSTS=trellis.example.org,10.0.0.5 make run HOST=0.0.0.0 PORT=8000":
        "make run on another address; the newcomer fixture runs make run with PORT",
    ".venv/bin/celery -A jobs.celery worker --loglevel=INFO":
        "make test-scaleout starts the workers this way (scripts/scaleout/stack.py)",
    ".venv/bin/python bench/bm25.py": "a benchmark (~1 min); figures in bench/README.md",
    ".venv/bin/python bench/ingest.py": "a benchmark (~1 min); figures in bench/README.md",
    ".venv/bin/python bench/retrieval.py": "a benchmark (~3 min); figures in bench/README.md",
    ".venv/bin/python bench/chat_load.py": "a benchmark; tests/integration/security/test_chat_load.py runs it at "
                                           "100 chats, without the tests' outbound allow-list; its quick check "
                                           "(--chats 5) runs here",
    ".venv/bin/python manage.py models install cross-encoder/ms-marco-MiniLM-L-6-v2 --kind cross-encoder":
        "needs the Hugging Face Hub; tests/integration/models/test_models_command.py runs this command against a "
        "loopback hub (HF_ENDPOINT)",
    ".venv/bin/python bench/relevance_floor.py": "a benchmark (~30 min over every XQuAD-es and -zh question); its "
                                                "floors are MultilingualE5SmallEmbedding.RELEVANCE_FLOORS, which "
                                                "tests/unit/rag/strategies/test_trusted_answers.py exercises",
    ".venv/bin/python bench/answers.py --questions 20": "a benchmark (minutes of local-model answers); figures in "
                                                        "bench/README.md",
    "nice .venv/bin/python bench/two_part_answers.py --rows /tmp/tpa.jsonl":
        "a benchmark (an hour of local-model answers); figures in bench/README.md",
    "nice .venv/bin/python bench/agentic.py --questions 4 --other-child 4":
        "a benchmark (minutes of local-model plans and answers); tests/unit/bench/test_twofacts.py tests its set",
    "nice .venv/bin/python bench/agentic.py --planner qwen2.5-0.5b-instruct,qwen2.5-1.5b-instruct --rows "
    "/tmp/agentic.jsonl": "the full two-fact benchmark (hours of local-model answers); figures in bench/README.md",
    "nice .venv/bin/python bench/quality.py --datasets scifact,cranfield --llm-presets agentic --planner "
    "qwen2.5-1.5b-instruct --output /tmp/quality-agentic.md": "make bench-quality's agentic rows with another "
                                                               "planner (an hour of local-model plans)",
}


def shown_commands() -> dict[str, list[str]]:
    """Every shell command and Python snippet of the documents, by its text: the documents it
    appears in (a command may appear in several languages' pages)."""
    shown: dict[str, list[str]] = {}
    for path in DOCUMENTS:
        for language, body in FENCE.findall(path.read_text(encoding="utf-8")):
            entries = [body.strip()] if language == "python" else [
                re.sub(r"\s+#.*$", "", line).strip() for line in body.splitlines()]
            for entry in entries:
                if entry and not entry.startswith("#"):
                    shown.setdefault(entry, []).append(str(path.relative_to(ROOT)))
    return shown


# Command → what its output must show.
EXPECTED_OUTPUT = {
    '.venv/bin/python manage.py ask --pipeline hybrid "How do I build a hybrid retriever?"':
        re.compile(r"Trace:\n.*EnsembleRetriever", re.DOTALL),
    '.venv/bin/python manage.py ask --pipeline docs/examples/hybrid-expanded.json --docs ./docs/guide --json '
    '"What does retrieve-then-expand do?"': "json",
    ".venv/bin/python manage.py evaluate --dataset cranfield --pipeline keyword --pipeline hybrid":
        re.compile(r"\| keyword \| 225 \| 0\.\d{3} .*\n\| hybrid \| 225 \| 0\.\d{3} ", re.DOTALL),
    ".venv/bin/python manage.py evaluate --dataset cranfield --pipeline hybrid --limit 50 --json": "evaluation-json",
    ".venv/bin/python manage.py models list":
        re.compile(r"^embedding\n  all-minilm-l6-v2-int8 .*Apache-2\.0.*AllMiniLML6V2OnnxEmbedding.*^llm\n  qwen2\.5-0\.5b-instruct",
                   re.DOTALL | re.MULTILINE),
    # It starts its own server (and scripted LLM) on a data directory of its own.
    ".venv/bin/python bench/chat_load.py --chats 5 --questions 1": "chat-load-json",
    ".venv/bin/python bench/playground.py": "playground-json",
}
COMMAND_TIMEOUT_S = 900


def run_shown(command: str, environment: dict[str, str]) -> subprocess.CompletedProcess:
    if command.startswith(("from ", "import ")):
        argv = [str(ROOT / ".venv" / "bin" / "python"), "-c", command]
    else:
        argv = ["bash", "-c", command]
    return subprocess.run(argv, cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=COMMAND_TIMEOUT_S)


def test_every_command_the_documents_show_is_run_here_or_named_with_what_runs_it():
    shown = shown_commands()
    python_snippets = [entry for entry in shown if entry.startswith(("from ", "import "))]
    assert python_snippets, "the README shows a Python snippet"
    covered = set(EXPECTED_OUTPUT) | set(RUN_ELSEWHERE) | set(python_snippets)
    assert not set(shown) - covered, f"commands shown but never run: {sorted(set(shown) - covered)}"
    assert not set(EXPECTED_OUTPUT) - set(shown), f"commands no document shows: {set(EXPECTED_OUTPUT) - set(shown)}"


@pytest.mark.parametrize("command", sorted(EXPECTED_OUTPUT), ids=lambda command: command.split(" --json")[0][25:80])
def test_a_readme_command_runs_as_written_after_make_run(newcomer, command):
    if "manage.py ask --pipeline hybrid" in command:
        wait_for_demo_knowledge_base(newcomer)  # it asks the demo knowledge base
    finished = run_shown(command, newcomer.environment)
    assert finished.returncode == 0, f"{command} failed ({finished.returncode}):\n{finished.stderr[-3000:]}"
    expected = EXPECTED_OUTPUT[command]
    if expected == "json":
        document = json.loads(finished.stdout)
        assert document["answer"].strip(), document
        assert document["chunks"], "the model was given no chunks"
        # Retrieve-then-expand is on: the passages are windows of neighbouring chunks.
        assert any("window" in chunk["metadata"] for chunk in document["chunks"]), document["chunks"]
    elif expected == "chat-load-json":
        figures = json.loads(finished.stdout.strip().splitlines()[-1])
        assert (figures["completed"], figures["failed"], figures["lost"]) == (5, 0, 0), finished.stderr[-3000:]
    elif expected == "playground-json":
        figures = json.loads(finished.stdout.strip().splitlines()[-1])
        assert set(figures["playground"]) == {"bm25", "dense", "fusion"}, figures
        assert figures["live_questions"] == 50 and 0.0 < figures["ndcg_at_10"] <= 1.0, figures
    elif expected == "evaluation-json":
        document = json.loads(finished.stdout)
        assert document["queries"] == 50
        assert 0.0 < document["ndcg@10"] <= 1.0
        assert document["pipelines"][0]["depth"]["returned_max"] == 100
    else:
        assert expected.search(finished.stdout), finished.stdout[-3000:]


def test_the_readme_python_snippet_runs_as_written(newcomer):
    for snippet in (entry for entry in shown_commands() if entry.startswith(("from ", "import "))):
        finished = run_shown(snippet, newcomer.environment)
        assert finished.returncode == 0, f"the snippet failed:\n{snippet}\n{finished.stderr[-3000:]}"
        assert len(finished.stdout.strip()) > 20, f"the snippet printed no answer: {finished.stdout!r}"


def test_make_run_started_the_server_with_debug_off_and_its_keys_where_they_belong(newcomer):
    assert (newcomer.data_dir / "secret_key").is_file()
    # The credentials key is kept apart from the data directory and its backups.
    assert not (newcomer.data_dir / "credentials.key").exists()
    key_file = Path(newcomer.environment["XDG_CONFIG_HOME"]) / "trellis" / "credentials.key"
    assert key_file.is_file() and key_file.stat().st_mode & 0o777 == 0o600
    assert "DEBUG" not in newcomer.environment and "SECRET_KEY" not in newcomer.environment
    # DEBUG off: an unknown page is the app's 404, not Django's debug page.
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(newcomer.url + "/api/v1/no-such-endpoint/", timeout=10)
    assert b"DEBUG = True" not in missing.value.read()


# -- a page of another site on the same host ------------------------------------------------------

# Opens a websocket and says how it ended: "open", or "closed <code>" when the handshake failed.
OPEN_SOCKET = """url => new Promise(resolve => {
  const socket = new WebSocket(url);
  socket.onopen = () => { resolve("open"); socket.close(); };
  socket.onclose = event => resolve(`closed ${event.code}`);
})"""


@contextmanager
def page_on_another_port(html: str) -> Iterator[str]:
    """``html`` served at ``http://127.0.0.1:<another port>/``: another origin than the app's, on the
    same host, so the browser sends the app's cookies with its requests to the app."""

    class OnePage(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), OnePage)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def test_a_page_on_another_port_cannot_open_a_signed_in_users_chat_socket(newcomer, page, browser_errors):
    conversation = Api(newcomer.url, "demo", newcomer.password).send("POST", "/api/v1/conversations/", {})
    socket_url = newcomer.url.replace("http://", "ws://") + f"/ws/chat/{conversation['id']}/"
    page.goto(newcomer.url + "/")
    page.get_by_label("User name").fill("demo")
    page.get_by_label("Password").fill(newcomer.password)
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Knowledge bases", level=1)).to_be_visible()
    # From the app's own page, the signed-in user's socket opens.
    assert page.evaluate(OPEN_SOCKET, socket_url) == "open"

    # From a page on another port of the same host, in the same browser (the session cookie is
    # sent: cookies are not bound to a port), the handshake is refused.
    browser_errors.expect(r"WebSocket connection to .*/ws/chat/.* failed")
    with page_on_another_port("<!doctype html><title>Another site</title><p>Nothing to see.</p>") as elsewhere:
        page.goto(elsewhere)
        expect(page).to_have_title("Another site")
        assert page.evaluate(OPEN_SOCKET, socket_url) == "closed 1006"
