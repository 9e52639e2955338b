"""Shared pytest fixtures. Import a fixture into a test module (or list this module in
``pytest_plugins``) to use it."""

from collections.abc import Iterator

import pytest

from tests.support.scripted_openai import ScriptedOpenAIServer


@pytest.fixture
def scripted_openai() -> Iterator[ScriptedOpenAIServer]:
    """A started ``ScriptedOpenAIServer``, stopped after the test."""
    with ScriptedOpenAIServer() as server:
        yield server
