"""API use is bounded per user (issue 38): a user holds a limited number of active API tokens,
and the session API (the browser app's) allows so many requests a minute per user."""

from __future__ import annotations

import pytest
from django.core.cache import cache
from django.urls import reverse

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()  # the throttle counts in the cache, across tests of one process
    yield
    cache.clear()


def test_a_user_may_hold_only_so_many_active_tokens(api, owner, settings):
    settings.TRELLIS_MAX_API_TOKENS_PER_USER = 3
    made = [api.post(reverse("api-token-list"), {"name": f"t{index}"}, content_type="application/json")
            for index in range(3)]
    assert [response.status_code for response in made] == [201] * 3
    refused = api.post(reverse("api-token-list"), {"name": "one more"}, content_type="application/json")
    assert refused.status_code == 400
    [error] = refused.json()["errors"]
    assert error["code"] == "too_many_tokens" and "3 active API tokens" in error["message"], error
    spanish = api.post(reverse("api-token-list"), {"name": "otro"}, content_type="application/json",
                       HTTP_ACCEPT_LANGUAGE="es")
    assert spanish.status_code == 400 and "revoque" in spanish.json()["errors"][0]["message"]
    api.post(reverse("api-token-revoke", args=[made[0].json()["id"]]))
    assert api.post(reverse("api-token-list"), {"name": "again"}, content_type="application/json").status_code == 201


def test_the_session_api_is_throttled_per_user(api, stranger_api, settings):
    settings.TRELLIS_SESSION_API_RATE_LIMIT = 5
    statuses = [api.get(reverse("conversation-list")).status_code for _ in range(6)]
    assert statuses == [200] * 5 + [429]
    refused = api.get(reverse("api-token-list"), HTTP_ACCEPT_LANGUAGE="es")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert "segundos" in refused.json()["detail"], refused.json()
    assert stranger_api.get(reverse("conversation-list")).status_code == 200
