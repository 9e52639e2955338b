"""The site's entry points: SPA shell, admin, API schema and its browsable UI."""

import json

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture
def built_frontend(tmp_path, settings):
    manifest = tmp_path / "manifest.json"
    manifest.write_text(json.dumps({
        "src/main.tsx": {"file": "assets/main-abc123.js", "isEntry": True, "css": ["assets/main-def456.css"]},
    }))
    settings.FRONTEND_MANIFEST = manifest
    return manifest


def test_root_serves_the_spa_shell_with_the_built_assets(client, built_frontend):
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<div id="root"></div>' in html
    assert 'src="/static/frontend/assets/main-abc123.js"' in html
    assert 'href="/static/frontend/assets/main-def456.css"' in html
    assert "csrftoken" in response.cookies


def test_client_side_routes_load_the_same_shell(client, built_frontend):
    assert client.get("/pipelines/3").status_code == 200
    assert client.get("/api/v1/nothing-here/").status_code == 404


def test_a_missing_frontend_build_says_how_to_fix_it(client, settings, tmp_path):
    settings.FRONTEND_MANIFEST = tmp_path / "absent.json"
    response = client.get("/")
    assert response.status_code == 503
    assert "make run" in response.content.decode()


def test_openapi_schema_documents_the_catalog(client):
    response = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    schema = json.loads(response.content)
    assert {"/api/v1/components/", "/api/v1/components/{name}/", "/api/v1/components/validate/"} <= set(schema["paths"])


def test_the_browsable_api_docs_load_without_a_cdn(client):
    response = client.get("/api/schema/swagger-ui/")
    assert response.status_code == 200
    html = response.content.decode()
    assert "swagger-ui" in html
    assert "cdn.jsdelivr.net" not in html and "unpkg.com" not in html


def test_admin_requires_login_and_opens_for_an_admin(client, admin_user):
    assert client.get("/admin/").status_code == 302
    client.force_login(admin_user)
    assert client.get("/admin/").status_code == 200
    assert client.get(reverse("admin:catalog_component_changelist")).status_code == 200
