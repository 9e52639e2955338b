"""Fixtures of the credentials tests: three users (an owner, a stranger, staff), their logged-in
clients (forced logins, so no slow password hashing), and secrets recognisable anywhere they
might leak."""

from __future__ import annotations

import pytest
from django.test import Client

SECRET = "sk-live-Q7vX2pL9mZ4rT8wK3nB6yH1a1b2"
OTHER_SECRET = "sk-live-J5cD8fG2hK6mN9pR3tV7xZ1c3d4"


@pytest.fixture
def owner(django_user_model):
    return django_user_model.objects.create_user(username="ada")


@pytest.fixture
def stranger(django_user_model):
    return django_user_model.objects.create_user(username="mallory")


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password=None)


def logged_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def api(owner) -> Client:
    return logged_in(owner)


@pytest.fixture
def stranger_api(stranger) -> Client:
    return logged_in(stranger)


@pytest.fixture
def staff_api(staff) -> Client:
    return logged_in(staff)
