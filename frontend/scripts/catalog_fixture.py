"""Regenerate the builder's catalog fixture from the real catalog API.

The fixture holds what the browser reads from ``/api/v1/components/`` in every language, every
component's JSON Schema (its defaults and slots) and the engine's example params, so the
frontend's tests render every representation the catalog ships, in every language, from the
shapes the server really serves. ``tests/integration/catalog/test_catalog_fixture.py`` fails when
the fixture no longer matches the API.

Run from the repository root (after ``make setup``)::

    PYTHONPATH=backend:. .venv/bin/python frontend/scripts/catalog_fixture.py
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parents[1] / "src" / "catalog" / "fixtures" / "catalog.json"
LANGUAGES = ("en", "es", "zh-Hant")


def catalog_fixture(client: Any) -> dict[str, Any]:
    """The fixture as the API behind ``client`` (a Django test client) serves it."""
    from rag.components import load_components

    catalogs = {language: client.get("/api/v1/components/", HTTP_ACCEPT_LANGUAGE=language).json()
                for language in LANGUAGES}
    schemas = {row["name"]: client.get(f"/api/v1/components/{row['name']}/", HTTP_ACCEPT_LANGUAGE="en").json()["schema"]
               for row in catalogs["en"]}
    examples = {component.NAME: dict(component.EXAMPLE_PARAMS) for component in load_components()
                if getattr(component, "EXAMPLE_PARAMS", None)}
    return {"catalogs": catalogs, "schemas": schemas, "examples": examples}


def dumps(fixture: dict[str, Any]) -> str:
    return json.dumps(fixture, ensure_ascii=False, indent=1, sort_keys=True) + "\n"


def main() -> int:
    with tempfile.TemporaryDirectory() as data:
        # A throwaway database: DEBUG on spares it the keys a real data directory keeps.
        os.environ.update(TRELLIS_DATA_DIR=data, DEBUG="1", DJANGO_SETTINGS_MODULE="config.settings")
        import django
        from django.core.management import call_command
        from django.test import Client
        from django.test.utils import setup_test_environment

        django.setup()
        setup_test_environment()
        call_command("migrate", verbosity=0)
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_text(dumps(catalog_fixture(Client())), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
