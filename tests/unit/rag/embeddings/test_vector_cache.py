"""Document vectors kept on disk: a second run embeds nothing, a changed document only itself."""

import numpy as np
import pytest

from rag.embeddings import AllMiniLML6V2OnnxEmbedding
from rag.embeddings.vector_cache import VectorCache, encoder_identity

pytestmark = pytest.mark.unit

DOCUMENTS = [
    ["Rust guarantees memory safety through ownership.", "The borrow checker runs at compile time."],
    ["Django ships an ORM and an admin panel."],
    ["React re-renders components when their state changes.", "Hooks keep state in functions.", "JSX is sugar."],
]


class Counting:
    """The packaged int8 model, counting the texts it is asked to embed."""

    def __init__(self, model):
        self.model = model
        self.embedded: list[str] = []

    def __getattr__(self, name):
        return getattr(self.model, name)

    def embed_documents(self, texts):
        self.embedded.extend(texts)
        return self.model.embed_documents(texts)


@pytest.fixture
def counting(minilm_int8):
    return Counting(minilm_int8)


def test_a_second_run_reads_every_vector_and_embeds_nothing(counting, minilm_int8, tmp_path):
    cache = VectorCache(tmp_path)
    first, embedded = cache.embed(counting, DOCUMENTS)
    assert embedded == 6 and len(counting.embedded) == 6
    np.testing.assert_allclose(first, minilm_int8.embed_documents([t for d in DOCUMENTS for t in d]), atol=1e-6)

    counting.embedded.clear()
    second, embedded = VectorCache(tmp_path).embed(counting, DOCUMENTS)
    assert embedded == 0 and counting.embedded == []
    np.testing.assert_array_equal(second, first)
    assert len(list(tmp_path.glob("vectors-*.npy"))) == 3 and not list(tmp_path.glob("*.tmp.npy"))


def test_a_changed_document_is_embedded_alone_in_its_place(counting, tmp_path):
    cache = VectorCache(tmp_path)
    cache.embed(counting, DOCUMENTS)
    changed = [DOCUMENTS[0], ["Django ships an ORM, an admin panel and templates."], DOCUMENTS[2]]
    counting.embedded.clear()

    vectors, embedded = cache.embed(counting, changed)

    assert counting.embedded == changed[1] and embedded == 1
    np.testing.assert_allclose(vectors[2], counting.model.embed_documents(changed[1])[0], atol=1e-6)


def test_an_unreadable_file_is_embedded_again_and_replaced(counting, tmp_path):
    cache = VectorCache(tmp_path)
    expected, _ = cache.embed(counting, DOCUMENTS[:1])
    [stored] = tmp_path.glob("vectors-*.npy")
    stored.write_bytes(b"not a numpy file")
    counting.embedded.clear()

    vectors, embedded = cache.embed(counting, DOCUMENTS[:1])

    assert embedded == 2
    np.testing.assert_array_equal(vectors, expected)
    assert np.load(stored).shape == (2, 384)


def test_settings_that_change_the_vectors_name_other_files_and_runtime_ones_do_not():
    plain = encoder_identity(AllMiniLML6V2OnnxEmbedding())
    assert encoder_identity(AllMiniLML6V2OnnxEmbedding(batch_size=8, threads=1)) == plain
    assert encoder_identity(AllMiniLML6V2OnnxEmbedding(overflow_strategy="aggregate")) != plain
    assert encoder_identity(AllMiniLML6V2OnnxEmbedding(normalize=False)) != plain
