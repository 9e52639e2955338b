"""What DashAI's pages for AgenticEnsembleRetriever and SentenceTransformerCrossEncoderRetriever
promise a Python user (issue 20, items 1-4; the pages are ../shared/seeds/000 and 001)."""

import json

import pytest

from rag.components import load_components
from rag.core import build, validate_or_raise
from rag.documents.chunkers import RecursiveCharacterChunker
from rag.documents.models import Chunk
from rag.documents.parsers.base import Section
from rag.embeddings import OpenAICompatibleEmbedding
from rag.llms import OpenAICompatibleLLM
from rag.retrievers.composite import AgenticEnsembleRetriever, EnsembleRetriever
from rag.retrievers.cross_encoder import SentenceTransformerCrossEncoderRetriever
from rag.retrievers.dense import DenseEmbeddingRetriever
from rag.retrievers.llm_rerank import LLMRerankRetriever
from rag.retrievers.sparse import BM25Retriever
from tests.support.scripted_openai import tool_call_response
from tests.support.tiny_models import build_tiny_cross_encoder

from .corpus import corpus_chunks
from .fixed_retriever import FixedRetriever, make_documents

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
TRACE_KEYS = {"id", "class", "params", "query", "top_k", "elapsed_ms", "results", "children", "rounds", "error"}


def verdict(*operations, sufficient=False):
    return tool_call_response("retrieval_verdict", {"sufficient": sufficient, "reason": "r",
                                                    "operations": [{"child": c, "top_k": k} for c, k in operations]})


def agentic(server, **params):
    """Child 0 returns document 1's chunks in order, child 1 document 2's."""
    children = [FixedRetriever(top_k=4).plan(*[(1, p) for p in range(10)]),
                FixedRetriever(top_k=3).plan(*[(2, p) for p in range(10)])]
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="m", function_calling="tools")
    retriever = AgenticEnsembleRetriever(children=children, llm_model=llm, **params)
    for node in [retriever, *children]:
        node.inject_infra(chunks=make_documents(10, 10))
    return retriever


# -- 1. AgenticEnsembleRetriever.retrieve(query, **kwargs): "Unused; children choices and sizes
#       come from the LLM verdicts." -------------------------------------------------------------

def test_agentic_retrieve_keyword_arguments_are_unused_children_and_sizes_come_from_the_verdicts(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict((0, 4), (1, 3)))
    scripted_openai.enqueue(CHAT, verdict((0, 4), (1, 3)))
    plain = agentic(scripted_openai, max_iters=1).retrieve("question")
    chunks, node = agentic(scripted_openai, max_iters=1).retrieve("question", top_k=1, where={"lang": "en"})

    assert [chunk.id for chunk in chunks] == [chunk.id for chunk in plain[0]] and len(chunks) == 7
    assert [child["top_k"] for child in node["children"]] == [4, 3]
    assert node["top_k"] == 10  # max_chunks
    assert node["details"]["ignored_arguments"] == {"top_k": 1, "where": {"lang": "en"}}
    assert "ignored_arguments" not in plain[1].get("details", {})


def test_agentic_pool_is_bounded_by_max_chunks_only(scripted_openai):
    scripted_openai.enqueue(CHAT, verdict((0, 4), (1, 3)))
    chunks, node = agentic(scripted_openai, max_iters=1, max_chunks=5).retrieve("question", 50)
    assert len(chunks) == 5 and node["rounds"][0]["pool_size"] == 5


def test_a_strategys_top_k_does_not_cut_an_agentic_pool(scripted_openai):
    from rag.strategies import NaiveRAG, ResponseSynthesizer
    from tests.support.scripted_openai import chat_stream

    scripted_openai.enqueue(CHAT, verdict((0, 4), (1, 3)))
    scripted_openai.enqueue(CHAT, chat_stream(["ok"]))
    synthesizer = ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m"))
    state = NaiveRAG(retriever=agentic(scripted_openai, max_iters=1), response_synthesizer=synthesizer,
                     top_k=2).run("question")
    assert len(state["chunks"]) == 7
    assert state["trace"]["steps"][0]["node"]["details"]["ignored_arguments"] == {"top_k": 2}


# -- 2. "retrieve(...) -> Tuple[List[Chunk], Dict[str, Any]]" for every retriever ---------------

def bm25(server, tmp_path):
    retriever = BM25Retriever(top_k=3)
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


def dense(server, tmp_path):
    retriever = DenseEmbeddingRetriever(top_k=3, embedding_model=OpenAICompatibleEmbedding(
        base_url=server.base_url, model="scripted-model"))
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


def ensemble(server, tmp_path):
    fusion = EnsembleRetriever(children=[bm25(server, tmp_path), dense(server, tmp_path)], top_k=3)
    fusion.inject_infra(chunks=corpus_chunks())
    return fusion


def llm_rerank(server, tmp_path):
    server.enqueue(CHAT, tool_call_response("rank_passages", {"order": [2, 0, 1]}))
    child = bm25(server, tmp_path)
    retriever = LLMRerankRetriever(children=[child], top_k=2, llm_model=OpenAICompatibleLLM(
        base_url=server.base_url, model="m", function_calling="tools"))
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


def cross_encoder(server, tmp_path):
    words = sorted({word.strip(".,").lower() for positions in corpus_chunks().values()
                    for chunk in positions.values() for word in chunk.text.split()})
    retriever = SentenceTransformerCrossEncoderRetriever(
        children=[bm25(server, tmp_path)], top_k=2, model_name=build_tiny_cross_encoder(tmp_path / "ce", words))
    retriever.inject_infra(chunks=corpus_chunks())
    retriever.init_model()
    return retriever


def agentic_over_the_corpus(server, tmp_path):
    server.enqueue(CHAT, verdict((0, 2)))
    retriever = AgenticEnsembleRetriever(children=[bm25(server, tmp_path)], max_iters=1, llm_model=OpenAICompatibleLLM(
        base_url=server.base_url, model="m", function_calling="tools"))
    retriever.inject_infra(chunks=corpus_chunks())
    return retriever


EVERY_RETRIEVER = {
    "BM25Retriever": bm25,
    "DenseEmbeddingRetriever": dense,
    "EnsembleRetriever": ensemble,
    "LLMRerankRetriever": llm_rerank,
    "SentenceTransformerCrossEncoderRetriever": pytest.param(cross_encoder, marks=pytest.mark.slow),
    "AgenticEnsembleRetriever": agentic_over_the_corpus,
}


def test_every_registered_retriever_is_checked_below():
    registered = {component.NAME for component in load_components() if component.KIND == "retriever"}
    assert registered == set(EVERY_RETRIEVER)


@pytest.mark.parametrize("make", EVERY_RETRIEVER.values(), ids=EVERY_RETRIEVER.keys())
def test_retrieve_returns_chunks_and_the_trace_node_as_a_plain_json_dict(scripted_openai, tmp_path, make):
    chunks, node = make(scripted_openai, tmp_path).retrieve("Rust memory safety ownership")

    assert chunks and all(isinstance(chunk, Chunk) for chunk in chunks)
    assert isinstance(node, dict) and set(node) >= TRACE_KEYS
    assert json.loads(json.dumps(node)) == node
    assert [row["chunk_id"] for row in node["results"]] == [chunk.id for chunk in chunks]
    for child in node["children"]:
        assert isinstance(child, dict) and set(child) >= TRACE_KEYS


# -- 3. "expand_retrieved_chunks(chunks: List[Chunk], window_size: int) -> List[Chunk]" and
#       "merge_expanded_chunks(chunks: List[Chunk]) -> List[Chunk]": "Merge overlapping expanded
#       units without widening plain chunks." ------------------------------------------------------

TOPICS = ["pruning pears", "training espaliers", "feeding apple trees", "thinning fruit"]
SECTIONS = [Section(" ".join(f"Note {page}.{i} is about {TOPICS[(page + i) % 4]}." for i in range(8)), {"page": page})
            for page in (1, 2, 3)]


def real_document():
    """One three-page document cut by the recursive chunker with overlap, as ingestion cuts it
    (21 chunks, each sharing a sentence with the next within a page), and its text."""
    drafts = RecursiveCharacterChunker(chunk_size=100, chunk_overlap=40).split(SECTIONS)
    chunks = {0: {draft.position: Chunk(10 + draft.position, 0, draft.position, draft.text, draft.metadata)
                  for draft in drafts}}
    return chunks, "\n\n".join(section.text for section in SECTIONS)


def retriever_over(chunks):
    retriever = BM25Retriever()
    retriever.inject_infra(chunks=chunks)
    return retriever


def test_expand_and_merge_are_public_and_work_on_plain_chunks():
    chunks, text = real_document()
    retriever = retriever_over(chunks)
    plain = [chunks[0][5], chunks[0][3], chunks[0][9]]

    units = retriever.expand_retrieved_chunks(plain, 3)
    assert [unit.metadata["window"] for unit in units] == [[4, 6], [2, 4], [8, 10]]
    assert [unit.id for unit in units] == [15, 13, 19]

    merged = retriever.merge_expanded_chunks(units)
    assert [chunk.metadata["window"] for chunk in merged] == [[2, 6], [8, 10]]
    assert merged[0].id == 15 and merged[0].metadata["retrieved_positions"] == [3, 5]
    assert merged[0].metadata["window_chunk_ids"] == [12, 13, 14, 15, 16]


def test_a_window_is_the_documents_text_over_its_span_so_overlap_is_never_repeated():
    chunks, text = real_document()
    positions = chunks[0]
    assert any(positions[p].text[:15] in positions[p - 1].text for p in range(1, len(positions)))  # they overlap
    retriever = retriever_over(chunks)

    for window in (2, 3, 4, 5):
        for unit in retriever.expand_retrieved_chunks(list(positions.values()), window):
            first, last = unit.metadata.get("window", [unit.position, unit.position])
            assert unit.text == text[positions[first].metadata["start"]:positions[last].metadata["end"]]
    [merged] = retriever.merge_expanded_chunks(retriever.expand_retrieved_chunks([positions[6], positions[8]], 3))
    assert merged.text == text[positions[5].metadata["start"]:positions[9].metadata["end"]]
    assert merged.text.count("Note 1.6 is about") == 1 and "\n\nNote 2.0" in merged.text
    assert (merged.metadata["page"], merged.metadata["pages"]) == (1, [1, 2])


def test_merging_never_widens_plain_chunks():
    chunks, _ = real_document()
    retriever = retriever_over(chunks)
    unit = retriever.expand_retrieved_chunks([chunks[0][4]], 3)[0]
    given = [chunks[0][3], unit, chunks[0][5], chunks[0][9]]  # plain chunks inside and beside the window

    assert retriever.merge_expanded_chunks(given) == given
    assert retriever.merge_expanded_chunks([chunks[0][4], chunks[0][5]]) == [chunks[0][4], chunks[0][5]]
    assert retriever.expand_retrieved_chunks([chunks[0][4]], 1) == [chunks[0][4]]


def test_retrieve_then_expand_in_a_retriever_returns_the_span_text():
    chunks, text = real_document()
    retriever = BM25Retriever(top_k=1, enable_retrieve_then_expand=True, expand_window=3)
    retriever.inject_infra(chunks=chunks)
    [found], node = retriever.retrieve("Note 2.3 espaliers")
    first, last = found.metadata["window"]
    assert found.text == text[chunks[0][first].metadata["start"]:chunks[0][last].metadata["end"]]
    assert node["results"][0]["window"] == [first, last]


def test_chunks_without_offsets_join_at_a_repeated_run_of_words_and_otherwise_by_a_line_break():
    shared = "the leaders in late winter and tie"
    before = Chunk(1, 7, 0, f"Espaliers need care: prune {shared}")
    after = Chunk(2, 7, 1, f"{shared} new shoots in summer.")
    lonely = Chunk(3, 7, 2, "Pears suit them.")
    retriever = retriever_over({7: {0: before, 1: after, 2: lonely}})

    [unit] = retriever.expand_retrieved_chunks([before], 2)
    assert unit.text == f"Espaliers need care: prune {shared} new shoots in summer."
    [unit] = retriever.expand_retrieved_chunks([lonely], 3)
    assert unit.text == f"{shared} new shoots in summer.\nPears suit them."


# -- 4. A DashAI configuration imports verbatim -------------------------------------------------

# AgenticEnsembleRetriever's ``children`` default exactly as the reference page prints it.
DASHAI_CHILDREN = [
    {"component": "DenseEmbeddingRetriever", "params": {"embedding_model": {
        "component": "ParaphraseMultilingualMiniLML12V2Embedding",
        "params": {"batch_size": 32, "device": "CPU", "normalize": True, "overflow_strategy": "truncate"}},
        "similarity_metric": "cosine", "top_k": 10}},
    {"component": "BM25Retriever", "params": {
        "b": 0.75, "delta": 0.0, "k1": 1.5, "similarity_function": "cosine", "top_k": 10,
        "vectorizer": {"component": "BagOfWordsConverter", "params": {
            "analyzer": "word", "custom_stop_words": None, "drop_source_columns": False, "lower_bound_ngrams": 1,
            "lowercase": True, "max_df": 1.0, "max_features": None, "min_df": 0.0, "stop_words": None,
            "strip_accents": None, "upper_bound_ngrams": 1}}}},
]


def test_the_dashai_children_default_validates_verbatim():
    normalised = validate_or_raise({"component": "AgenticEnsembleRetriever", "params": {"children": DASHAI_CHILDREN}},
                                   registry=load_components())
    vectorizer = normalised["params"]["children"][1]["params"]["vectorizer"]["params"]
    assert (vectorizer["ngram_min"], vectorizer["ngram_max"], vectorizer["min_df"]) == (1, 1, 0.0)
    assert (vectorizer["stop_words"], vectorizer["custom_stop_words"]) == ("none", [])
    assert "drop_source_columns" not in vectorizer and "lower_bound_ngrams" not in vectorizer
    assert "similarity_function" not in normalised["params"]["children"][1]["params"]


def test_the_dashai_bm25_child_builds_and_ranks_as_the_canonical_one():
    dashai = build(DASHAI_CHILDREN[1], kind="retriever", registry=load_components(), infra={"chunks": corpus_chunks()})
    canonical = build({"component": "BM25Retriever", "params": {"top_k": 10}}, kind="retriever",
                      registry=load_components(), infra={"chunks": corpus_chunks()})
    found, node = dashai.retrieve("Rust memory safety ownership")
    assert found and [row["score"] for row in node["results"]] == [
        row["score"] for row in canonical.retrieve("Rust memory safety ownership")[1]["results"]]
    assert dashai.to_config()["params"]["vectorizer"]["params"]["ngram_max"] == 1


def test_the_schema_shows_one_canonical_name_for_each_alias():
    registry = load_components()
    converter = registry.get("BagOfWordsConverter").get_schema()["properties"]
    assert {"ngram_min", "ngram_max", "min_df", "stop_words"} <= set(converter)
    assert not {"lower_bound_ngrams", "upper_bound_ngrams", "drop_source_columns"} & set(converter)
    assert "similarity_function" not in registry.get("BM25Retriever").get_schema()["properties"]


@pytest.mark.parametrize(
    ("params", "path"),
    [({"lower_bound_ngrams": 0}, "lower_bound_ngrams"), ({"drop_source_columns": "no"}, "drop_source_columns"),
     ({"min_df": 1.5}, "min_df"), ({"stop_words": "klingon"}, "stop_words")],
)
def test_an_alias_with_a_wrong_value_is_refused_at_its_own_path(params, path):
    from rag.core import ConfigValidationError

    with pytest.raises(ConfigValidationError) as failure:
        validate_or_raise({"component": "BagOfWordsConverter", "params": params}, registry=load_components())
    assert [error.path for error in failure.value.errors] == [f"params.{path}"]


def test_similarity_function_other_than_cosine_is_refused():
    from rag.core import ConfigValidationError

    with pytest.raises(ConfigValidationError, match="similarity_function"):
        validate_or_raise({"component": "BM25Retriever", "params": {"similarity_function": "l2"}},
                          registry=load_components())
