"""Shared pytest fixtures. Import a fixture into a test module (or list this module in
``pytest_plugins``) to use it."""

from collections.abc import Iterator

import pytest

from tests.support.scripted_openai import ScriptedOpenAIServer
from tests.support.server import collect_static, make_run_environment


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAIServer]:
    """A started ``ScriptedOpenAIServer``, stopped after the test."""
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def collected_static() -> None:
    """The test data directory prepared as ``make run`` prepares ``var/``: the secret key in its
    file (settings read it there, as every command after ``make run`` does) and the static files
    collected with the production storage."""
    import os

    from django.conf import settings

    key_file = settings.SECRET_KEY_FILE
    if not key_file.exists():
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(settings.SECRET_KEY + "\n")
    collect_static(make_run_environment(settings.DATA_DIR))


@pytest.fixture
def fake_hub():
    """A started loopback Hugging Face Hub (``tests/support/fake_hub.py``), stopped after the test."""
    from tests.support.fake_hub import FakeHub

    with FakeHub() as hub:
        yield hub


@pytest.fixture
def model_store(tmp_path, monkeypatch):
    """This process's model store, emptied: a fresh folder for the test, the previous store back
    after it (the Django app configures one in the test data directory)."""
    from rag.models_manager import ModelStore, storage

    store = ModelStore(tmp_path / "installed-models")
    monkeypatch.setattr(storage, "_store", store)
    return store


@pytest.fixture(scope="session")
def tiny_model_folders(tmp_path_factory):
    """A tiny cross-encoder and a tiny sentence-transformers embedding model, built once (no
    package ships either kind small enough for tests)."""
    import torch

    from tests.support.tiny_models import build_tiny_cross_encoder, build_tiny_embedding_model

    torch.manual_seed(0)
    words = ["river", "bank", "money", "water", "lantern", "festival", "quillon", "march", "moon", "flood"]
    root = tmp_path_factory.mktemp("tiny-models")
    return {"cross-encoder": build_tiny_cross_encoder(root / "tiny-ce", words),
            "embedding": build_tiny_embedding_model(root / "tiny-embed", words)}
