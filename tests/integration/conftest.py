"""Users and logged-in clients shared by the integration tests (forced logins: no password
hashing, no login throttling in the way)."""

from __future__ import annotations

import pytest
from django.test import Client


@pytest.fixture(autouse=True, scope="session")
def _production_static_files(collected_static):
    """Pages render with the storage ``make run`` serves (its manifest, Vite's names)."""


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    """A fast hasher, set before any user is made: what these tests check is who may sign in,
    not PBKDF2, whose million rounds cost about a second a sign-in on a busy 2-core machine
    (failed sign-ins hash too). The browser tests keep the shipped hasher."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user(username="ada")


@pytest.fixture
def stranger(django_user_model):
    return django_user_model.objects.create_user(username="mallory")


@pytest.fixture
def api(owner) -> Client:
    return logged_in(owner)


@pytest.fixture
def stranger_api(stranger) -> Client:
    return logged_in(stranger)
