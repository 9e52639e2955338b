import math

import numpy as np
import pytest

from rag.strategies.components import (
    LLMRelevanceEvaluator,
    LLMRelevanceFilter,
    SimilarityThresholdFilter,
    cosine_similarities,
)
from rag.strategies.slots import Judgement
from tests.support.scripted_openai import tool_call_response

from .support import chat_bodies, make_hits, scripted_llm, user_message

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
QUESTION = "When was the Eiffel Tower built?"


def verdicts(*rows):
    """``(id, relevant)`` pairs as a judge_passages call; reasons say which id they are for."""
    return tool_call_response("judge_passages", {"verdicts": [
        {"id": index, "relevant": relevant, "reason": f"reason {index}"} for index, relevant in rows
    ]})


def test_the_judge_sends_one_call_per_batch_and_maps_ids_back_to_chunks(scripted_openai):
    hits = make_hits(*(f"passage {index}" for index in range(5)))
    scripted_openai.enqueue(CHAT, verdicts((1, False), (0, True)))  # ids in any order
    scripted_openai.enqueue(CHAT, verdicts((0, True), (1, True)))
    scripted_openai.enqueue(CHAT, verdicts((0, False)))
    evaluator = LLMRelevanceEvaluator(llm=scripted_llm(scripted_openai), batch_size=2)

    judgements, details = evaluator.evaluate(QUESTION, hits)

    assert judgements == [Judgement(1, True, "reason 0"), Judgement(2, False, "reason 1"),
                          Judgement(3, True, "reason 0"), Judgement(4, True, "reason 1"),
                          Judgement(5, False, "reason 0")]
    bodies = chat_bodies(scripted_openai)
    assert len(bodies) == 3
    assert "[0] passage 2" in user_message(bodies[1]) and "[1] passage 3" in user_message(bodies[1])
    assert "passage 1" not in user_message(bodies[1]) and "each id from 0 to 1" in user_message(bodies[1])
    assert bodies[0]["tools"][0]["function"]["name"] == "judge_passages"
    assert [batch["chunk_ids"] for batch in details["batches"]] == [[1, 2], [3, 4], [5]]
    assert (details["relevant"], details["not_relevant"], details["not_judged"]) == (3, 2, 0)


def test_a_batch_missing_or_repeating_an_id_is_asked_again_with_the_problems(scripted_openai):
    scripted_openai.enqueue(CHAT, verdicts((0, True), (0, False)))
    scripted_openai.enqueue(CHAT, verdicts((0, True), (1, False)))

    judgements, details = LLMRelevanceEvaluator(llm=scripted_llm(scripted_openai)).evaluate(
        QUESTION, make_hits("a", "b"))

    assert [judgement.relevant for judgement in judgements] == [True, False]
    assert details["batches"][0]["attempts"][0]["problems"] == [
        "ids [0] appear more than once", "ids [1] are missing; every id must appear exactly once"]
    assert "ids [1] are missing" in chat_bodies(scripted_openai)[1]["messages"][-1]["content"]


def test_a_batch_that_never_becomes_usable_counts_as_not_judged(scripted_openai):
    scripted_openai.enqueue(CHAT, verdicts((0, True)))
    scripted_openai.enqueue(CHAT, verdicts((5, True)))  # the second batch never answers ids 0 and 1
    scripted_openai.enqueue(CHAT, verdicts((0, True), (0, True)))

    judgements, details = LLMRelevanceEvaluator(llm=scripted_llm(scripted_openai), batch_size=1,
                                                function_call_max_trials=2).evaluate(QUESTION, make_hits("a", "b"))

    assert judgements[0] == Judgement(1, True, "reason 0")
    assert judgements[1].chunk_id == 2 and judgements[1].relevant is False
    assert judgements[1].reason.startswith("not judged: the LLM gave no usable verdicts after 2 attempt(s)")
    assert [batch["judged"] for batch in details["batches"]] == [True, False]
    assert len(details["batches"][1]["attempts"]) == 2
    assert (details["relevant"], details["not_relevant"], details["not_judged"]) == (1, 0, 1)


def test_passages_are_cut_to_passage_characters(scripted_openai):
    scripted_openai.enqueue(CHAT, verdicts((0, True)))
    LLMRelevanceEvaluator(llm=scripted_llm(scripted_openai), passage_characters=50).evaluate(
        QUESTION, make_hits("x" * 50 + "TAIL"))
    message = user_message(chat_bodies(scripted_openai)[0])
    assert "x" * 50 in message and "TAIL" not in message


def test_the_llm_filter_keeps_the_relevant_chunks_in_order_with_every_verdict_in_details(scripted_openai):
    scripted_openai.enqueue(CHAT, verdicts((0, True), (1, False), (2, True)))

    outcome = LLMRelevanceFilter(llm=scripted_llm(scripted_openai)).filter(QUESTION, make_hits("a", "b", "c"))

    assert [hit.chunk.id for hit in outcome.hits] == [1, 3]
    assert outcome.hits[0].score == 1.0  # hits pass through unchanged
    assert outcome.details["judgements"] == [
        {"chunk_id": 1, "relevant": True, "reason": "reason 0"},
        {"chunk_id": 2, "relevant": False, "reason": "reason 1"},
        {"chunk_id": 3, "relevant": True, "reason": "reason 2"},
    ]
    assert outcome.details["relevant"] == 2


def test_nothing_to_judge_makes_no_call(scripted_openai):
    assert LLMRelevanceFilter(llm=scripted_llm(scripted_openai)).filter(QUESTION, []).hits == []
    assert LLMRelevanceEvaluator(llm=scripted_llm(scripted_openai)).evaluate(QUESTION, [])[0] == []
    assert chat_bodies(scripted_openai) == []


def test_cosine_similarity_ignores_vector_length_and_is_zero_for_a_zero_vector():
    vectors = np.array([[3.0, 0.0], [0.0, 2.0], [-1.0, 1.0], [0.0, 0.0]])
    similarities = cosine_similarities(np.array([1.0, 0.0]), vectors)
    assert similarities[:3] == pytest.approx([1.0, 0.0, -math.sqrt(0.5)])
    assert similarities[3] == 0.0


class TestSimilarityThresholdFilter:
    TEXTS = ("The Eiffel Tower was built between 1887 and 1889 for the World's Fair.",
             "Bananas are rich in potassium and easy to digest.",
             "Gustave Eiffel's company designed and built the tower in Paris.")

    def test_similarities_are_the_cosine_of_question_and_chunk_embeddings(self, minilm):
        outcome = SimilarityThresholdFilter(embedding_model=minilm, threshold=-1.0).filter(
            QUESTION, make_hits(*self.TEXTS))
        query = minilm.embed_query(QUESTION)
        expected = [float(np.dot(query, vector) / np.linalg.norm(query) / np.linalg.norm(vector))
                    for vector in minilm.embed_documents(list(self.TEXTS))]
        rows = outcome.details["similarities"]
        assert [row["chunk_id"] for row in rows] == [1, 2, 3]
        assert [row["similarity"] for row in rows] == pytest.approx(expected, abs=1e-6)
        assert len(outcome.hits) == 3 and all(row["kept"] for row in rows)

    def test_keeps_chunks_at_or_above_the_threshold_in_their_order(self, minilm):
        hits = make_hits(*self.TEXTS)
        similarities = [row["similarity"] for row in SimilarityThresholdFilter(
            embedding_model=minilm, threshold=-1.0).filter(QUESTION, hits).details["similarities"]]
        assert similarities[1] < 0.2 < min(similarities[0], similarities[2])

        outcome = SimilarityThresholdFilter(embedding_model=minilm, threshold=0.2).filter(QUESTION, hits)
        assert [hit.chunk.id for hit in outcome.hits] == [1, 3]
        assert [row["kept"] for row in outcome.details["similarities"]] == [True, False, True]
        assert outcome.details["threshold"] == 0.2

        at_threshold = SimilarityThresholdFilter(embedding_model=minilm, threshold=min(similarities[0], 1.0))
        assert 1 in [hit.chunk.id for hit in at_threshold.filter(QUESTION, hits).hits]

    def test_no_chunks_means_no_embedding(self):
        class Refuses:
            def embed_query(self, text):
                raise AssertionError("embedded although there was nothing to filter")

        component = SimilarityThresholdFilter()
        component.embedding_model = Refuses()
        assert component.filter(QUESTION, []).hits == []
