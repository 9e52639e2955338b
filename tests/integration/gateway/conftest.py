"""A knowledge base, pipelines answered by the scripted LLM server, API tokens, and the served
application on a real port."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from accounts.services import api_token_create
from tests.support.live_asgi import serving

from ..chat.conftest import GUIDE, knowledge_base, naive_pipeline  # noqa: F401  (knowledge_base is a fixture)

__all__ = ["GUIDE", "naive_pipeline"]


@pytest.fixture
def token(owner) -> str:
    return api_token_create(owner=owner, name="laptop").secret


@pytest.fixture
def stranger_token(stranger) -> str:
    return api_token_create(owner=stranger, name="theirs").secret


@pytest.fixture
def server_url(transactional_db):
    cache.clear()  # the rate limit's counters
    with serving() as url:
        yield url
    cache.clear()
