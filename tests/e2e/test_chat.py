"""The chat in a real browser against daphne, so answers stream over the websocket: the local
model's tokens arrive one by one, a long answer is stopped, an agentic answer's rounds show in
the trace panel, a citation opens its chunk and the chunk browser, and the page follows the
language switcher. The agentic pipeline's LLM is the scripted OpenAI-compatible server, so its
plan, verdicts and answer are known."""

import json
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

import jobs
from knowledge.services import documents_upload, knowledge_base_create
from pipelines.services import pipeline_create
from tests.support.scripted_openai import chat_stream, tool_call_response

from .asgi_server import asgi_server  # noqa: F401
from .conftest import JOBS_TIMEOUT, PASSWORD

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

ROOT = Path(__file__).resolve().parents[2]
CHAT = "/v1/chat/completions"
GUIDE_PAGES = ["agentic-retrieval.md", "getting-started.md"]
ANSWER_TIMEOUT_MS = 120_000
AGENTIC_QUESTION = "How does the agentic ensemble choose which retrievers to consult?"
AGENTIC_ANSWER = ["An LLM plans which retrievers to consult ", "and judges the pool after each round [1]."]

# Records how the answer being written grows: one entry per change of its text.
WATCH_STREAM = """
window.__streamed = [];
new MutationObserver(() => {
  const answer = document.querySelector('li[data-status="streaming"] .markdown');
  const length = answer ? answer.textContent.length : 0;
  const last = window.__streamed[window.__streamed.length - 1];
  if (length > 0 && length !== last) window.__streamed.push(length);
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


def bm25(top_k: int = 3, **params) -> dict:
    return {"component": "BM25Retriever", "params": {"top_k": top_k, **params}}


def scripted(server) -> dict:
    return {"component": "OpenAICompatibleLLM",
            "params": {"base_url": server.base_url, "model": "scripted", "function_calling": "tools"}}


def answering(retriever: dict, llm: dict) -> dict:
    return {"component": "NaiveRAG", "params": {
        "retriever": retriever, "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm}}}}


@pytest.fixture
def guide(ada):
    """A demo-like knowledge base: pages of Trellis's own guide."""
    from django.core.files.uploadedfile import SimpleUploadedFile

    base = knowledge_base_create(owner=ada, name="Trellis guide", chunker={
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 600, "chunk_overlap": 60}})
    files = [SimpleUploadedFile(name, (ROOT / "docs" / "guide" / name).read_bytes(), content_type="text/markdown")
             for name in GUIDE_PAGES]
    documents_upload(knowledge_base=base, files=files)
    assert jobs.wait_until_idle(JOBS_TIMEOUT)
    assert base.documents.filter(status="ready").count() == len(GUIDE_PAGES)
    return base


@pytest.fixture
def pipelines(ada, guide, scripted_openai):
    local = {"component": "LocalLLM", "params": {"model": "smollm2-135m-instruct", "max_tokens": 48}}
    return {
        "local": pipeline_create(owner=ada, name="Local model", knowledge_base=guide,
                                 strategy=answering(bm25(3), local)),
        "long": pipeline_create(owner=ada, name="Long answers", knowledge_base=guide,
                                strategy=answering(bm25(2), scripted(scripted_openai))),
        "agentic": pipeline_create(owner=ada, name="Agentic", knowledge_base=guide, strategy=answering(
            {"component": "AgenticEnsembleRetriever", "params": {
                "max_iters": 2, "max_chunks": 6, "llm_model": scripted(scripted_openai),
                "children": [bm25(2), bm25(4, k1=1.2)]}},
            scripted(scripted_openai))),
    }


def sign_in_at(page, url: str) -> None:
    page.goto(url + "/chat")
    page.get_by_label("User name").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()


def choose_pipeline(page, name: str) -> None:
    page.get_by_label("Pipeline").select_option(label=f"{name} · Trellis guide")
    expect(page.get_by_role("list", name="Conversations").locator("[aria-current=page]")).to_contain_text(name)


def ask(page, question: str) -> None:
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()


def last_answer(page):
    return page.get_by_role("listitem", name="Answer").last


def test_answers_stream_stop_and_show_their_rounds_and_sources(
    asgi_server, pipelines, scripted_openai, page, screenshot  # noqa: F811
):
    url = asgi_server()
    page.add_init_script(WATCH_STREAM)
    deltas: list[str] = []

    def watch(socket):
        def frame(payload):
            event = json.loads(payload) if isinstance(payload, str) else {}
            if event.get("type") == "generation.delta":
                deltas.append(event["text"])

        socket.on("framereceived", frame)

    page.on("websocket", watch)
    sign_in_at(page, url)
    expect(page.get_by_text("Ask your documents")).to_be_visible()
    page.get_by_role("button", name="New conversation").click()
    expect(page).to_have_url(re.compile(r"/chat/\d+$"))
    expect(page.get_by_text("Live", exact=True)).to_be_visible()

    # The local model: its tokens arrive one by one, then the stored answer with its trace.
    choose_pipeline(page, "Local model")
    ask(page, "What does the agentic ensemble do in each round?")
    expect(last_answer(page)).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    # Tokens reach the page one frame each (a busy machine may let React paint several at once,
    # so the frames, not the paints, are what is counted); the page grew as they came.
    assert len(deltas) >= 2, f"the answer arrived in {len(deltas)} piece(s)"
    streamed = page.evaluate("window.__streamed")
    assert streamed == sorted(streamed) and streamed, f"the answer did not grow: {streamed}"
    expect(last_answer(page)).to_contain_text(re.compile(r"first token .+ · total"))
    trace = page.get_by_role("complementary", name="Trace")
    expect(trace.get_by_role("region", name="BM25 keyword retriever (n1)")).to_be_visible()
    screenshot("chat-local")

    # A long answer, stopped half-way.
    choose_pipeline(page, "Long answers")
    scripted_openai.enqueue(CHAT, chat_stream([f"word{n} " for n in range(400)], interval=0.03))
    ask(page, "Tell me everything about retrieval.")
    expect(last_answer(page)).to_contain_text("word20")
    page.get_by_role("button", name="Stop").click()
    expect(last_answer(page)).to_contain_text("Stopped before the end.")
    assert "word399" not in last_answer(page).inner_text()

    # A question the guide cannot answer: the invented draft is declined, with no citation, and
    # the closest passages are listed instead.
    scripted_openai.enqueue(CHAT, chat_stream(["The Orrin Lighthouse was first lit ", "in 1890 [1]."]))
    ask(page, "When was the Orrin Lighthouse first lit?")
    expect(last_answer(page)).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    declined = last_answer(page).get_by_test_id("declined")
    expect(declined).to_contain_text("Not found in your documents")
    expect(declined).not_to_contain_text("1890")
    expect(last_answer(page).locator("button.citation")).to_have_count(0)
    expect(declined.locator(".declined__passages li").first).to_be_visible()
    screenshot("chat-not-found", docs=True)

    # The agentic pipeline: two rounds, planned and judged by the scripted model.
    choose_pipeline(page, "Agentic")
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", {
        "sufficient": False, "reason": "Start with a keyword search.", "operations": [{"child": 0, "top_k": 2}]}))
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", {
        "sufficient": False, "reason": "The pool lacks how verdicts are retried; search wider.",
        "operations": [{"child": 1, "top_k": 4}]}))
    scripted_openai.enqueue(CHAT, chat_stream(AGENTIC_ANSWER, interval=0.05))
    ask(page, AGENTIC_QUESTION)
    expect(last_answer(page)).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    agentic = trace.get_by_role("region", name="Agentic ensemble (n1)")
    expect(agentic.get_by_role("tab")).to_have_count(2)
    expect(agentic.get_by_role("tabpanel")).to_contain_text("Start with a keyword search.")
    agentic.get_by_role("tab", name="Round 2").click()
    expect(agentic.get_by_role("tabpanel")).to_contain_text("top 4")
    expect(agentic.get_by_role("tabpanel")).to_contain_text("Not judged: this was the last round.")
    agentic.get_by_role("tab", name="Round 1").click()
    expect(agentic.get_by_role("tabpanel")).to_contain_text("The pool lacks how verdicts are retried; search wider.")
    expect(agentic.get_by_role("img", name=re.compile("Pool size and new chunks per round"))).to_be_visible()
    screenshot("chat-trace", docs=True)

    # The citation opens its chunk, and from there the chunk browser at that chunk. Its number is
    # the passage that holds the sentence, which the answer check may have re-pointed.
    last_answer(page).get_by_role("button", name=re.compile(r"^Open source \d+\b")).first.click()
    source = page.get_by_role("dialog", name=re.compile(r"^Source \[\d+\]"))
    expect(source).to_contain_text(re.compile(r"(agentic-retrieval|getting-started)\.md"))
    document = re.search(r"[\w-]+\.md", source.inner_text()).group(0)
    screenshot("citation")
    source.get_by_role("link", name="Show in the chunk browser").click()
    chunks = page.get_by_role("dialog", name=f"Chunks of {document}")
    expect(chunks.locator("li[aria-current=true]")).to_be_visible()
    page.go_back()

    # A past answer's trace reopens as it was; the page follows the language switcher.
    page.reload()
    expect(last_answer(page)).to_contain_text("judges the pool after each round")
    agentic = page.get_by_role("complementary", name="Trace").get_by_role("region", name="Agentic ensemble (n1)")
    expect(agentic.get_by_role("tab")).to_have_count(2)
    page.get_by_role("combobox", name="Language").select_option("es")
    expect(page.get_by_role("complementary", name="Traza").get_by_role("tab", name="Ronda 2")).to_be_visible()
    expect(page.get_by_role("button", name="Preguntar", exact=True)).to_be_visible()
    screenshot("chat-trace-es")
    page.get_by_role("combobox", name="Idioma").select_option("zh-Hant")
    expect(page.get_by_role("complementary", name="追蹤").get_by_role("tab", name="第 2 輪")).to_be_visible()
    screenshot("chat-trace-zh-Hant")

    # Compare: the same question through two pipelines, side by side.
    page.get_by_role("combobox", name="語言").select_option("en")
    page.get_by_role("link", name="Compare pipelines").click()
    page.get_by_role("combobox", name="Pipeline 1").select_option(label="Agentic · Trellis guide")
    page.get_by_role("combobox", name="Pipeline 2").select_option(label="Local model · Trellis guide")
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", {
        "sufficient": False, "reason": "Keywords first.", "operations": [{"child": 0, "top_k": 2}]}))
    scripted_openai.enqueue(CHAT, tool_call_response("retrieval_verdict", {
        "sufficient": True, "reason": "The pool answers it.", "operations": []}))
    # Only the agentic side asks the scripted server, so its answers come in the scripted order.
    scripted_openai.enqueue(CHAT, chat_stream(["Both rankings are fused [1]."]))
    page.get_by_role("textbox", name="Your question").fill("What is a hybrid retriever?")
    page.get_by_role("button", name="Compare", exact=True).click()
    for side in ("Pipeline 1: Agentic", "Pipeline 2: Local model"):
        expect(page.get_by_role("region", name=side).get_by_role("link", name="Continue in the chat")).to_be_visible(
            timeout=ANSWER_TIMEOUT_MS)
    expect(page.get_by_role("region", name="Pipeline 1: Agentic").get_by_role("tab")).to_have_count(1)
    screenshot("compare")
