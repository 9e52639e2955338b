"""Issue 38, findings 1 and 3: who may install what, and who may let a model run its code.

An ordinary user's uploaded model is theirs alone: others neither see it nor name it (by its
name or by a path into the model store), administrators see every one. Only an administrator
may set ``trust_remote_code``, refused for others at the parameter's JSON path.
"""

from __future__ import annotations

import itertools
import zipfile
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

import jobs
from tests.integration.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


@pytest.fixture(autouse=True)
def _fresh_store(model_store):
    """Every test starts with no installed model."""


@pytest.fixture
def admin_api(admin_user):
    return logged_in(admin_user)


def upload_zip(client, folder: str, target: Path, name: str):
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                archive.write(path, f"model/{path.relative_to(folder).as_posix()}")
    upload = SimpleUploadedFile(target.name, target.read_bytes(), content_type="application/zip")
    return client.post(reverse("model-install-upload"), {"file": upload, "kind": "cross-encoder", "name": name})


def reranking(model_name: str) -> dict:
    return {"component": "NaiveRAG", "params": {"retriever": {
        "component": "SentenceTransformerCrossEncoderRetriever",
        "params": {"model_name": model_name, "children": [{"component": "BM25Retriever", "params": {}}]}}}}


_names = itertools.count()


def save_pipeline(client, user, strategy: dict):
    from knowledge.services import knowledge_base_create

    knowledge_base = knowledge_base_create(owner=user, name=f"Notes {next(_names)}")
    return client.post(reverse("pipeline-list"), {"name": "p", "knowledge_base": knowledge_base.pk,
                                                  "strategy": strategy}, content_type="application/json")


def listed(client) -> dict[str, dict]:
    response = client.get(reverse("model-list"), {"kind": "cross-encoder"})
    assert response.status_code == 200, response.content
    return {model["name"]: model for model in response.json()}


def preset(client) -> dict:
    return next(row for row in client.get(reverse("component-presets")).json() if row["name"] == "hybrid-cross-encoder")


def test_a_model_an_ordinary_user_uploads_is_theirs_alone(owner, api, stranger, stranger_api, admin_api,
                                                          tiny_model_folders, tmp_path, model_store):
    created = upload_zip(api, tiny_model_folders["cross-encoder"], tmp_path / "mine.zip", "adas-reranker")
    assert created.status_code == 201, created.content
    assert jobs.wait_until_idle(120)
    assert model_store.get("adas-reranker").owner == str(owner.pk)

    mine = listed(api)["adas-reranker"]
    assert mine["private"] is True and mine["owner"] == "ada" and mine["removable"] is True
    assert listed(admin_api)["adas-reranker"]["owner"] == "ada"
    assert "adas-reranker" not in listed(stranger_api), "another user sees a private upload"

    # The preset offers it to its owner only.
    assert preset(api)["available"] is True and preset(api)["tree"]["params"]["model_name"] == "adas-reranker"
    assert preset(stranger_api)["available"] is False

    # Another user names it neither by its name nor by a path into the model store.
    path = "strategy.params.retriever.params.model_name"
    for reference in ("adas-reranker", str(model_store.get("adas-reranker").path)):
        refused = save_pipeline(stranger_api, stranger, reranking(reference))
        assert refused.status_code == 400, refused.content
        assert [(error["path"], error["code"]) for error in refused.json()["errors"]] == [(path, "private_model")]
        assert "another user's private model" in refused.json()["errors"][0]["message"]
    assert save_pipeline(api, owner, reranking("adas-reranker")).status_code == 201

    assert stranger_api.delete(reverse("model-remove", args=["adas-reranker"])).status_code == 404
    assert api.delete(reverse("model-remove", args=["adas-reranker"])).status_code == 204


def test_an_administrators_upload_is_shared_by_every_user(admin_api, stranger, stranger_api, tiny_model_folders,
                                                          tmp_path):
    assert upload_zip(admin_api, tiny_model_folders["cross-encoder"], tmp_path / "shared.zip",
                      "shared-reranker").status_code == 201
    assert jobs.wait_until_idle(120)
    shared = listed(stranger_api)["shared-reranker"]
    assert shared["private"] is False and shared["owner"] is None and shared["removable"] is False
    assert save_pipeline(stranger_api, stranger, reranking("shared-reranker")).status_code == 201


def embedding_with_remote_code(folder: str) -> dict:
    return {"component": "SentenceTransformerEmbedding",
            "params": {"model_name_or_path": folder, "trust_remote_code": True}}


def test_only_an_administrator_may_set_trust_remote_code(api, admin_api, tiny_model_folders, settings):
    folder = tiny_model_folders["embedding"]
    settings.TRELLIS_MODELS_DIRS = [Path(folder).parent]  # the folder itself is one an ordinary user may name
    body = {"name": "Remote code", "embedding_model": embedding_with_remote_code(folder)}

    refused = api.post(reverse("knowledge-base-list"), body, content_type="application/json")
    assert refused.status_code == 400, refused.content
    (error,) = refused.json()["errors"]
    assert (error["path"], error["code"]) == ("embedding_model.params.trust_remote_code", "admin_only")
    assert "only an administrator" in error["message"]
    spanish = api.post(reverse("knowledge-base-list"), body, content_type="application/json",
                       HTTP_ACCEPT_LANGUAGE="es").json()["errors"][0]["message"]
    assert spanish != error["message"], "the refusal is not translated"

    accepted = admin_api.post(reverse("knowledge-base-list"), body, content_type="application/json")
    assert accepted.status_code == 201, accepted.content
    assert api.post(reverse("knowledge-base-list"), {**body, "embedding_model": {
        "component": "SentenceTransformerEmbedding", "params": {"model_name_or_path": folder}}},
        content_type="application/json").status_code == 201
