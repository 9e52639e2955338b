"""Models shared by the slot component tests."""

import pytest

from tests.support.tiny_models import build_tiny_cross_encoder


@pytest.fixture(scope="module")
def minilm():
    """The packaged all-MiniLM-L6-v2 embedding component, loaded once per module."""
    from rag.embeddings import AllMiniLML6V2Embedding

    model = AllMiniLML6V2Embedding()
    model.init_model()
    yield model
    model.close()


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    """A randomly initialised cross-encoder (seeded) whose tokenizer reads every word as [UNK],
    so a pair's score depends only on how many words the text has: arbitrary, but deterministic."""
    import torch

    torch.manual_seed(0)
    return build_tiny_cross_encoder(tmp_path_factory.mktemp("cross-encoder"))
