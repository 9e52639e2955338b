"""OpenAICompatibleEmbedding through the real openai client against a scripted local server."""

import socket

import numpy as np
import pytest

from rag.core import ConfigValidationError, CredentialError
from rag.credentials import OpenAIAPIKey
from rag.embeddings import EmbeddingError, OpenAICompatibleEmbedding
from tests.support.fixtures import scripted_openai  # noqa: F401  (a fixture)
from tests.support.scripted_openai import Delay, ScriptedError, embedding_for

pytestmark = pytest.mark.unit

API_KEY = "sk-test-5ecret-key-0123456789"
FAST_RETRY = {"retry-after-ms": "1"}


def credential_store(base_url, **keys):
    """A resolver like the credentials app's: name -> an API key bound to ``base_url``."""

    def resolve(name):
        if name not in keys:
            raise CredentialError(f"no credential named {name!r}")
        return OpenAIAPIKey(api_key=keys[name], base_url=base_url)

    return resolve


def make(server, **params):
    model = OpenAICompatibleEmbedding(base_url=server.base_url, model="scripted-model", **params)
    model.set_credential_resolver(credential_store(server.base_url, main=API_KEY))
    return model


def unit(vector):
    vector = np.asarray(vector, dtype=np.float32)
    return vector / np.linalg.norm(vector)


def test_batches_keep_input_order(scripted_openai):
    texts = [f"text number {i}" for i in range(5)]
    vectors = make(scripted_openai, batch_size=2).embed_documents(texts)
    assert vectors.shape == (5, 8) and vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, [embedding_for(text) for text in texts], atol=1e-6)
    assert [request.body["input"] for request in scripted_openai.requests] == [texts[0:2], texts[2:4], texts[4:5]]
    assert all(request.path == "/v1/embeddings" for request in scripted_openai.requests)


def test_order_follows_the_answers_index_not_its_position(scripted_openai):
    scripted_openai.enqueue("/v1/embeddings", {
        "object": "list", "model": "scripted-model", "usage": {"prompt_tokens": 2, "total_tokens": 2},
        "data": [{"object": "embedding", "index": 1, "embedding": [0.0, 1.0]},
                 {"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}],
    })
    vectors = make(scripted_openai).embed_documents(["first", "second"])
    np.testing.assert_allclose(vectors, [[1.0, 0.0], [0.0, 1.0]])


def test_dimensions_are_requested_and_known_without_a_request(scripted_openai):
    model = make(scripted_openai, dimensions=16)
    assert model.dimension == 16
    assert scripted_openai.requests == []
    assert model.embed_query("hello").shape == (16,)
    assert scripted_openai.requests[0].body["dimensions"] == 16
    make(scripted_openai).embed_documents(["x"])
    assert "dimensions" not in scripted_openai.requests[1].body


def test_an_unknown_models_dimension_is_asked_of_the_server_once(scripted_openai):
    model = make(scripted_openai)
    assert model.dimension == 8
    assert model.dimension == 8
    assert len(scripted_openai.requests) == 1


def test_the_credentials_key_is_the_bearer_token(scripted_openai):
    make(scripted_openai, credential="main").embed_documents(["secret stuff"])
    assert scripted_openai.requests[0].headers["authorization"] == f"Bearer {API_KEY}"


def test_a_local_server_gets_a_placeholder_key(scripted_openai):
    make(scripted_openai).embed_documents(["x"])
    assert scripted_openai.requests[0].headers["authorization"] == "Bearer not-needed"


def test_an_unknown_credential_is_a_credential_error(scripted_openai):
    with pytest.raises(CredentialError, match="'other'"):
        make(scripted_openai, credential="other").embed_documents(["x"])
    assert scripted_openai.requests == []


def test_a_server_error_is_readable_retried_and_free_of_the_key(scripted_openai):
    body = {"error": {"message": f"model overloaded (key {API_KEY})", "type": "server_error"}}
    for _ in range(3):
        scripted_openai.enqueue("/v1/embeddings", ScriptedError(500, body, FAST_RETRY))
    model = make(scripted_openai, credential="main")
    with pytest.raises(EmbeddingError) as caught:
        model.embed_documents(["x"])
    message = str(caught.value)
    # The error's type is a short identifier and is passed on; its free text only reaches the log.
    assert message == f"{scripted_openai.base_url} (model scripted-model) answered HTTP 500 (server_error)"
    assert caught.value.status == 500
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert len(scripted_openai.requests) == 3


def test_a_refused_key_is_reported_without_retrying(scripted_openai):
    scripted_openai.enqueue("/v1/embeddings", ScriptedError(401, {"error": {
        "message": "Incorrect API key provided", "code": "invalid_api_key"}}))
    with pytest.raises(EmbeddingError, match=r"answered HTTP 401 \(invalid_api_key\)$"):
        make(scripted_openai, credential="main").embed_documents(["x"])
    assert len(scripted_openai.requests) == 1


def test_a_server_that_never_answers_times_out(scripted_openai):
    for _ in range(3):
        scripted_openai.enqueue("/v1/embeddings", Delay(5, {}))
    with pytest.raises(EmbeddingError, match=r"did not answer within 0\.2 s"):
        make(scripted_openai, timeout=0.2).embed_documents(["x"])


def test_an_unreachable_server_is_named():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    model = OpenAICompatibleEmbedding(base_url=f"http://127.0.0.1:{port}/v1", model="m")
    with pytest.raises(EmbeddingError, match=f"could not reach http://127.0.0.1:{port}/v1 \\(model m\\)"):
        model.embed_documents(["x"])


def test_missing_indices_are_an_error(scripted_openai):
    scripted_openai.enqueue("/v1/embeddings", {
        "object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
        "data": [{"object": "embedding", "index": 0, "embedding": [1.0, 0.0]}],
    })
    with pytest.raises(EmbeddingError, match=r"returned embeddings for indices \[0\] to a request of 2 texts"):
        make(scripted_openai).embed_documents(["a", "b"])


def test_vectors_are_normalised_only_when_asked(scripted_openai):
    answer = {"object": "list", "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1},
              "data": [{"object": "embedding", "index": 0, "embedding": [3.0, 4.0]}]}
    scripted_openai.enqueue("/v1/embeddings", answer)
    scripted_openai.enqueue("/v1/embeddings", answer)
    np.testing.assert_allclose(make(scripted_openai).embed_query("x"), [0.6, 0.8], atol=1e-6)
    np.testing.assert_allclose(make(scripted_openai, normalize=False).embed_query("x"), [3.0, 4.0])


def test_no_texts_make_no_request(scripted_openai):
    assert make(scripted_openai, dimensions=4).embed_documents([]).shape == (0, 4)
    assert scripted_openai.requests == []


def test_remote_models_offer_only_truncation_and_have_no_tokenizer():
    with pytest.raises(ConfigValidationError, match="overflow_strategy"):
        OpenAICompatibleEmbedding(overflow_strategy="aggregate")
    assert OpenAICompatibleEmbedding().tokenizer() is None


def test_model_keys_differ_per_server_model_and_dimension():
    keys = {
        OpenAICompatibleEmbedding().model_key,
        OpenAICompatibleEmbedding(dimensions=256).model_key,
        OpenAICompatibleEmbedding(model="text-embedding-3-large").model_key,
        OpenAICompatibleEmbedding(base_url="http://localhost:11434/v1", model="text-embedding-3-small").model_key,
    }
    assert len(keys) == 4
    assert OpenAICompatibleEmbedding().model_key == "api-openai-com-text-embedding-3-small"
    assert OpenAICompatibleEmbedding(dimensions=1536).model_key == OpenAICompatibleEmbedding().model_key
    assert all(len(key) <= 48 for key in keys)


def test_the_key_never_reaches_the_config_or_the_trace(scripted_openai):
    model = make(scripted_openai, credential="main")
    model.embed_documents(["x"])
    assert API_KEY not in repr(model.to_config()) + repr(model.get_schema_summary()) + repr(model)
