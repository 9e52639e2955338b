import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

BACKEND = Path(__file__).resolve().parents[3] / "backend"

BLOCK_DJANGO_THEN_IMPORT_THE_ENGINE = textwrap.dedent(
    """
    import importlib.abc, pkgutil, sys

    class BlockDjango(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name == "django" or name.startswith("django.") or name.startswith("rest_framework"):
                raise ImportError(f"the engine imported {name}")
            return None

    sys.meta_path.insert(0, BlockDjango())
    import rag
    from rag.components import load_components

    registry = load_components()
    for module in pkgutil.walk_packages(rag.__path__, "rag."):
        __import__(module.name)
    assert not any(name.split(".")[0] == "django" for name in sys.modules)
    print(len(registry))
    """
)


def test_the_engine_and_every_component_module_import_with_django_blocked():
    result = subprocess.run(
        [sys.executable, "-c", BLOCK_DJANGO_THEN_IMPORT_THE_ENGINE],
        cwd=BACKEND,
        env={"PYTHONPATH": str(BACKEND), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert int(result.stdout.strip().splitlines()[-1]) >= 1
