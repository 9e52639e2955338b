"""An agentic answer in a real browser against daphne (started as ``make run`` starts it): the
chat shows the plan, each child consulted and each verdict as they happen, before the answer's
first token, in the interface's language; after a reload the trace draws the same rounds. The
planning and answering LLM is the scripted OpenAI-compatible server, its judgements held back a
moment so that "judging" is on screen while the verdict is pending."""

import pytest
from playwright.sync_api import expect

from pipelines.services import pipeline_create
from tests.support.scripted_openai import Delay, chat_stream, tool_call_response

from .asgi_server import asgi_server  # noqa: F401
from .test_chat import (
    ANSWER_TIMEOUT_MS,
    CHAT,
    answering,
    ask,
    bm25,
    choose_pipeline,
    guide,  # noqa: F401  (the knowledge base, a fixture)
    last_answer,
    scripted,
    sign_in_at,
)

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

JUDGING_SECONDS = 2.5
"""How long a scripted judgement is held back: long enough to see (and photograph) "judging"."""

QUESTION = "How does the agentic ensemble plan its rounds, and what happens to an unusable verdict?"
PLAN_REASON = "Two parts: first how the rounds are planned, then the retry rule."
VERDICT_REASON = "The pool says how rounds are planned but not what happens to an unusable verdict."

# Records, per marker, the order in which it first appeared in the answer being written and the
# number of the DOM change that showed it (changes React paints together share a number).
WATCH_ROUNDS = """
window.__rounds = [];
window.__seen = new Set();
let change = 0;
new MutationObserver(() => {
  change += 1;
  const answer = document.querySelector('li[data-status="streaming"]');
  if (!answer) return;
  const markdown = answer.querySelector('.markdown');
  const marks = {
    plan: answer.querySelector('[data-testid="agentic-plan"] .agentic-timeline__reason'),
    judging: answer.querySelector('[data-testid="agentic-judging"]'),
    verdict: answer.querySelector('[data-testid="agentic-verdict"]'),
    token: markdown && markdown.textContent.length > 0 ? markdown : null,
  };
  for (const [name, found] of Object.entries(marks)) {
    if (found && !window.__seen.has(name)) {
      window.__seen.add(name);
      window.__rounds.push([name, change]);
    }
  }
}).observe(document, {subtree: true, childList: true, characterData: true});
"""


@pytest.fixture
def agentic_pipeline(ada, guide, scripted_openai):  # noqa: F811
    return pipeline_create(owner=ada, name="Agentic", knowledge_base=guide, strategy=answering(
        {"component": "AgenticEnsembleRetriever", "params": {
            "max_iters": 3, "max_chunks": 6, "llm_model": scripted(scripted_openai),
            "children": [bm25(2), bm25(4, k1=1.2)]}},
        scripted(scripted_openai)))


def verdict(reason: str, operations: list[dict], sufficient: bool = False) -> dict:
    return tool_call_response("retrieval_verdict", {"reason": reason, "sufficient": sufficient, "operations": operations})


def test_the_chat_shows_the_plan_each_child_and_each_verdict_live_before_the_answer(
    asgi_server, agentic_pipeline, scripted_openai, page, screenshot  # noqa: F811
):
    url = asgi_server()
    page.add_init_script(WATCH_ROUNDS)
    sign_in_at(page, url)
    page.get_by_role("button", name="New conversation").click()
    expect(page.get_by_text("Live", exact=True)).to_be_visible()
    choose_pipeline(page, "Agentic")

    # The plan leaves top_k out (the child's own, 2, applies) and searches one part of the question.
    scripted_openai.enqueue(CHAT, verdict(PLAN_REASON, [{"child": 0, "query": "agentic ensemble plans rounds"}]))
    scripted_openai.enqueue(CHAT, Delay(JUDGING_SECONDS, verdict(VERDICT_REASON, [
        {"child": 1, "top_k": 4, "query": "unusable verdict asked again"}])))
    scripted_openai.enqueue(CHAT, Delay(JUDGING_SECONDS, verdict("Both parts are in the pool.", [], sufficient=True)))
    scripted_openai.enqueue(CHAT, chat_stream(["An LLM plans the rounds, ", "and an unusable verdict is asked again [1]."],
                                              interval=0.05))
    ask(page, QUESTION)

    answer = last_answer(page)
    timeline = answer.get_by_role("list", name="Agentic search, step by step")
    expect(timeline.get_by_test_id("agentic-plan")).to_contain_text(PLAN_REASON)
    expect(timeline.get_by_test_id("agentic-operation").first).to_have_text("BM25 keyword retriever · top 2 · agentic ensemble plans rounds")
    rounds = timeline.get_by_test_id("agentic-round")
    # Round 1: its child answers, then its pool is judged.
    expect(rounds.nth(0).get_by_test_id("agentic-child")).to_contain_text("BM25 keyword retriever")
    expect(rounds.nth(0).get_by_test_id("agentic-judging")).to_have_text("Judging the pool…")
    expect(answer.get_by_role("status")).to_have_text("Round 1: judging the pool…")
    # The verdict, with what round 2 will consult; then round 2 is judged in turn.
    verdict_one = rounds.nth(0).get_by_test_id("agentic-verdict")
    expect(verdict_one).to_contain_text("Not sufficient. " + VERDICT_REASON)
    expect(verdict_one.get_by_test_id("agentic-operation")).to_have_text(
        "BM25 keyword retriever · top 4 · unusable verdict asked again")
    expect(rounds.nth(1).get_by_test_id("agentic-child")).to_contain_text("unusable verdict asked again")
    expect(rounds.nth(1).get_by_test_id("agentic-judging")).to_be_visible()
    screenshot("chat-agentic-rounds", docs=True)

    expect(answer).to_have_attribute("data-status", "done", timeout=ANSWER_TIMEOUT_MS)
    marks = page.evaluate("window.__rounds")
    names = [name for name, _ in marks]
    assert names == ["plan", "judging", "verdict", "token"], f"the answer showed, in order: {marks}"
    changes = dict(marks)
    assert changes["plan"] <= changes["judging"] < changes["verdict"] < changes["token"], marks

    # Once the model reads, the rounds are in the trace; after a reload the stored trace draws them again.
    page.reload()
    rebuilt = page.get_by_role("complementary", name="Trace").get_by_role("list", name="Agentic search, step by step")
    expect(rebuilt.get_by_test_id("agentic-plan")).to_contain_text(PLAN_REASON)
    expect(rebuilt.get_by_test_id("agentic-verdict")).to_have_count(2)
    expect(rebuilt.get_by_test_id("agentic-verdict").nth(1)).to_contain_text("Sufficient. Both parts are in the pool.")

    # In Spanish the round's label and "judging" are Spanish (the model's reason is as it wrote it).
    first_conversation = page.url
    page.get_by_role("button", name="New conversation").click()
    # The new conversation opens once the server has made it; a question typed before then goes into
    # the old one's composer and is gone when the new one opens (seen on a loaded machine).
    expect(page).not_to_have_url(first_conversation)
    choose_pipeline(page, "Agentic")
    page.get_by_role("combobox", name="Language").select_option("es")
    scripted_openai.enqueue(CHAT, verdict("Primero, cómo se planifican las rondas.", [{"child": 0}]))
    scripted_openai.enqueue(CHAT, Delay(JUDGING_SECONDS, verdict("El conjunto basta.", [], sufficient=True)))
    scripted_openai.enqueue(CHAT, chat_stream(["Un LLM planifica las rondas [1]."]))
    # The page re-renders in Spanish: type the question only once it has, so the new render keeps it.
    expect(page.get_by_label("Tu pregunta")).to_be_visible()
    page.locator("#chat-question").fill("¿Cómo planifica sus rondas el conjunto agéntico?")
    expect(page.locator("#chat-question")).to_have_value("¿Cómo planifica sus rondas el conjunto agéntico?")
    page.get_by_role("button", name="Preguntar", exact=True).click()
    spanish = page.get_by_role("listitem", name="Respuesta").last.get_by_role("list", name="Búsqueda agéntica, paso a paso")
    expect(spanish.get_by_test_id("agentic-round").first).to_contain_text("Ronda 1")
    expect(spanish.get_by_test_id("agentic-judging")).to_have_text("Evaluando el conjunto…")
    expect(page.get_by_role("listitem", name="Respuesta").last.get_by_role("status")).to_have_text(
        "Ronda 1: evaluando el conjunto…")
    expect(page.get_by_role("listitem", name="Respuesta").last).to_have_attribute(
        "data-status", "done", timeout=ANSWER_TIMEOUT_MS)
