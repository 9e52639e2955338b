"""Retry and Remove of a failed install: a retry runs the same source again (a hub download
resumes, an upload is read from the archive kept for it), a removal deletes the record with
what the install kept on disk, and neither reaches another user's installs or an installed model."""

from __future__ import annotations

from pathlib import Path

import pytest
from django.urls import reverse

from models.models import ModelInstall

from .conftest import REPO, wait_for_jobs, zip_of
from .test_models_api import install_from_hub, models_by_name, upload

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def retry(client, install_id: int, **headers):
    return client.post(reverse("model-install-retry", args=[install_id]), **headers)


def discard(client, install_id: int, **headers):
    return client.delete(reverse("model-install-detail", args=[install_id]), **headers)


def detail(client, install_id: int) -> dict:
    response = client.get(reverse("model-install-detail", args=[install_id]))
    assert response.status_code == 200, response.content
    return response.json()


def partial_downloads(model_store) -> list[Path]:
    return sorted((model_store.root / ".partial").glob("*"))


def failed_hub_install(client, hub, **fields) -> dict:
    """A hub install whose last file (vocab.txt) fails its checksum: the verified files stay
    under .partial for a retry to resume from."""
    hub.corrupt.add("vocab.txt")
    created = install_from_hub(client, name="tiny-ce", **fields)
    assert created.status_code == 201, created.content
    wait_for_jobs()
    install = detail(client, created.json()["id"])
    assert install["status"] == "failed" and install["error_code"] == "checksum", install
    return install


def test_a_retried_hub_install_resumes_and_installs(api, hub, model_store):
    install = failed_hub_install(api, hub)
    assert len(partial_downloads(model_store)) == 1
    hub.corrupt.clear()

    response = retry(api, install["id"])
    assert response.status_code == 202, response.content
    assert response.json()["status"] == "queued" and response.json()["error"] is None
    assert response.json()["id"] == install["id"] and response.json()["reference"] == REPO
    wait_for_jobs()

    assert detail(api, install["id"])["status"] == "ready"
    assert len(hub.downloads_of("model.safetensors")) == 1, "the weights verified by the first try were fetched again"
    assert len(hub.downloads_of("vocab.txt")) == 2
    assert models_by_name(api, kind="cross-encoder")["tiny-ce"]["source_detail"] == REPO
    assert ModelInstall.objects.count() == 1


def test_only_a_failed_install_is_retried_or_removed(api, hub):
    created = install_from_hub(api, name="tiny-ce").json()
    wait_for_jobs()
    again = retry(api, created["id"], HTTP_ACCEPT_LANGUAGE="es")
    assert again.status_code == 409
    (error,) = again.json()["errors"]
    assert error["code"] == "not_failed" and error["message"] == (
        "solo se puede reintentar una instalación fallida; su estado es Instalado"), error
    assert discard(api, created["id"]).status_code == 409
    assert detail(api, created["id"])["status"] == "ready"
    assert "tiny-ce" in models_by_name(api, kind="cross-encoder")


def test_a_retry_is_refused_when_the_name_was_taken_since(api, admin_api, hub):
    install = failed_hub_install(api, hub)
    hub.corrupt.clear()
    assert install_from_hub(admin_api, name="tiny-ce").status_code == 201
    wait_for_jobs()
    refused = retry(api, install["id"])
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["code"] == "name_taken"
    assert detail(api, install["id"])["status"] == "failed"


def test_removing_a_failed_hub_install_deletes_its_record_and_partial_download(api, hub, model_store):
    install = failed_hub_install(api, hub)
    assert partial_downloads(model_store)

    assert discard(api, install["id"]).status_code == 204
    assert not ModelInstall.objects.exists()
    assert partial_downloads(model_store) == []
    assert api.get(reverse("model-install-list")).json() == []
    assert retry(api, install["id"]).status_code == 404


def test_a_partial_download_another_failed_install_may_resume_from_is_kept(api, stranger_api, hub, model_store):
    mine = failed_hub_install(api, hub)
    theirs = failed_hub_install(stranger_api, hub)
    assert discard(api, mine["id"]).status_code == 204
    assert len(partial_downloads(model_store)) == 1, "the other user's retry would start from nothing"
    assert discard(stranger_api, theirs["id"]).status_code == 204
    assert partial_downloads(model_store) == []


def test_a_failed_upload_keeps_its_archive_for_a_retry_until_removed(api, tiny_model_folders, tmp_path, settings):
    created = upload(api, zip_of(tiny_model_folders["cross-encoder"], tmp_path / "tiny-ce.zip"), kind="embedding")
    assert created.status_code == 201
    wait_for_jobs()
    install = ModelInstall.objects.get()
    archive = settings.DATA_DIR / install.archive
    assert install.status == ModelInstall.Status.FAILED and install.error_code == "wrong_kind"
    assert archive.is_file()

    # The retry reads the kept archive: it fails for the same reason, not for a missing file.
    assert retry(api, install.pk).status_code == 202
    wait_for_jobs()
    assert detail(api, install.pk)["error_code"] == "wrong_kind" and archive.is_file()

    assert discard(api, install.pk).status_code == 204
    assert not archive.exists() and not ModelInstall.objects.exists()


def test_another_user_can_neither_retry_nor_remove_a_private_install(api, stranger_api, hub, model_store):
    install = failed_hub_install(api, hub)
    hub.corrupt.clear()
    assert retry(stranger_api, install["id"]).status_code == 404
    assert discard(stranger_api, install["id"]).status_code == 404
    assert detail(api, install["id"])["status"] == "failed"
    assert len(partial_downloads(model_store)) == 1
    assert not hub.downloads_of("vocab.txt")[1:], "the stranger's retry ran the install"


def test_an_ordinary_user_cannot_remove_an_administrators_install_nor_its_shared_model(owner, api, admin_api, hub):
    failed = failed_hub_install(admin_api, hub)
    assert retry(api, failed["id"]).status_code == 404
    assert discard(api, failed["id"]).status_code == 404
    assert ModelInstall.objects.get(pk=failed["id"]).status == ModelInstall.Status.FAILED

    # The administrator's retry installs the model every user shares...
    hub.corrupt.clear()
    assert retry(admin_api, failed["id"]).status_code == 202
    wait_for_jobs()
    assert models_by_name(api, kind="cross-encoder")["tiny-ce"]["private"] is False
    # ...and a user's own failed install by the same name, removed, takes nothing of it with it.
    mine = ModelInstall.objects.create(owner=owner, source=ModelInstall.Source.HUB, reference=REPO,
                                       kind="cross-encoder", name="tiny-ce", status=ModelInstall.Status.FAILED,
                                       error="it failed", error_code="checksum")
    assert discard(api, mine.pk).status_code == 204
    assert models_by_name(api, kind="cross-encoder")["tiny-ce"]["private"] is False
    assert api.delete(reverse("model-remove", args=["tiny-ce"])).status_code == 403
    assert ModelInstall.objects.get(pk=failed["id"]).status == ModelInstall.Status.READY
