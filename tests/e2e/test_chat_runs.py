"""A run belongs to the conversation, in a real browser against daphne: a page reloaded in the
middle of an answer sees the same answer (and its live trace, chunks named by document and
position) go on and finish; another tab of the conversation
follows it live, gets the title the first question gave, and can stop it, and the stopped
answer keeps its trace. The LLM is the scripted OpenAI-compatible server, streaming slowly
enough to reload in the middle."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from playwright.sync_api import expect

import jobs
from knowledge.services import documents_upload, knowledge_base_create
from pipelines.services import pipeline_create
from tests.support.scripted_openai import chat_stream

from .asgi_server import asgi_server  # noqa: F401
from .conftest import JOBS_TIMEOUT, PASSWORD, watch_errors

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHAT = "/v1/chat/completions"
ANSWER_TIMEOUT_MS = 60_000
WAIT_MS = 20_000
"""What a busy 2-core machine may take to show a step."""
NOTES = ("Reciprocal rank fusion adds one over sixty plus the rank from each retriever.\n\n"
         "BM25 scores a chunk by the query terms it contains, weighted by their rarity.")


@pytest.fixture
def pipeline(ada, scripted_openai):
    base = knowledge_base_create(owner=ada, name="Notes", chunker={
        "component": "RecursiveCharacterChunker", "params": {"chunk_size": 200, "chunk_overlap": 0}})
    documents_upload(knowledge_base=base, files=[SimpleUploadedFile("notes.txt", NOTES.encode())])
    assert jobs.wait_until_idle(JOBS_TIMEOUT)
    llm = {"component": "OpenAICompatibleLLM", "params": {"base_url": scripted_openai.base_url, "model": "scripted"}}
    return pipeline_create(owner=ada, name="Scripted", knowledge_base=base, strategy={
        "component": "NaiveRAG", "params": {
            "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
            "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": llm}}}})


def answers(page):
    return page.get_by_role("listitem", name="Answer")


def ask(page, question: str) -> None:
    page.get_by_label("Your question").fill(question)
    page.get_by_role("button", name="Ask", exact=True).click()


def test_a_reloaded_page_and_another_tab_follow_the_answer_to_its_end_and_either_may_stop_it(
    asgi_server, pipeline, scripted_openai, page, browser_errors  # noqa: F811
):
    url = asgi_server()
    page.goto(url + "/chat")
    page.get_by_label("User name").fill("ada")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_role("button", name="New conversation").click()
    expect(page).to_have_url(re.compile(r"/chat/\d+$"), timeout=WAIT_MS)
    expect(page.get_by_text("Live", exact=True)).to_be_visible(timeout=WAIT_MS)
    other = page.context.new_page()
    watch_errors(other, browser_errors)
    other.goto(page.url)
    expect(other.get_by_text("Live", exact=True)).to_be_visible(timeout=WAIT_MS)

    # 300 words, then a sentence the notes support: the answer stands, its first sentence flagged.
    words = [f"word{n} " for n in range(299)] + ["word299. ", "Reciprocal rank fusion adds one over sixty ",
                                                 "plus the rank from each retriever [1]."]
    scripted_openai.enqueue(CHAT, chat_stream(words, interval=0.05))
    question = "How does reciprocal rank fusion score a chunk?"
    ask(page, question)
    expect(answers(page).last).to_contain_text("word10", timeout=WAIT_MS)
    page.reload()
    # The reloaded page replays the answer so far, then follows it live to its end.
    expect(answers(page).last).to_have_attribute("data-status", "streaming", timeout=WAIT_MS)
    expect(answers(page).last).to_contain_text(re.compile(r"^word0 word1 "), timeout=WAIT_MS)
    # The live trace, replayed too, names each chunk's document and position.
    live = page.get_by_role("complementary", name="Trace").get_by_role("region", name="BM25 keyword retriever (n1)")
    expect(live).to_contain_text(re.compile(r"notes\.txt · position [01]"), timeout=WAIT_MS)
    expect(answers(page).last).to_have_attribute("data-status", "streaming", timeout=WAIT_MS)
    expect(answers(page).last).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    expect(answers(page).last).to_contain_text("word299", timeout=WAIT_MS)
    expect(page.get_by_role("listitem", name="Question", exact=True)).to_have_count(1, timeout=WAIT_MS)

    # The other tab watched the same answer, and the title the question gave, live.
    expect(answers(other).last).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    assert answers(other).last.inner_text().split("\n")[0] == answers(page).last.inner_text().split("\n")[0]
    expect(other.get_by_role("heading", level=2, name=question)).to_be_visible(timeout=WAIT_MS)
    current = other.get_by_role("list", name="Conversations").locator("[aria-current=page]")
    expect(current).to_contain_text(question, timeout=WAIT_MS)

    # The other tab stops the next answer; both show it stopped, with the trace recorded so far.
    scripted_openai.enqueue(CHAT, chat_stream(words, interval=0.05))
    ask(page, "How does BM25 score a chunk?")
    expect(answers(other).last).to_contain_text("word5", timeout=WAIT_MS)
    other.get_by_role("button", name="Stop").click()
    for tab in (page, other):
        expect(answers(tab).last).to_contain_text("Stopped before the end.", timeout=ANSWER_TIMEOUT_MS)
        expect(answers(tab).last).not_to_contain_text("word299", timeout=WAIT_MS)
        trace = tab.get_by_role("complementary", name="Trace")
        expect(trace.get_by_role("region", name="BM25 keyword retriever (n1)")).to_be_visible(timeout=WAIT_MS)
    expect(page.get_by_role("button", name="Ask", exact=True)).to_be_visible(timeout=WAIT_MS)
