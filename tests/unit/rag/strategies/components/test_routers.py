import numpy as np
import pytest

from rag.components import load_components
from rag.core import validate_tree
from rag.strategies.components import EmbeddingSimilarityRouter, LLMRouter
from tests.support.scripted_openai import tool_call_response

from .support import chat_bodies, scripted_llm, user_message

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
ROUTES = ["billing", "technical", "smalltalk"]


def choose(route, reason="because"):
    return tool_call_response("choose_route", {"route": route, "reason": reason})


def llm_router(server, **params):
    return LLMRouter(llm=scripted_llm(server), **({"valid_routes": ROUTES, "default_route": "technical"} | params))


def errors_of(component, params):
    _, errors = validate_tree({"component": component, "params": params}, registry=load_components())
    return [str(error) for error in errors]


class TestLLMRouter:
    def test_the_llm_chooses_among_the_valid_routes_with_a_reason(self, scripted_openai):
        scripted_openai.enqueue(CHAT, choose("billing", " it is about an invoice "))
        router = llm_router(scripted_openai, descriptions={"billing": "invoices and payments"})

        decision = router.route("Why was I charged twice?", ["billing", "technical", "smalltalk"])

        assert (decision.route, decision.reason) == ("billing", "it is about an invoice")
        assert decision.details["chosen"] == "billing" and len(decision.details["attempts"]) == 1
        [body] = chat_bodies(scripted_openai)
        tool = body["tools"][0]["function"]
        assert tool["name"] == "choose_route"
        assert tool["parameters"]["properties"]["route"]["enum"] == ROUTES
        prompt = user_message(body)
        assert "- billing: invoices and payments\n- technical\n- smalltalk" in prompt
        assert "Why was I charged twice?" in prompt

    def test_an_unknown_route_is_asked_again(self, scripted_openai):
        scripted_openai.enqueue(CHAT, choose("sales"))
        scripted_openai.enqueue(CHAT, choose("smalltalk"))

        decision = llm_router(scripted_openai).route("hi!", ROUTES)

        assert decision.route == "smalltalk"
        assert "'sales' is not one of" in decision.details["attempts"][0]["problems"][0]
        assert "'sales' is not one of" in chat_bodies(scripted_openai)[1]["messages"][-1]["content"]

    def test_without_a_usable_answer_the_default_route_is_taken_with_the_reason(self, scripted_openai):
        for _ in range(2):
            scripted_openai.enqueue(CHAT, choose("sales"))

        decision = llm_router(scripted_openai, function_call_max_trials=2).route("hi!", ROUTES)

        assert decision.route == "technical"
        assert decision.reason.startswith("the LLM gave no usable route after 2 attempt(s)")
        assert decision.details["fallback"].endswith("taking the default route")
        assert len(chat_bodies(scripted_openai)) == 2

    def test_a_route_the_strategy_has_no_branch_for_falls_to_the_default(self, scripted_openai):
        scripted_openai.enqueue(CHAT, choose("smalltalk", "a greeting"))

        decision = llm_router(scripted_openai).route("hi!", ["billing", "technical"])

        assert (decision.route, decision.reason) == ("technical", "a greeting")
        assert decision.details["chosen"] == "smalltalk"
        assert decision.details["fallback"] == "'smalltalk' is not a branch of this strategy; taking the default route"

    def test_routes_must_be_unique_and_include_the_default_and_the_described_ones(self):
        assert errors_of("LLMRouter", {"valid_routes": ["a", "a"], "default_route": "a"}) == [
            "params.valid_routes: routes must be unique; a appear(s) more than once"]
        assert errors_of("LLMRouter", {"valid_routes": ["a", "b"], "default_route": "c",
                                       "descriptions": {"a": "x", "z": "y"}}) == [
            "params.default_route: 'c' is not one of the routes (a, b)",
            "params.descriptions: describes routes that are not in valid_routes: z"]
        assert errors_of("LLMRouter", {"valid_routes": [], "default_route": "a"}) == [
            "params.valid_routes: must have at least 1 item(s)"]


class TestEmbeddingSimilarityRouter:
    EXAMPLES = {
        "billing": ["Why was my credit card charged twice?", "How do I get a refund for my invoice?"],
        "technical": ["The app crashes when I open it", "I cannot log in to my account"],
    }

    def router(self, minilm, **params):
        return EmbeddingSimilarityRouter(embedding_model=minilm,
                                         **({"examples": self.EXAMPLES, "default_route": "technical"} | params))

    def test_routes_to_the_route_of_the_most_similar_example_and_reports_every_score(self, minilm):
        question = "I was billed two times this month"

        decision = self.router(minilm, threshold=0.3).route(question, ["billing", "technical"])

        query = minilm.embed_query(question)
        expected = {route: max(float(np.dot(query, minilm.embed_query(example))
                                     / np.linalg.norm(query) / np.linalg.norm(minilm.embed_query(example)))
                               for example in examples)
                    for route, examples in self.EXAMPLES.items()}
        assert decision.route == "billing" and decision.details["best"] == "billing"
        assert decision.details["scores"] == pytest.approx(expected, abs=1e-6)
        assert expected["billing"] > expected["technical"] and expected["billing"] >= 0.3
        assert decision.reason.startswith("most similar to an example of billing")

    def test_below_the_threshold_the_default_route_is_taken(self, minilm):
        decision = self.router(minilm, threshold=0.95).route("I was billed two times this month",
                                                             ["billing", "technical"])
        assert decision.route == "technical" and decision.details["best"] == "billing"
        assert decision.reason.startswith("no example is similar enough (best: billing at")

    def test_a_best_route_the_strategy_has_no_branch_for_falls_to_the_default(self, minilm):
        decision = self.router(minilm, threshold=0.0).route("I was billed two times this month", ["technical"])
        assert decision.route == "technical"
        assert decision.details["fallback"] == "'billing' is not a branch of this strategy; taking the default route"

    def test_examples_are_embedded_once(self, minilm):
        router = self.router(minilm)
        embedded = []
        original = minilm.embed_query

        class Counting:
            def embed_query(self, text):
                embedded.append(text)
                return original(text)

        router.embedding_model = Counting()
        for question in ("one", "two", "three"):
            router.route(question, ["billing", "technical"])
        examples = [example for examples in self.EXAMPLES.values() for example in examples]
        assert sorted(embedded) == sorted(examples + ["one", "two", "three"])

    def test_the_default_route_must_have_examples_and_every_route_at_least_one(self):
        assert errors_of("EmbeddingSimilarityRouter", {"examples": {"a": ["x"]}, "default_route": "b"}) == [
            "params.default_route: 'b' is not one of the routes of the examples (a)"]
        assert errors_of("EmbeddingSimilarityRouter", {"examples": {"a": ["x"], "b": []}, "default_route": "a"}) == [
            "params.examples.b: must have at least 1 item(s)"]
        assert errors_of("EmbeddingSimilarityRouter", {"examples": {}, "default_route": "a"})[0] == (
            "params.examples: must have at least 1 item(s)")
