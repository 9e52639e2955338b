"""The models admin: adding an install registers a server folder through the services, and an
action removes installed models."""

from __future__ import annotations

import pytest
from django.urls import reverse

from models.models import ModelInstall

from .conftest import wait_for_jobs

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]


def test_an_administrator_registers_a_folder_and_removes_the_model(admin_api, tiny_model_folders, model_store):
    added = admin_api.post(reverse("admin:models_modelinstall_add"), {
        "source": "folder", "reference": tiny_model_folders["cross-encoder"], "kind": "cross-encoder",
        "name": "admin-ce", "revision": ""})
    assert added.status_code == 302, added.content.decode()[-2000:]
    wait_for_jobs()
    install = ModelInstall.objects.get()
    assert install.status == ModelInstall.Status.READY and install.name == "admin-ce"
    assert model_store.get("admin-ce") is not None

    listing = admin_api.get(reverse("admin:models_modelinstall_changelist"))
    assert listing.status_code == 200 and b"admin-ce" in listing.content
    removed = admin_api.post(reverse("admin:models_modelinstall_changelist"), {
        "action": "remove_installed_models", "_selected_action": [install.pk]}, follow=True)
    assert b"Removed 1 model." in removed.content
    assert model_store.get("admin-ce") is None
    assert ModelInstall.objects.get().status == ModelInstall.Status.REMOVED


def test_the_admin_form_shows_the_services_refusal(admin_api, model_store):
    refused = admin_api.post(reverse("admin:models_modelinstall_add"), {
        "source": "folder", "reference": "/no/such/folder", "kind": "cross-encoder", "name": ""})
    assert refused.status_code == 200
    assert b"/no/such/folder is not a directory on the server" in refused.content
    assert not ModelInstall.objects.exists()
