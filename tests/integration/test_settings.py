"""Settings come from the environment; a production start without a secret key refuses."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PRINT_SETTINGS = (
    "import json, django; from django.conf import settings; django.setup();"
    "print(json.dumps({'db': settings.DATABASES['default']['ENGINE'], 'name': str(settings.DATABASES['default']['NAME']),"
    "'layer': settings.CHANNEL_LAYERS['default']['BACKEND'], 'chroma_url': settings.CHROMA_URL,"
    "'chroma_path': str(settings.CHROMA_PATH), 'debug': settings.DEBUG}))"
)


def run_with(env: dict[str, str], code: str = PRINT_SETTINGS) -> subprocess.CompletedProcess:
    base = {"PATH": os.environ["PATH"], "PYTHONPATH": str(ROOT / "backend"), "DJANGO_SETTINGS_MODULE": "config.settings",
            "TRELLIS_CREDENTIALS_KEY": "A" * 43 + "="}
    return subprocess.run([sys.executable, "-c", code], env={**base, **env}, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_production_start_without_a_secret_key_refuses_with_a_clear_message(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        env={"PATH": os.environ["PATH"], "TRELLIS_DATA_DIR": str(tmp_path), "DEBUG": "0",
             "TRELLIS_CREDENTIALS_KEY": "A" * 43 + "="},
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "SECRET_KEY is not set" in result.stderr
    assert "Traceback" not in result.stderr


def test_embedded_defaults_use_sqlite_in_memory_layer_and_local_chroma_under_the_data_dir(tmp_path):
    result = run_with({"SECRET_KEY": "x", "TRELLIS_DATA_DIR": str(tmp_path)})
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["db"] == "django.db.backends.sqlite3"
    assert values["name"] == str(tmp_path / "trellis.sqlite3")
    assert values["layer"] == "channels.layers.InMemoryChannelLayer"
    assert values["chroma_url"] is None and values["chroma_path"] == str(tmp_path / "chroma")
    assert values["debug"] is False


def test_services_switch_on_by_their_variables(tmp_path):
    result = run_with({
        "SECRET_KEY": "x", "TRELLIS_DATA_DIR": str(tmp_path), "DEBUG": "yes",
        "DATABASE_URL": "postgres://trellis:pw@db.internal:5432/trellis",
        "REDIS_URL": "redis://cache.internal:6379/0", "CHROMA_URL": "http://chroma.internal:8000",
    })
    assert result.returncode == 0, result.stderr
    values = json.loads(result.stdout)
    assert values["db"] == "django.db.backends.postgresql"
    assert values["layer"] == "channels_redis.core.RedisChannelLayer"
    assert values["chroma_url"] == "http://chroma.internal:8000"
    assert values["debug"] is True


def test_a_malformed_boolean_is_refused_by_name(tmp_path):
    result = run_with({"SECRET_KEY": "x", "TRELLIS_DATA_DIR": str(tmp_path), "DEBUG": "maybe"})
    assert result.returncode != 0
    assert "DEBUG='maybe' is not a boolean" in result.stderr


def test_production_start_without_a_credentials_key_refuses_with_a_clear_message(tmp_path):
    result = subprocess.run(
        [sys.executable, "manage.py", "check"],
        env={"PATH": os.environ["PATH"], "TRELLIS_DATA_DIR": str(tmp_path), "DEBUG": "0", "SECRET_KEY": "x",
             "XDG_CONFIG_HOME": str(tmp_path / "config")},
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "TRELLIS_CREDENTIALS_KEY is not set" in result.stderr
