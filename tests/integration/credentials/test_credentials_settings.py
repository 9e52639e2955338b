"""Where the credentials key comes from: the environment, else credentials.key in the user's
configuration folder (``$XDG_CONFIG_HOME/trellis``, never the data directory), generated (mode
0600) only for development and tests; production without a key refuses to start, and so does a
key left in the data directory, saying how to move it."""

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
    data_dir = Path(env["TRELLIS_DATA_DIR"])
    base = {
        "PATH": os.environ["PATH"], "PYTHONPATH": f"{ROOT / 'backend'}{os.pathsep}{ROOT}", "SECRET_KEY": "x",
        "DJANGO_SETTINGS_MODULE": os.environ.get("DJANGO_SETTINGS_MODULE", "config.settings"),
        "XDG_CONFIG_HOME": str(data_dir.parent / f"{data_dir.name}-config"),
    }
    return subprocess.run([sys.executable, *command], env={**base, **env}, cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def key_file_of(data_dir: Path) -> Path:
    return data_dir.parent / f"{data_dir.name}-config" / "trellis" / "credentials.key"


def test_development_generates_a_private_key_file_once_outside_the_data_directory_and_reuses_it(tmp_path):
    first = run({"DEBUG": "1", "TRELLIS_DATA_DIR": str(tmp_path)}, "-c", PRINT_KEY)
    assert first.returncode == 0, first.stderr
    key_file = key_file_of(tmp_path)
    assert not (tmp_path / "credentials.key").exists()
    key = first.stdout.strip()
    assert key_file.read_text().strip() == key and key_file.stat().st_mode & 0o777 == 0o600
    Fernet(key)  # a valid key
    again = run({"DEBUG": "1", "TRELLIS_DATA_DIR": str(tmp_path)}, "-c", PRINT_KEY)
    assert again.stdout.strip() == key


def test_production_reads_the_key_file_or_the_environment_which_wins(tmp_path):
    key_file_of(tmp_path).parent.mkdir(parents=True)
    key_file_of(tmp_path).write_text("file-key\n")
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
    assert not (tmp_path / "credentials.key").exists() and not key_file_of(tmp_path).exists()


def test_a_key_left_in_the_data_directory_is_refused_with_how_to_move_it(tmp_path):
    (tmp_path / "credentials.key").write_text(Fernet.generate_key().decode())
    result = run({"DEBUG": "0", "TRELLIS_DATA_DIR": str(tmp_path)}, "manage.py", "check")
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert "a backup of the data would carry it too" in result.stderr
    assert f"mv {tmp_path / 'credentials.key'} {key_file_of(tmp_path)}" in result.stderr


def test_a_malformed_key_fails_the_system_check_by_name(tmp_path):
    result = run({"DEBUG": "0", "TRELLIS_DATA_DIR": str(tmp_path), "TRELLIS_CREDENTIALS_KEY": "too-short"},
                 "manage.py", "check")
    assert result.returncode != 0
    assert "credentials.E001" in result.stderr and "not a valid Fernet key" in result.stderr
