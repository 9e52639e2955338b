"""The site's entry points: SPA shell, admin, API schema and its browsable UI."""

import json
import re

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def vite_manifest() -> dict:
    from django.conf import settings

    return json.loads(settings.FRONTEND_MANIFEST.read_text(encoding="utf-8"))


IMPORT = re.compile(r"""(?:\bfrom\s*|\bimport\s*\(?\s*)["'`](\./[^"'`]+\.js)["'`]""")


def test_root_serves_the_spa_shell_with_the_files_vite_built_under_their_own_names(client):
    entry = vite_manifest()["src/main.tsx"]
    response = client.get("/")
    assert response.status_code == 200
    html = response.content.decode()
    assert '<div id="root"></div>' in html
    # The production storage (collected as make run collects) keeps Vite's names: hashing them
    # again would load a second copy of the entry module beside the one its chunks import.
    assert f'src="/static/frontend/{entry["file"]}"' in html
    for stylesheet in entry["css"]:
        assert f'href="/static/frontend/{stylesheet}"' in html
    assert "csrftoken" in response.cookies


def test_the_lazy_pages_import_the_very_entry_module_the_page_loads(client):
    """What made the shipped page blank: the page loaded main-<vite>.<django>.js while every lazy
    chunk imported ./main-<vite>.js, so a second copy of React ran."""
    entry = re.search(r'<script type="module" src="([^"]+)"', client.get("/").content.decode()).group(1)
    seen, queue, importers_of_entry = set(), [entry], set()
    while queue:
        url = queue.pop()
        if url in seen:
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code == 200, f"{url} is not served ({response.status_code})"
        body = b"".join(response.streaming_content).decode()
        folder = url.rsplit("/", 1)[0]
        for target in (f"{folder}/{name[2:]}" for name in IMPORT.findall(body)):
            if target.rsplit("/", 1)[1].startswith("main-"):
                assert target == entry, f"{url} imports {target}, but the page loaded {entry}"
                importers_of_entry.add(url)
            queue.append(target)
    assert len(importers_of_entry) >= 5, f"no lazy page imports the entry: {sorted(seen)}"


def test_client_side_routes_load_the_same_shell(client):
    assert client.get("/pipelines/3").status_code == 200
    assert client.get("/api/v1/nothing-here/").status_code == 404


def test_the_favicon_every_browser_asks_for_is_the_apps_icon(client):
    response = client.get("/favicon.ico")
    assert response.status_code == 301
    assert client.get(response["Location"]).status_code == 200


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
