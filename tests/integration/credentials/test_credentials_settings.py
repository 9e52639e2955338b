"""Where the credentials key comes from: the environment, else the data directory's
credentials.key, generated (mode 0600) only for development and tests; production without a
key refuses to start."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography.fernet import Fernet

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[3]
PRINT_KEY = "import django; from django.conf import settings; django.setup(); print(settings.TRELLIS_CREDENTIALS_KEY)"


def run(env: dict[str, str], *command: str) -> subprocess.CompletedProcess:
    base = {
        "PATH": os.environ["PATH"], "PYTHONPATH": f"{ROOT / 'backend'}{os.pathsep}{ROOT}", "SECRET_KEY": "x",
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
    }
    return subprocess.run([sys.executable, *command], env={**base, **env}, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_development_generates_a_private_key_file_once_and_reuses_it(tmp_path):
    first = run({"DEBUG": "1", "TRELLIS_DATA_DIR": str(tmp_path)}, "-c", PRINT_KEY)
    assert first.returncode == 0, first.stderr
    key_file = tmp_path / "credentials.key"
    key = first.stdout.strip()
    assert key_file.read_text().strip() == key and key_file.stat().st_mode & 0o777 == 0o600
    Fernet(key)  # a valid key
    again = run({"DEBUG": "1", "TRELLIS_DATA_DIR": str(tmp_path)}, "-c", PRINT_KEY)
    assert again.stdout.strip() == key


def test_production_reads_the_key_file_or_the_environment_which_wins(tmp_path):
    (tmp_path / "credentials.key").write_text("file-key\n")
    from_file = run({"DEBUG": "0", "TRELLIS_DATA_DIR": str(tmp_path)}, "-c", PRINT_KEY)
    assert from_file.stdout.strip() == "file-key", from_file.stderr
    from_env = run({"DEBUG": "0", "TRELLIS_DATA_DIR": str(tmp_path), "TRELLIS_CREDENTIALS_KEY": "env-key"},
                   "-c", PRINT_KEY)
    assert from_env.stdout.strip() == "env-key", from_env.stderr


def test_production_without_a_key_refuses_with_a_clear_message_and_writes_nothing(tmp_path):
    result = run({"DEBUG": "0", "TRELLIS_DATA_DIR": str(tmp_path)}, "manage.py", "check")
    assert result.returncode != 0
    assert "TRELLIS_CREDENTIALS_KEY is not set" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "credentials.key").exists()


def test_a_malformed_key_fails_the_system_check_by_name(tmp_path):
    result = run({"DEBUG": "0", "TRELLIS_DATA_DIR": str(tmp_path), "TRELLIS_CREDENTIALS_KEY": "too-short"},
                 "manage.py", "check")
    assert result.returncode != 0
    assert "credentials.E001" in result.stderr and "not a valid Fernet key" in result.stderr
