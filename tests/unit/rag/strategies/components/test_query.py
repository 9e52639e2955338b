import pytest

from rag.strategies.components import HyDETransformer, MultiQueryTransformer
from rag.strategies.components.query import rephrasing_problems
from tests.support.scripted_openai import chat_response, tool_call_response

from .support import chat_bodies, scripted_llm, user_message

pytestmark = pytest.mark.unit

QUESTION = "How do I reset my password?"
CHAT = "/v1/chat/completions"


def rephrase(arguments):
    return tool_call_response("rephrase_question", arguments)


def test_multi_query_returns_the_question_then_exactly_n_rephrasings(scripted_openai):
    scripted_openai.enqueue(CHAT, rephrase({"queries": [" password reset steps ", "forgot password", "change login"]}))
    transformer = MultiQueryTransformer(llm=scripted_llm(scripted_openai), n=3)

    queries, details = transformer.transform(QUESTION)

    assert queries == [QUESTION, "password reset steps", "forgot password", "change login"]
    assert details["variants"] == queries[1:] and len(details["attempts"]) == 1 and "fallback" not in details
    [body] = chat_bodies(scripted_openai)
    schema = body["tools"][0]["function"]["parameters"]["properties"]["queries"]
    assert (schema["minItems"], schema["maxItems"]) == (3, 3)
    assert QUESTION in user_message(body) and "exactly 3 rephrasings" in user_message(body)


def test_multi_query_asks_again_when_a_rephrasing_repeats_the_question_or_another(scripted_openai):
    scripted_openai.enqueue(CHAT, rephrase({"queries": ["how do i reset my password", "a", "A "]}))
    scripted_openai.enqueue(CHAT, rephrase({"queries": ["a", "b", "c"]}))

    queries, details = MultiQueryTransformer(llm=scripted_llm(scripted_openai)).transform(QUESTION)

    assert queries == [QUESTION, "a", "b", "c"]
    assert details["attempts"][0]["problems"] == [
        "queries[0] repeats the original question; rephrase it",
        "queries[2] repeats queries[1]; every rephrasing must differ",
    ]
    feedback = chat_bodies(scripted_openai)[1]["messages"][-1]["content"]
    assert "repeats the original question" in feedback and "repeats queries[1]" in feedback


def test_multi_query_asks_again_for_the_wrong_number_of_rephrasings(scripted_openai):
    scripted_openai.enqueue(CHAT, rephrase({"queries": ["only one"]}))
    scripted_openai.enqueue(CHAT, rephrase({"queries": ["one", "two"]}))

    queries, details = MultiQueryTransformer(llm=scripted_llm(scripted_openai), n=2).transform(QUESTION)

    assert queries == [QUESTION, "one", "two"]
    assert len(details["attempts"]) == 2 and "too short" in details["attempts"][0]["problems"][0]


def test_multi_query_falls_back_to_the_question_alone_and_says_so(scripted_openai):
    for _ in range(2):
        scripted_openai.enqueue(CHAT, rephrase({"queries": ["same", "same"]}))

    queries, details = MultiQueryTransformer(llm=scripted_llm(scripted_openai), n=2,
                                             function_call_max_trials=2).transform(QUESTION)

    assert queries == [QUESTION]
    assert len(chat_bodies(scripted_openai)) == 2 and len(details["attempts"]) == 2
    assert "after 2 attempt(s)" in details["fallback"] and "original question alone" in details["fallback"]
    assert "repeats queries[0]" in details["fallback"]


def test_rephrasings_that_differ_only_in_case_spacing_or_final_punctuation_are_the_same():
    assert rephrasing_problems("Reset password?", ["RESET   password", "reset it", "Reset it."], 3) == [
        "queries[0] repeats the original question; rephrase it",
        "queries[2] repeats queries[1]; every rephrasing must differ",
    ]
    assert rephrasing_problems("q", ["a", "b"], 2) == []


def test_hyde_searches_with_the_question_and_the_passage_it_wrote(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_response("  Open Settings, choose Security and press Reset.\n"))
    transformer = HyDETransformer(llm=scripted_llm(scripted_openai), passage_words=60)

    queries, details = transformer.transform(QUESTION)

    assert queries == [QUESTION, "Open Settings, choose Security and press Reset."]
    assert details == {"passage": "Open Settings, choose Security and press Reset."}
    [body] = chat_bodies(scripted_openai)
    assert "tools" not in body
    assert QUESTION in user_message(body) and "at most 60 words" in user_message(body)


def test_hyde_without_the_original_searches_with_the_passage_only(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_response("A passage."))
    queries, _ = HyDETransformer(llm=scripted_llm(scripted_openai), include_original=False).transform(QUESTION)
    assert queries == ["A passage."]


def test_hyde_falls_back_to_the_question_when_the_passage_is_empty(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_response("   "))
    queries, details = HyDETransformer(llm=scripted_llm(scripted_openai), include_original=False).transform(QUESTION)
    assert queries == [QUESTION]
    assert "empty passage" in details["fallback"]
