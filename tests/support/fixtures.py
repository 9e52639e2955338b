"""Shared pytest fixtures. Import a fixture into a test module (or list this module in
``pytest_plugins``) to use it."""

from collections.abc import Iterator

import pytest

from tests.support.scripted_openai import ScriptedOpenAIServer
from tests.support.server import collect_static, make_run_environment


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAIServer]:
    """A started ``ScriptedOpenAIServer``, stopped after the test."""
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture(scope="session")
def collected_static() -> None:
    """The test data directory prepared as ``make run`` prepares ``var/``: the secret key in its
    file (settings read it there, as every command after ``make run`` does) and the static files
    collected with the production storage."""
    import os

    from django.conf import settings

    key_file = settings.SECRET_KEY_FILE
    if not key_file.exists():
        descriptor = os.open(key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(settings.SECRET_KEY + "\n")
    collect_static(make_run_environment(settings.DATA_DIR))
