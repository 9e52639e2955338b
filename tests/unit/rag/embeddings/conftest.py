"""Packaged embedding models, loaded once for the whole session (they are shared anyway)."""

import pytest

from rag.embeddings import AllMiniLML6V2Embedding, AllMiniLML6V2OnnxEmbedding, MultilingualE5SmallEmbedding


@pytest.fixture(scope="session")
def minilm():
    model = AllMiniLML6V2Embedding()
    model.init_model()
    yield model
    model.close()


@pytest.fixture(scope="session")
def e5():
    model = MultilingualE5SmallEmbedding()
    model.init_model()
    yield model
    model.close()



@pytest.fixture(scope="session")
def minilm_int8():
    model = AllMiniLML6V2OnnxEmbedding()
    model.init_model()
    yield model
    model.close()
