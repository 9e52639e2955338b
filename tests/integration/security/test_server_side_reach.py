"""Finding 3 of the second security round: an ordinary user's pipeline cannot make the server
open local files or reach its own network.

``gguf_path: "/etc/passwd"`` used to save (201) while a missing path was a 400, an oracle for
which files exist, and llama.cpp opened it at run time; any ``base_url`` was accepted and the
upstream error text came back.
"""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from rag.core import ConfigValidationError

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def local_llm(**params) -> dict:
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {
            "llm": {"component": "LocalLLM", "params": params}}}}}


def remote_llm(base_url: str) -> dict:
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "BM25Retriever", "params": {}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {
            "llm": {"component": "OpenAICompatibleLLM", "params": {"base_url": base_url, "model": "m"}}}}}}


@pytest.fixture
def knowledge_base(owner):
    from knowledge.services import knowledge_base_create

    return knowledge_base_create(owner=owner, name="Notes")


def save(api, knowledge_base, strategy):
    return api.post(reverse("pipeline-list"), {"name": "p", "knowledge_base": knowledge_base.pk,
                                               "strategy": strategy}, content_type="application/json")


@pytest.mark.parametrize("path", ["/etc/passwd", "/etc/no-such-file", "../../etc/hostname", "~/.ssh/id_rsa"])
def test_a_model_file_outside_the_model_folders_is_refused_the_same_way_whether_it_exists_or_not(
    api, knowledge_base, settings, tmp_path, path
):
    settings.TRELLIS_MODELS_DIRS = [tmp_path / "models"]
    response = save(api, knowledge_base, local_llm(gguf_path=path))
    assert response.status_code == 400
    errors = response.json()["errors"]
    assert [(error["path"], error["code"]) for error in errors] == [
        ("strategy.params.response_synthesizer.params.llm.params.gguf_path", "model_path")]
    assert "does not exist" not in json.dumps(errors) and path not in errors[0]["message"]


def test_inside_the_model_folders_a_missing_file_is_said_to_be_missing(api, knowledge_base, settings, tmp_path):
    settings.TRELLIS_MODELS_DIRS = [tmp_path]
    response = save(api, knowledge_base, local_llm(gguf_path=str(tmp_path / "absent.gguf")))
    assert response.status_code == 400
    assert "does not exist" in response.json()["errors"][0]["message"]


def test_a_symbolic_link_out_of_the_model_folders_does_not_get_out(api, knowledge_base, settings, tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "model.gguf").symlink_to("/etc/passwd")
    settings.TRELLIS_MODELS_DIRS = [folder]
    response = save(api, knowledge_base, local_llm(gguf_path=str(folder / "model.gguf")))
    assert [error["code"] for error in response.json()["errors"]] == ["model_path"]


@pytest.mark.parametrize("base_url", [
    "http://127.0.0.1:9/v1", "http://localhost:8000/v1", "http://10.1.2.3/v1", "http://169.254.169.254/latest",
    "http://[::1]:8080/v1", "http://192.168.0.10:11434/v1", "http://0.0.0.0:8000/v1", "http://[::ffff:127.0.0.1]/v1",
])
def test_an_ordinary_users_pipeline_cannot_name_a_private_or_unknown_address(api, knowledge_base, settings, base_url):
    settings.TRELLIS_OUTBOUND_ALLOW = []
    response = save(api, knowledge_base, remote_llm(base_url))
    assert response.status_code == 400
    error, = response.json()["errors"]
    assert error["path"] == "strategy.params.response_synthesizer.params.llm.params.base_url"
    assert error["code"] == "outbound_address"
    assert "TRELLIS_OUTBOUND_ALLOW" in error["message"]


def test_an_address_the_administrator_allowed_is_accepted(api, knowledge_base, settings):
    settings.TRELLIS_OUTBOUND_ALLOW = ["10.0.0.0/8", "localhost:8000"]
    for name, base_url in (("a", "http://10.1.2.3/v1"), ("b", "http://localhost:8000/v1")):
        response = api.post(reverse("pipeline-list"), {"name": name, "knowledge_base": knowledge_base.pk,
                                                       "strategy": remote_llm(base_url)},
                            content_type="application/json")
        assert response.status_code == 201, response.content
    assert save(api, knowledge_base, remote_llm("http://localhost:8001/v1")).status_code == 400  # another port


def test_a_name_that_resolves_nowhere_is_refused_like_a_private_address(api, knowledge_base, settings):
    # Round 3: it used to be saved (and checked again at run time, when it might point inside).
    settings.TRELLIS_OUTBOUND_ALLOW = []
    unknown = save(api, knowledge_base, remote_llm("http://no-such-host.invalid/v1"))
    private = save(api, knowledge_base, remote_llm("http://10.1.2.3/v1"))
    assert unknown.status_code == private.status_code == 400
    assert unknown.json()["errors"] == private.json()["errors"]


def test_an_administrator_names_any_address_and_file(admin_user, settings, tmp_path):
    from knowledge.services import knowledge_base_create
    from pipelines.services import pipeline_create

    settings.TRELLIS_OUTBOUND_ALLOW = []
    base = knowledge_base_create(owner=admin_user, name="Ops")
    assert pipeline_create(owner=admin_user, name="local vLLM", knowledge_base=base,
                           strategy=remote_llm("http://127.0.0.1:8000/v1")).pk


def test_the_knowledge_base_embedding_service_and_the_run_are_checked_too(owner, settings):
    from knowledge.services import knowledge_base_create
    from pipelines.models import Pipeline
    from pipelines.runtime import pipeline_strategy

    settings.TRELLIS_OUTBOUND_ALLOW = []
    with pytest.raises(ConfigValidationError) as refused:
        knowledge_base_create(owner=owner, name="Remote", embedding_model={
            "component": "OpenAICompatibleEmbedding", "params": {"base_url": "http://127.0.0.1:9/v1", "model": "e"}})
    assert [error.path for error in refused.value.errors] == ["embedding_model.params.base_url"]
    # A pipeline saved while the address was allowed is refused at the next run once it is not.
    base = knowledge_base_create(owner=owner, name="Notes")
    pipeline = Pipeline.objects.create(owner=owner, name="old", knowledge_base=base,
                                       strategy=remote_llm("http://127.0.0.1:9/v1"))
    with pytest.raises(ConfigValidationError):
        pipeline_strategy(pipeline)
