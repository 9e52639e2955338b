"""Sign-in throttling that holds: a locked user name stays locked however it is spelt, clients
behind a trusted proxy are told apart by their forwarded address, one address cannot try user
name after user name, and a lock-out attack on a named user from many addresses leaves that
user's own address alone. The API's session endpoint and the admin's login page alike."""

from __future__ import annotations

import pytest
from django.conf import settings
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

PASSWORD = "correct horse battery"
PADDED = ["ada ", " ada", "ada\t", "\nada\n", "\u00a0ada", "ａｄａ", "ada\u3000"]


@pytest.fixture(autouse=True)
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


def api_sign_in(username: str, password: str, **extra):
    return Client(**extra).post(reverse("auth-session"), {"username": username, "password": password},
                                content_type="application/json")


def admin_sign_in(username: str, password: str, **extra):
    return Client(**extra).post(reverse("admin:login"), {"username": username, "password": password,
                                                         "next": "/admin/"})


def test_every_spelling_that_signs_in_as_a_locked_name_gets_429_on_the_api(user):
    # The failures themselves come in under several spellings: they all count for "ada".
    for attempt in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert api_sign_in(PADDED[attempt % len(PADDED)], "guess").status_code == 400
    for spelling in ["ada", *PADDED]:
        locked = api_sign_in(spelling, PASSWORD)
        assert locked.status_code == 429, f"{spelling!r} got {locked.status_code}: {locked.content[:200]!r}"
        assert locked.json()["code"] == "too_many_sign_in_failures"
    # The same spellings sign in as ada once the name is not locked (the API authenticates them
    # exactly as the throttle counts them).
    cache.clear()
    for spelling in PADDED:
        signed_in = api_sign_in(spelling, PASSWORD)
        assert signed_in.status_code == 200 and signed_in.json()["username"] == "ada", spelling


def test_every_spelling_that_signs_in_as_a_locked_name_gets_429_on_the_admin_login(admin_user):
    for attempt in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert admin_sign_in(" root" if attempt % 2 else "root\t", "guess").status_code == 200
    for spelling in ["root", "root ", " root", "root\t", "ｒｏｏｔ"]:
        locked = admin_sign_in(spelling, PASSWORD)
        assert locked.status_code == 429, f"{spelling!r} got {locked.status_code}"
        assert "Too many failed sign-ins" in locked.content.decode()


@pytest.fixture
def behind_a_proxy(settings):
    settings.TRELLIS_TRUSTED_PROXIES = ["10.0.0.1", "10.1.0.0/16"]
    return settings


def test_behind_a_trusted_proxy_one_client_locks_out_only_itself(user, behind_a_proxy):
    attacker = {"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.5"}
    for _ in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert api_sign_in("ada", "guess", **attacker).status_code == 400
    assert api_sign_in("ada", PASSWORD, **attacker).status_code == 429
    # Ada, through the same proxy from her own address, signs in.
    ada = {"REMOTE_ADDR": "10.0.0.1", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}
    assert api_sign_in("ada", PASSWORD, **ada).status_code == 200
    # Through a chain of trusted proxies the client is the last untrusted address; what the
    # client itself put in front of it is ignored.
    chained = {"REMOTE_ADDR": "10.1.2.3", "HTTP_X_FORWARDED_FOR": "198.51.100.7, 203.0.113.5, 10.0.0.1"}
    assert api_sign_in("ada", PASSWORD, **chained).status_code == 429
    assert admin_sign_in("ada", PASSWORD, **chained).status_code == 429


def test_a_forwarded_address_from_an_untrusted_peer_is_ignored(user, behind_a_proxy):
    spoofing = {"REMOTE_ADDR": "192.0.2.9", "HTTP_X_FORWARDED_FOR": "198.51.100.7"}
    for _ in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert api_sign_in("ada", "guess", **spoofing).status_code == 400
    assert api_sign_in("ada", PASSWORD, REMOTE_ADDR="192.0.2.9").status_code == 429
    assert api_sign_in("ada", PASSWORD, REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="198.51.100.7").status_code == 200


def test_without_a_trusted_proxy_x_forwarded_for_changes_nothing(user):
    for index in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert api_sign_in("ada", "guess", HTTP_X_FORWARDED_FOR=f"198.51.100.{index}").status_code == 400
    assert api_sign_in("ada", PASSWORD, HTTP_X_FORWARDED_FOR="198.51.100.200").status_code == 429


def test_one_address_may_fail_for_only_so_many_user_names(user, settings):
    settings.TRELLIS_LOGIN_MAX_NAMES_PER_ADDRESS = 5
    for index in range(5):
        assert api_sign_in(f"guest{index}", "guess").status_code == 400
    sprayed = api_sign_in("ada", PASSWORD)
    assert sprayed.status_code == 429 and sprayed.json()["code"] == "too_many_user_names"
    assert "user names" in sprayed.json()["detail"]
    assert admin_sign_in("grace", "guess").status_code == 429
    # The names already tried from there keep their own count; other addresses are unaffected.
    assert api_sign_in("guest0", "guess").status_code == 400
    assert api_sign_in("ada", PASSWORD, REMOTE_ADDR="192.0.2.44").status_code == 200


def test_ipv6_clients_are_counted_by_their_64_bit_prefix(user):
    for index in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert api_sign_in("ada", "guess", REMOTE_ADDR=f"2001:db8:1:2::{index + 1:x}").status_code == 400
    assert api_sign_in("ada", PASSWORD, REMOTE_ADDR="2001:db8:1:2:ffff::1").status_code == 429
    assert api_sign_in("ada", PASSWORD, REMOTE_ADDR="2001:db8:1:3::1").status_code == 200


def test_a_lock_out_attack_from_many_addresses_spares_the_address_the_user_signs_in_from(user, settings):
    settings.TRELLIS_LOGIN_MAX_FAILURES_PER_NAME = 30
    home = {"REMOTE_ADDR": "198.51.100.7"}
    assert api_sign_in("ada", PASSWORD, **home).status_code == 200
    # Guessing from many addresses, each below its own limit, until the name as a whole is locked.
    for attempt in range(30):
        assert api_sign_in("ada", "guess", REMOTE_ADDR=f"203.0.113.{attempt // 5}").status_code == 400
    elsewhere = api_sign_in("ada", PASSWORD, REMOTE_ADDR="192.0.2.200")
    assert elsewhere.status_code == 429 and elsewhere.json()["code"] == "too_many_sign_in_failures_for_name"
    assert int(elsewhere["Retry-After"]) <= settings.TRELLIS_LOGIN_LOCKOUT_MINUTES * 60
    # Ada's own address, where she signed in before, is not locked out.
    assert api_sign_in("ada", PASSWORD, **home).status_code == 200
    assert admin_sign_in("ada", PASSWORD, **home).status_code != 429
