"""What akasha's ``RAG`` page promises a Python user (issue 20, items 8-11; the page is
../shared/seeds/003, in Traditional Chinese)."""

import inspect

import pytest

from rag import RAG
from rag.api import ModelNotInstalledError
from rag.documents.models import Chunk
from tests.support.scripted_openai import chat_stream, tool_call_response
from tests.support.tiny_models import build_tiny_cross_encoder

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
EMBEDDINGS = "/v1/embeddings"


@pytest.fixture
def folder(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rust.md").write_text("# Rust\n\nRust guarantees memory safety through ownership and borrowing. "
                                  "The borrow checker enforces the ownership rules at compile time.\n")
    (docs / "django.txt").write_text("Django ships an ORM, an admin panel and templates. Django's ORM maps "
                                     "models to tables; the admin panel edits them.")
    (docs / "react.txt").write_text("React renders components and re-renders them when their state changes; "
                                    "hooks keep state in function components.")
    return docs


def llm(server, **params):
    return {"component": "OpenAICompatibleLLM",
            "params": {"base_url": server.base_url, "model": "answer-model", "function_calling": "tools", **params}}


def order(*ids):
    return tool_call_response("rank_passages", {"order": list(ids)})


QUESTION = "Rust Django React ownership ORM components"
RUST_QUESTION = "How does Rust guarantee memory safety?"
RUST_ANSWER = "Rust guarantees memory safety through ownership [1]."


def rust_first(query, documents):
    """A re-ranker that puts the chunk about Rust's ownership first."""
    return sorted(documents, key=lambda document: "ownership" not in document.text)


# -- 8. "RAG 建立參數" — model, embeddings, chunk_size, search_type, reranker, reranker_model,
#       rerank_top_k, max_input_tokens, use_chroma, stream — defaults a call overrides keyword-only --

def test_rag_takes_the_creation_parameters_the_reference_lists():
    names = set(inspect.signature(RAG).parameters)
    assert {"model", "embeddings", "chunk_size", "search_type", "reranker", "reranker_model", "rerank_top_k",
            "max_input_tokens", "stream", "use_chroma"} <= names
    for method in (RAG.__call__, RAG.selfask_RAG):
        parameters = inspect.signature(method).parameters
        for name in ("reranker", "reranker_model", "rerank_top_k", "model", "search_type", "stream"):
            assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, (method.__name__, name)


def test_creation_parameters_are_the_defaults_of_every_call(scripted_openai, folder):
    rag = RAG(search_type="keyword", model=llm(scripted_openai), chunk_size=60, max_input_tokens=900,
              reranker=rust_first, rerank_top_k=1)
    scripted_openai.enqueue(CHAT, chat_stream([RUST_ANSWER]))

    assert rag(folder, RUST_QUESTION) == RUST_ANSWER

    assert len(rag.docs) == 1
    assert all(len(chunk.text) <= 60 for positions in rag.strategy(folder).retriever.chunks.values()
               for chunk in positions.values())
    [request] = scripted_openai.requests_to(CHAT)
    assert request.body["model"] == "answer-model"
    generate = next(step for step in rag.state["trace"]["steps"] if step["step"] == "generate")
    assert generate["budget"]["max_input_tokens"] == 900
    assert rag.config["params"]["retriever"] == {"component": "BM25Retriever", "params": {"top_k": 10}}


def test_a_call_overrides_the_defaults_keyword_only_for_that_call_alone(scripted_openai, folder):
    rag = RAG(search_type="keyword", model=llm(scripted_openai), reranker=rust_first, rerank_top_k=1)
    scripted_openai.enqueue(CHAT, chat_stream(["Rust guarantees memory safety ", "through ownership [1]."]))
    scripted_openai.enqueue(CHAT, chat_stream([RUST_ANSWER]))

    pieces = rag(folder, QUESTION, rerank_top_k=3, stream=True, max_input_tokens=700)
    assert list(pieces) == ["Rust guarantees memory safety ", "through ownership [1]."] and len(rag.docs) == 3
    assert rag(folder, RUST_QUESTION) == RUST_ANSWER and len(rag.docs) == 1
    budgets = [step["budget"]["max_input_tokens"] for step in rag.state["trace"]["steps"] if step["step"] == "generate"]
    assert budgets == [3000]
    with pytest.raises(TypeError):
        rag(folder, QUESTION, "llm")


def test_search_type_auto_is_the_hybrid_preset_and_model_names_a_local_model():
    rag = RAG(model="local:smollm2-135m-instruct")
    assert rag.config["params"]["retriever"]["component"] == "EnsembleRetriever"
    assert rag.config["params"]["response_synthesizer"]["params"]["llm"] == {
        "component": "LocalLLM", "params": {"model": "smollm2-135m-instruct"}}
    # Every document handed over reaches the model, within the budget (akasha's page).
    assert RAG(search_type="keyword", max_input_tokens=500).config["params"]["response_synthesizer"] == {
        "component": "ResponseSynthesizer", "params": {"max_input_tokens": 500, "max_passages": 1000, "history_turns": 20}}


@pytest.mark.parametrize(
    ("settings", "message"),
    [({"search_type": "svm"}, "unknown preset 'svm'"), ({"model": "gemini:gemini-2.5-flash"}, "model must be"),
     ({"model": "local:llama-70b"}, "no packaged model 'llama-70b'"), ({"chunk_size": 0}, "chunk_size"),
     ({"max_input_tokens": "3000"}, "max_input_tokens"), ({"embeddings": "LocalLLM"}, "must name an embedding"),
     ({"stream": "yes"}, "stream"), ({"use_chroma": 3}, "use_chroma"), ({"cache_vectors": 3}, "cache_vectors")],
)
def test_a_setting_that_cannot_work_is_refused_when_it_is_made(settings, message):
    with pytest.raises(ValueError, match=message):
        RAG(**settings)


def test_use_chroma_keeps_the_vectors_so_a_later_run_embeds_only_the_question(scripted_openai, folder, tmp_path):
    def run():
        scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
        rag = RAG(search_type="semantic", model=llm(scripted_openai), use_chroma=tmp_path / "chroma",
                  embeddings={"component": "OpenAICompatibleEmbedding",
                              "params": {"base_url": scripted_openai.base_url, "model": "scripted-model"}})
        rag(folder, "Which framework has an admin panel?")
        return rag

    first = run()
    embedded = [text for request in scripted_openai.requests_to(EMBEDDINGS) for text in request.body["input"]]
    assert len(embedded) == 1 + sum(len(p) for p in first.strategy(folder).retriever.chunks.values())
    scripted_openai.requests.clear()

    second = run()
    assert [request.body["input"] for request in scripted_openai.requests_to(EMBEDDINGS)] == [
        ["Which framework has an admin panel?"]]
    # The scripted server's vectors are seeded by each text: the same vectors, the same ranking.
    assert [doc["chunk_id"] for doc in second.docs] == [doc["chunk_id"] for doc in first.docs]


def test_each_files_vectors_are_kept_so_a_later_run_embeds_only_what_changed(scripted_openai, folder, tmp_path):
    def embedded_by(**settings):
        scripted_openai.requests.clear()
        scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
        rag = RAG(search_type="semantic", model=llm(scripted_openai), chunk_size=80, **settings,
                  embeddings={"component": "OpenAICompatibleEmbedding",
                              "params": {"base_url": scripted_openai.base_url, "model": "scripted-model"}})
        rag(folder, "Which framework has an admin panel?")
        texts = [text for request in scripted_openai.requests_to(EMBEDDINGS) for text in request.body["input"]]
        return texts, rag

    def chunk_texts(rag):
        documents = rag.strategy(folder).retriever.chunks.values()
        return {path.name: [chunk.text for chunk in positions.values()]
                for path, positions in zip(sorted(folder.iterdir()), documents, strict=True)}

    question = "Which framework has an admin panel?"
    cache = tmp_path / "vectors"
    first, rag = embedded_by(cache_vectors=cache)
    chunks = chunk_texts(rag)
    assert sorted(first) == sorted([*(text for texts in chunks.values() for text in texts), question])
    assert len(list(cache.glob("vectors-*.npy"))) == len(chunks)  # one file per document

    # Another process, the same files: only the question is embedded.
    assert embedded_by(cache_vectors=cache)[0] == [question]
    # One file changed: its chunks and the question.
    (folder / "react.txt").write_text("React renders components; hooks keep their state.")
    again, rag = embedded_by(cache_vectors=cache)
    assert sorted(again) == sorted([*chunk_texts(rag)["react.txt"], question])
    # Switched off, every chunk is embedded every run and nothing is written.
    off, rag = embedded_by(cache_vectors=False)
    assert sorted(off) == sorted([*(text for texts in chunk_texts(rag).values() for text in texts), question])
    assert len(list(cache.glob("vectors-*.npy"))) == len(chunks) + 1


def test_selfask_answers_sub_questions_from_retrieval_then_the_question(scripted_openai, folder):
    scripted_openai.enqueue(CHAT, tool_call_response("sub_questions", {
        "questions": ["How does Rust keep memory safe?", "What does Django ship?"]}))
    scripted_openai.enqueue(CHAT, chat_stream(["Rust keeps memory safe through ownership [1]."]))
    scripted_openai.enqueue(CHAT, chat_stream(["Django ships an ORM [1]."]))
    scripted_openai.enqueue(CHAT, chat_stream(["Rust keeps memory safe through ownership and borrowing [1]."]))
    rag = RAG(search_type="keyword", model=llm(scripted_openai))

    answer = rag.selfask_RAG(folder, "How does Rust keep memory safe, and what does Django ship?", rerank_top_k=1,
                             reranker=lambda q, documents: documents)

    assert answer == "Rust keeps memory safe through ownership and borrowing [1]."
    steps = rag.state["self_ask"]["steps"]
    assert [(step["question"], step["answer"]) for step in steps] == [
        ("How does Rust keep memory safe?", "Rust keeps memory safe through ownership [1]."),
        ("What does Django ship?", "Django ships an ORM [1].")]
    assert "Rust" in steps[0]["docs"][0]["text"] and "Django" in steps[1]["docs"][0]["text"]
    assert len(rag.docs) == 1
    final = scripted_openai.requests_to(CHAT)[-1].body["messages"]
    # The sub-answers are the conversation so far: after the worked examples, before the question.
    assert [turn["content"] for turn in final[-5:-1]] == [
        "How does Rust keep memory safe?", "Rust keeps memory safe through ownership [1].",
        "What does Django ship?", "Django ships an ORM [1]."]


def test_selfask_without_usable_sub_questions_answers_the_question_as_asked(scripted_openai, folder):
    for _ in range(3):
        scripted_openai.enqueue(CHAT, tool_call_response("sub_questions", {"questions": []}))
    scripted_openai.enqueue(CHAT, chat_stream(["Rust guarantees memory safety [1]."]))
    scripted_openai.enqueue(CHAT, chat_stream(["Rust is a language that guarantees memory safety [1]."]))
    rag = RAG(search_type="keyword", model=llm(scripted_openai))

    assert rag.selfask_RAG(folder, "What is Rust?") == "Rust is a language that guarantees memory safety [1]."
    assert rag.state["self_ask"]["questions"] == ["What is Rust?"]
    assert "no usable sub-questions after 3 attempt(s)" in rag.state["self_ask"]["fallback"]


# -- 9. reranker="llm": "每個候選 ID 必須恰好出現一次。格式錯誤或 ID 遺漏／重複會產生 ValueError。" ------

def test_the_llm_reranker_keeps_rerank_top_k_in_the_models_complete_order(scripted_openai, folder):
    rag = RAG(search_type="keyword", model=llm(scripted_openai), reranker="llm", rerank_top_k=2)
    candidates = [chunk.id for chunk in rag.strategy(folder).retriever.retrieve(QUESTION)[0]]
    complete = list(reversed(range(len(candidates))))
    scripted_openai.enqueue(CHAT, order(*complete))
    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))

    rag(folder, QUESTION)

    assert [doc["chunk_id"] for doc in rag.docs] == [candidates[index] for index in complete[:2]]
    assert scripted_openai.requests_to(CHAT)[0].body["model"] == "answer-model"  # reranker_model: the answer model


@pytest.mark.parametrize(
    ("answer", "problem"),
    [(tool_call_response("rank_passages", {"ranking": [0, 1]}), "order"),
     (order(0, 1), "are missing"),
     (order(0, 0, 1, 2, 3), "appear more than once")],
    ids=["malformed", "missing", "repeated"],
)
def test_a_malformed_answer_or_a_missing_or_repeated_id_is_a_value_error(scripted_openai, folder, answer, problem):
    rag = RAG(search_type="keyword", model=llm(scripted_openai), reranker="llm",
              reranker_model=llm(scripted_openai, model="rerank-model"))
    for _ in range(3):
        scripted_openai.enqueue(CHAT, answer)

    with pytest.raises(ValueError, match=problem):
        rag(folder, QUESTION)

    assert [request.body["model"] for request in scripted_openai.requests_to(CHAT)] == ["rerank-model"] * 3
    rerank = next(step for step in rag.state["trace"]["steps"] if step["step"] == "rerank")
    assert len(rerank["details"]["attempts"]) == 3 and rerank["error"] == rag.state["trace"]["error"]


# -- 10. A callable reranker: "呼叫 (query, documents) 並驗證它只重排原候選文件" --------------------

def test_a_callable_is_called_with_the_query_and_documents_and_returns_the_documents_reordered(scripted_openai, folder):
    calls = []

    def reverse_reranker(query, documents):
        calls.append((query, documents))
        return list(reversed(documents))

    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
    rag = RAG(search_type="keyword", model=llm(scripted_openai), reranker=reverse_reranker, rerank_top_k=2)
    rag(folder, QUESTION)

    [(query, documents)] = calls
    assert query == QUESTION and all(isinstance(document, Chunk) for document in documents)
    assert [doc["chunk_id"] for doc in rag.docs] == [document.id for document in reversed(documents)][:2]


def other(chunk):
    return Chunk(chunk.id + 1000, chunk.document_id, chunk.position, chunk.text)


@pytest.mark.parametrize(
    ("rerank", "problem"),
    [(lambda q, docs: docs[1:], "are missing"),
     (lambda q, docs: [*docs, other(docs[0])], "not among the candidates"),
     (lambda q, docs: [docs[0], *docs], "appear more than once"),
     (lambda q, docs: [docs[0].text, *docs[1:]], "not among the candidates"),
     (lambda q, docs: None, "must return the documents reordered"),
     (lambda q, docs: [0], "permutation")],
    ids=["dropped", "added", "repeated", "a text instead of a document", "nothing", "too few indices"],
)
def test_anything_but_a_permutation_of_exactly_the_candidates_is_a_value_error(scripted_openai, folder, rerank,
                                                                               problem):
    rag = RAG(search_type="keyword", model=llm(scripted_openai), reranker=rerank)
    with pytest.raises(ValueError, match=problem):
        rag(folder, QUESTION)


def test_returning_indices_is_an_extra_that_works(scripted_openai, folder):
    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
    rag = RAG(search_type="keyword", model=llm(scripted_openai), rerank_top_k=1,
              reranker=lambda query, documents: list(reversed(range(len(documents)))))
    candidates = rag.strategy(folder).retriever.retrieve(QUESTION)[0]
    rag(folder, QUESTION)
    assert [doc["chunk_id"] for doc in rag.docs] == [candidates[-1].id]


# -- 11. "local" / "bge": BAAI/bge-reranker-base; "local:<model>" / "bge:<model>" a named one;
#        rerank_top_k must be a positive integer --------------------------------------------------

@pytest.mark.parametrize("name", ["local", "bge"])
def test_local_and_bge_mean_bge_reranker_base_and_say_how_to_install_it(name, monkeypatch, tmp_path):
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path))  # an empty hub cache
    with pytest.raises(ModelNotInstalledError) as failure:
        RAG(reranker=name)
    message = str(failure.value)
    assert f"reranker={name!r} needs the sequence-classification re-ranker BAAI/bge-reranker-base" in message
    assert "huggingface-cli download BAAI/bge-reranker-base" in message and "reranker='local:<folder>'" in message
    assert "reranker='local-llm'" in message


def test_a_named_local_model_that_is_not_installed_says_so():
    with pytest.raises(ModelNotInstalledError, match="bge:BAAI/bge-reranker-v2-m3.*not installed"):
        RAG(reranker="bge:BAAI/bge-reranker-v2-m3")


@pytest.mark.slow
@pytest.mark.parametrize("prefix", ["local", "bge"])
def test_a_named_sequence_classification_model_re_ranks(scripted_openai, folder, tmp_path, prefix):
    model = build_tiny_cross_encoder(tmp_path / "reranker", ["rust", "django", "react"])
    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
    rag = RAG(search_type="keyword", model=llm(scripted_openai), reranker=f"{prefix}:{model}", rerank_top_k=2)

    rag(folder, QUESTION)

    rerank = next(step for step in rag.state["trace"]["steps"] if step["step"] == "rerank")
    assert rerank["component"] == "CrossEncoderReranker" and len(rag.docs) == 2
    scores = [row["score"] for row in rerank["details"]["reranked"]]
    assert scores == sorted(scores, reverse=True) and all(0 < score < 1 for score in scores)


def test_local_llm_is_the_llm_reranker_on_the_packaged_local_model(folder):
    rag = RAG(search_type="keyword", reranker="local-llm")
    reranker = rag.strategy(folder).reranker
    assert (reranker.NAME, reranker.llm.NAME, reranker.llm.params.model) == ("LLMReranker", "LocalLLM",
                                                                             "qwen2.5-0.5b-instruct")
    small = rag.strategy(folder, reranker_model="local:smollm2-135m-instruct").reranker
    assert small.llm.params.model == "smollm2-135m-instruct"


def test_answers_come_from_the_packaged_1_5b_and_the_local_llm_reranker_stays_on_the_0_5b(folder):
    default = RAG(search_type="keyword").strategy(folder)
    assert default.response_synthesizer.llm.params.model == "qwen2.5-1.5b-instruct"
    local = RAG(search_type="keyword", model="local", reranker="llm").strategy(folder)
    assert local.response_synthesizer.llm.params.model == "qwen2.5-1.5b-instruct"
    assert local.reranker.llm.params.model == "qwen2.5-1.5b-instruct"  # "llm": the answer model
    judged = RAG(search_type="keyword", model="local", reranker="local-llm", reranker_model="local").strategy(folder)
    assert judged.reranker.llm.params.model == "qwen2.5-0.5b-instruct"


@pytest.mark.parametrize("value", [0, -1, 2.5, "3", True, None])
def test_rerank_top_k_must_be_a_positive_integer(value, folder):
    with pytest.raises(ValueError, match="rerank_top_k must be a positive integer"):
        RAG(rerank_top_k=value)
    with pytest.raises(ValueError, match="rerank_top_k must be a positive integer"):
        RAG(search_type="keyword")(folder, "q", rerank_top_k=value)


@pytest.mark.parametrize("value", ["cloud", "local:", "bge:", "llm:gpt", 3])
def test_an_unknown_reranker_is_a_value_error_naming_the_choices(value):
    with pytest.raises(ValueError, match="reranker must be None, 'llm', 'local-llm', 'local' / 'bge'"):
        RAG(reranker=value)


def test_rerank_top_k_documents_reach_the_hosted_model_and_without_a_reranker_every_retrieved_one(scripted_openai,
                                                                                                   folder):
    # akasha's page: rag.docs holds what the model was given, rerank_top_k (default 5) of them after
    # re-ranking; with reranker=None rerank_top_k has no effect: every retrieved document, within
    # max_input_tokens. No fixed cap of a small local model applies to a hosted one.
    for _ in range(3):
        scripted_openai.enqueue(CHAT, chat_stream([RUST_ANSWER]))
    # The heading "Rust" alone is last: its text is inside another chunk, which the model gets once.
    rag = RAG(search_type="keyword", model=llm(scripted_openai), chunk_size=60,
              reranker=lambda query, documents: sorted(rust_first(query, documents), key=lambda d: len(d.text) < 12))
    rag(folder, QUESTION)
    retrieved = rag.state["chunks"]
    assert len(retrieved) > 5 and len(rag.docs) == 5
    assert [doc["chunk_id"] for doc in rag.docs] == [row["chunk_id"] for row in rag.state["chunks_sent"]]
    prompt = scripted_openai.requests_to(CHAT)[-1].body["messages"][-1]["content"]
    assert all(f"[{n}] " in prompt for n in range(1, 6)) and "[6] " not in prompt

    rag(folder, QUESTION, reranker=None, rerank_top_k=2)
    repeated = {entry["chunk_id"] for step in rag.state["trace"]["steps"] if step["step"] == "generate"
                for entry in step["budget"]["duplicates"]}
    assert repeated == {7}, "the heading 'Rust' is inside the chunk that follows it"
    assert [doc["chunk_id"] for doc in rag.docs] == [row["chunk_id"] for row in rag.state["chunks"]
                                                      if row["chunk_id"] not in repeated]

    rag(folder, QUESTION, reranker=None, max_input_tokens=300)
    generate = next(step for step in rag.state["trace"]["steps"] if step["step"] == "generate")
    assert 0 < len(rag.docs) < len(rag.state["chunks"]) and generate["budget"]["used_tokens"] <= 300
