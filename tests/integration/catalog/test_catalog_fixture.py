"""The frontend's catalog fixture (``frontend/src/catalog/fixtures/catalog.json``) is what the
catalog API serves, so the builder's representation tests read the real catalog."""

import importlib.util

import pytest

from tests.support.server import ROOT

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

SCRIPT = ROOT / "frontend" / "scripts" / "catalog_fixture.py"


def test_the_frontends_catalog_fixture_is_what_the_catalog_api_serves(client):
    spec = importlib.util.spec_from_file_location("catalog_fixture", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    served = script.dumps(script.catalog_fixture(client))
    assert script.OUT.read_text(encoding="utf-8") == served, (
        "the catalog changed: regenerate the fixture with "
        "`PYTHONPATH=backend:. .venv/bin/python frontend/scripts/catalog_fixture.py`")
