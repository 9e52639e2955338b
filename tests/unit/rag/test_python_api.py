"""The Python API over a folder of files, as a notebook uses it."""

import pytest

from rag import RAG
from rag.presets import PRESETS, preset
from tests.support.scripted_openai import chat_stream

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"


@pytest.fixture
def folder(tmp_path):
    (tmp_path / "rust.md").write_text("# Rust\n\nRust guarantees memory safety through ownership and borrowing.\n")
    (tmp_path / "django.txt").write_text("Django ships an ORM, an admin panel and templates.")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4 this is not really a pdf")
    return tmp_path


def keyword_pipeline(server):
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {
            "llm": {"component": "OpenAICompatibleLLM", "params": {"base_url": server.base_url, "model": "m"}}}},
    }}


def test_answers_over_a_folder_and_shows_what_the_model_was_given(scripted_openai, folder):
    scripted_openai.enqueue(CHAT, chat_stream(["Ownership [1]."]))
    rag = RAG(keyword_pipeline(scripted_openai))
    assert rag(folder, "How does Rust stay memory safe?") == "Ownership [1]."
    assert rag.docs[0]["text"].startswith("# Rust") or "ownership" in rag.docs[0]["text"]
    assert rag.state["citations"][0]["document_name"] == "rust.md"
    assert [name for name, _ in rag.skipped] == [str(folder / "broken.pdf")]


def test_stream_yields_the_text_as_it_comes(scripted_openai, folder):
    scripted_openai.enqueue(CHAT, chat_stream(["An ", "ORM."]))
    rag = RAG(keyword_pipeline(scripted_openai))
    assert list(rag([folder / "django.txt"], "What does Django ship?", stream=True)) == ["An ", "ORM."]
    assert rag.docs[0]["chunk_id"] == 1


def test_a_callable_reranker_must_return_a_permutation(scripted_openai, folder):
    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
    rag = RAG(keyword_pipeline(scripted_openai))
    rag(folder, "Rust Django", reranker=lambda query, documents: list(reversed(range(len(documents)))),
        rerank_top_k=1)
    assert len(rag.docs) == 1
    with pytest.raises(ValueError, match="permutation"):
        rag(folder, "Rust Django", reranker=lambda query, documents: [0])


def test_the_files_language_decides_whether_the_hybrid_presets_keyword_side_stems(scripted_openai, folder):
    pipeline = keyword_pipeline(scripted_openai)
    pipeline["params"]["retriever"] = {"component": "BM25Retriever", "params": {
        "top_k": 2, "vectorizer": {"component": "BagOfWordsConverter", "params": {"stemmer": "auto"}}}}
    rag = RAG(pipeline)
    scripted_openai.enqueue(CHAT, chat_stream(["Ownership [1]."]))
    rag(folder, "borrowed panels")  # English by default: "borrowed" meets "borrowing", "panels" "panel"
    assert sorted(doc["text"].split()[0] for doc in rag.docs) == ["Django", "Rust"]
    scripted_openai.enqueue(CHAT, chat_stream(["Nothing."]))
    rag(folder, "borrowed panels", language="zh-Hant")
    assert rag.docs == []
    with pytest.raises(ValueError, match="language must be a language code"):
        RAG(language=3)


def test_a_preset_name_builds_naive_rag_over_that_retriever_and_unknown_names_are_refused():
    assert RAG("keyword").config == {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {"top_k": 10}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"max_passages": 1000, "history_turns": 20}}}}
    with pytest.raises(ValueError, match="unknown preset"):
        RAG("fastest")


@pytest.mark.slow
@pytest.mark.timeout(600)  # a lock taken twice would hang here; the time limit turns it into a failure
@pytest.mark.parametrize("name", [preset.name for preset in PRESETS if preset.name != "hybrid-cross-encoder"])
def test_every_preset_answers_over_a_folder_without_hanging(scripted_openai, folder, name):
    scripted_openai.enqueue(CHAT, chat_stream(["Ownership [1]."]))
    pipeline = keyword_pipeline(scripted_openai)
    pipeline["params"]["retriever"] = preset(name).config()  # the LLM presets consult the local model
    rag = RAG(pipeline)
    assert rag(folder, "How does Rust stay memory safe?") == "Ownership [1]."
    assert rag.docs, "the model was given no chunks"


@pytest.mark.timeout(120)
def test_a_dense_retriever_without_its_own_model_embeds_the_folder_with_the_default_one(folder):
    strategy = RAG("semantic").strategy(folder)
    chunks, node = strategy.retriever.retrieve("memory safety through ownership")
    assert "Rust guarantees memory safety" in chunks[0].text  # the Markdown parser drops the "# "
    assert node["results"][0]["chunk_id"] == chunks[0].id
