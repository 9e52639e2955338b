import pytest

from rag.components import load_components
from rag.core import TrellisError, install_model_action, validate_tree
from rag.retrievers.cross_encoder import SentenceTransformerCrossEncoderRetriever
from rag.retrievers.cross_encoder.retriever import sigmoid
from rag.retrievers.llm_rerank import LLMRerankRetriever
from rag.strategies.components import CrossEncoderReranker, LLMReranker, RerankError
from tests.support.scripted_openai import tool_call_response
from tests.unit.rag.retrievers.fixed_retriever import FixedRetriever, make_documents

from .support import chat_bodies, make_hits, scripted_llm, user_message

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
QUESTION = "q"


def order(*ids):
    return tool_call_response("rank_passages", {"order": list(ids)})


class TestLLMReranker:
    def test_keeps_the_best_top_k_in_the_llms_order_scored_by_position(self, scripted_openai):
        hits = make_hits("alpha", "beta", "gamma", "delta")
        scripted_openai.enqueue(CHAT, order(2, 0, 3, 1))

        outcome = LLMReranker(llm=scripted_llm(scripted_openai), top_k=3).rerank(QUESTION, hits)

        assert [hit.chunk.id for hit in outcome.hits] == [3, 1, 4]
        assert [hit.score for hit in outcome.hits] == [1.0, 0.75, 0.5]
        assert outcome.hits[0].sources == hits[2].sources
        assert outcome.details["order"] == [2, 0, 3, 1]
        assert outcome.details["reranked"] == [{"chunk_id": 3, "score": 1.0, "from_rank": 3},
                                               {"chunk_id": 1, "score": 0.75, "from_rank": 1},
                                               {"chunk_id": 4, "score": 0.5, "from_rank": 4}]
        [body] = chat_bodies(scripted_openai)
        assert body["tools"][0]["function"]["name"] == "rank_passages"
        assert "[0] alpha" in user_message(body) and "[3] delta" in user_message(body)

    def test_an_incomplete_order_is_asked_again_with_the_problems(self, scripted_openai):
        scripted_openai.enqueue(CHAT, order(1, 1, 7))
        scripted_openai.enqueue(CHAT, order(1, 0, 2))

        outcome = LLMReranker(llm=scripted_llm(scripted_openai)).rerank(QUESTION, make_hits("a", "b", "c"))

        assert [hit.chunk.id for hit in outcome.hits] == [2, 1, 3]
        assert outcome.details["attempts"][0]["problems"] == [
            "ids [7] are not candidates (valid ids are 0 to 2)", "ids [1] appear more than once",
            "ids [0, 2] are missing; every id must appear exactly once"]
        assert "ids [0, 2] are missing" in chat_bodies(scripted_openai)[1]["messages"][-1]["content"]

    def test_when_no_order_is_usable_it_raises_a_value_error_with_the_attempts(self, scripted_openai):
        for _ in range(2):
            scripted_openai.enqueue(CHAT, order(0))
        hits = make_hits("a", "b", "c")

        with pytest.raises(RerankError) as failure:
            LLMReranker(llm=scripted_llm(scripted_openai), top_k=2, function_call_max_trials=2).rerank(QUESTION, hits)

        assert isinstance(failure.value, ValueError)
        assert str(failure.value).startswith("the LLM gave no usable order after 2 attempt(s)")
        assert "ids [1, 2] are missing" in str(failure.value)
        assert len(failure.value.details["attempts"]) == 2

    def test_a_single_hit_needs_no_call(self, scripted_openai):
        hits = make_hits("only")
        assert LLMReranker(llm=scripted_llm(scripted_openai)).rerank(QUESTION, hits).hits == hits
        assert LLMReranker(llm=scripted_llm(scripted_openai)).rerank(QUESTION, []).hits == []
        assert chat_bodies(scripted_openai) == []

    def test_the_retriever_asks_the_same_question_as_the_reranker(self, scripted_openai):
        documents = make_documents(3)
        child = FixedRetriever(top_k=3).plan((1, 0), (1, 1), (1, 2))
        child.inject_infra(chunks=documents)
        retriever = LLMRerankRetriever(children=[child], llm_model=scripted_llm(scripted_openai), top_k=2)
        scripted_openai.enqueue(CHAT, order(2, 1, 0))
        scripted_openai.enqueue(CHAT, order(2, 1, 0))

        chunks, _ = retriever.retrieve(QUESTION)
        hits, _ = child.search(QUESTION)
        outcome = LLMReranker(llm=scripted_llm(scripted_openai), top_k=2).rerank(QUESTION, hits)

        assert [chunk.id for chunk in chunks] == [hit.chunk.id for hit in outcome.hits] == [102, 101]
        first, second = chat_bodies(scripted_openai)
        assert first["messages"] == second["messages"]
        assert first["tools"] == second["tools"]


@pytest.mark.slow
class TestCrossEncoderReranker:
    TEXTS = ("w1 w2 w3", "w4 w5", "w6 w7 w8 w9 w10", "w11", "w12 w13 w14 w15")

    def test_scores_are_the_sigmoid_of_the_models_logits_best_first(self, tiny_cross_encoder):
        import torch
        from sentence_transformers import CrossEncoder

        hits = make_hits(*self.TEXTS)
        outcome = CrossEncoderReranker(model_name=tiny_cross_encoder, top_k=3).rerank(QUESTION, hits)

        logits = CrossEncoder(tiny_cross_encoder).predict([(QUESTION, text) for text in self.TEXTS],
                                                          activation_fn=torch.nn.Identity())
        expected = sorted(((sigmoid(float(logit)), index) for index, logit in enumerate(logits)),
                          key=lambda pair: (-pair[0], pair[1]))[:3]
        assert [hit.chunk.id for hit in outcome.hits] == [index + 1 for _, index in expected]
        assert [hit.score for hit in outcome.hits] == pytest.approx([score for score, _ in expected], rel=1e-5)
        assert [row["from_rank"] for row in outcome.details["reranked"]] == [index + 1 for _, index in expected]
        assert outcome.hits[0].sources == hits[expected[0][1]].sources

    def test_equal_scores_keep_the_incoming_order(self, tiny_cross_encoder):
        # The tiny model scores texts with as many words the same.
        hits = make_hits("w1 w2", "w3 w4")
        reranker = CrossEncoderReranker(model_name=tiny_cross_encoder)
        assert [hit.chunk.id for hit in reranker.rerank(QUESTION, hits).hits] == [1, 2]
        assert [hit.chunk.id for hit in reranker.rerank(QUESTION, hits[::-1]).hits] == [2, 1]

    def test_scores_match_the_cross_encoder_retrievers(self, tiny_cross_encoder):
        documents = make_documents(4)
        child = FixedRetriever(top_k=4).plan(*[(1, position) for position in range(4)])
        child.inject_infra(chunks=documents)
        retriever = SentenceTransformerCrossEncoderRetriever(children=[child], model_name=tiny_cross_encoder, top_k=4)
        retriever.inject_infra(chunks=documents)

        _, node = retriever.retrieve(QUESTION)
        hits, _ = child.search(QUESTION)
        outcome = CrossEncoderReranker(model_name=tiny_cross_encoder, top_k=4).rerank(QUESTION, hits)

        assert [(row["chunk_id"], row["score"]) for row in node["results"]] == [
            (hit.chunk.id, pytest.approx(hit.score, rel=1e-6)) for hit in outcome.hits]

    def test_availability_is_the_retrievers(self, tiny_cross_encoder):
        registry = load_components()
        assert CrossEncoderReranker.availability_problem({"model_name": tiny_cross_encoder}) is None
        _, errors = validate_tree({"component": "CrossEncoderReranker",
                                   "params": {"model_name": "cross-encoder/ms-marco-MiniLM-L-6-v2"}},
                                  registry=registry, check_availability=True)
        assert [(error.path, error.code) for error in errors] == [("component", "unavailable")]
        assert "Models page" in errors[0].message and "manage.py" not in errors[0].message
        assert errors[0].action == install_model_action("cross-encoder", "cross-encoder/ms-marco-MiniLM-L-6-v2")

    def test_a_model_without_a_local_copy_fails_with_what_to_do_but_no_hits_need_no_model(self, tmp_path):
        reranker = CrossEncoderReranker(model_name=str(tmp_path))
        assert reranker.rerank(QUESTION, []).hits == []
        with pytest.raises(TrellisError, match="without config.json"):
            reranker.rerank(QUESTION, make_hits("w1"))
