"""Fixtures of the models app tests: a fresh model store, the loopback hub serving the tiny
cross-encoder, an administrator's client, and zips of the tiny models."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

import jobs
from tests.integration.conftest import logged_in

IDLE_TIMEOUT = 180
REPO = "acme/tiny-ce"


@pytest.fixture(autouse=True)
def background_jobs_finish():
    yield
    assert jobs.wait_until_idle(IDLE_TIMEOUT), f"background jobs still running after {IDLE_TIMEOUT} s"


@pytest.fixture(autouse=True)
def _fresh_store(model_store):
    """Every test starts with no installed model."""


@pytest.fixture
def hub(fake_hub, tiny_model_folders, monkeypatch):
    """The loopback hub with the tiny cross-encoder as acme/tiny-ce, and HF_ENDPOINT at it."""
    fake_hub.add_repo(REPO, Path(tiny_model_folders["cross-encoder"]), license="apache-2.0")
    monkeypatch.setenv("HF_ENDPOINT", fake_hub.url)
    return fake_hub


@pytest.fixture
def admin(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="not-used-here-0")


@pytest.fixture
def admin_api(admin):
    return logged_in(admin)


def wait_for_jobs() -> None:
    assert jobs.wait_until_idle(IDLE_TIMEOUT), f"the install did not finish within {IDLE_TIMEOUT} s"


def zip_of(folder: str, target: Path, extra: dict[str, bytes] | None = None, inside: str = "tiny-ce") -> Path:
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(Path(folder).rglob("*")):
            if path.is_file():
                archive.write(path, f"{inside}/{path.relative_to(folder).as_posix()}")
        for name, data in (extra or {}).items():
            archive.writestr(name, data)
    return target
