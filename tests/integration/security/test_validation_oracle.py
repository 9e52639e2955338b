"""Finding 7 of the third security round: the validate endpoint told anyone which server files
exist.

``POST /api/v1/components/validate/`` needed no sign-in, and it checked whether a model was there
before whether its owner may name it: ``LocalLLM.gguf_path: /etc/shadow`` validated while a
missing file "does not exist", and ``model_name_or_path`` tested folders the same way. It now
needs a session, and for a user who may not name server paths the answer is the same whether
the path exists or not. That includes a name shaped like a hub id (``backend/config``): it is a hub
id, whatever exists under the server's working directory (a folder is spelt as a path, ``./x``).
"""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from tests.integration.conftest import logged_in

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def validate(client: Client, tree: dict):
    return client.post(reverse("component-validate"), {"tree": tree}, content_type="application/json")


def local_llm(path: str) -> dict:
    return {"component": "LocalLLM", "params": {"gguf_path": path}}


def sentence_transformer(path: str) -> dict:
    return {"component": "SentenceTransformerEmbedding", "params": {"model_name_or_path": path}}


@pytest.fixture
def server_paths(tmp_path, settings):
    """An existing file and folder outside the model folders, and the same names missing."""
    settings.TRELLIS_MODELS_DIRS = [tmp_path / "models"]
    secret = tmp_path / "private" / "shadow"
    secret.parent.mkdir()
    secret.write_text("root:$6$...")
    return {"file": (str(secret), str(tmp_path / "private" / "absent")),
            "folder": (str(secret.parent), str(tmp_path / "no-such-folder"))}


def test_an_anonymous_visitor_cannot_validate(client, server_paths):
    existing, _ = server_paths["file"]
    response = validate(client, local_llm(existing))
    assert response.status_code in (401, 403)
    assert "valid" not in response.json()


@pytest.mark.parametrize(("kind", "tree"), [("file", local_llm), ("folder", sentence_transformer)])
def test_an_ordinary_user_gets_the_same_answer_for_an_existing_and_a_missing_path(api, server_paths, kind, tree):
    existing, missing = server_paths[kind]
    answers = []
    for path in (existing, missing):
        response = validate(api, tree(path))
        assert response.status_code == 200
        answers.append(response.json())
    assert answers[0] == answers[1]
    assert answers[0]["valid"] is False
    error, = answers[0]["errors"]
    assert error["code"] == "model_path" and "TRELLIS_MODELS_DIRS" in error["message"]


def test_an_administrator_is_told_what_is_there(admin_user, server_paths):
    """Administrators name any path (they run the server), so they learn whether it exists."""
    admin = logged_in(admin_user)
    existing, missing = server_paths["file"]
    said = [validate(admin, local_llm(path)).json() for path in (existing, missing)]
    assert said[0] != said[1]
    assert any("does not exist" in error["message"] for error in said[1]["errors"])


def cross_encoder(name: str) -> dict:
    return {"component": "SentenceTransformerCrossEncoderRetriever", "params": {"model_name": name}}


@pytest.fixture
def working_directory(tmp_path, monkeypatch, settings):
    """The server's working directory holds ``private/model`` (a folder with a model's
    config.json) and not ``private/absent``: names shaped like hub ids ``org/name``."""
    settings.TRELLIS_MODELS_DIRS = [tmp_path / "models"]
    cwd = tmp_path / "server"
    (cwd / "private" / "model").mkdir(parents=True)
    (cwd / "private" / "model" / "config.json").write_text("{}")
    monkeypatch.chdir(cwd)
    return "private/model", "private/absent"


@pytest.mark.parametrize("tree", [sentence_transformer, cross_encoder])
def test_an_ordinary_user_gets_the_same_answer_for_an_existing_and_a_missing_relative_path(api, working_directory,
                                                                                           tree):
    """A hub-shaped name is a hub id, whatever exists under the server's working directory: the
    answer may name the value, and is otherwise the same."""
    answers = []
    for name in working_directory:
        response = validate(api, tree(name))
        assert response.status_code == 200
        answers.append(response.content.decode().replace(name, "<name>"))
    assert answers[0] == answers[1]


def test_an_administrator_names_a_folder_under_the_working_directory_by_spelling_it_as_a_path(admin_user,
                                                                                              working_directory):
    admin = logged_in(admin_user)
    folder, _ = working_directory
    assert validate(admin, cross_encoder(f"./{folder}")).json()["valid"] is True
    as_a_name = validate(admin, cross_encoder(folder)).json()
    assert as_a_name["valid"] is False and as_a_name["errors"][0]["code"] == "unavailable"
