"""Fixtures of the credentials tests: three users (an owner, a stranger, staff), their logged-in
clients (forced logins, so no slow password hashing), and secrets recognisable anywhere they
might leak."""

from __future__ import annotations

import pytest
from django.test import Client

from tests.integration.conftest import logged_in

SECRET = "sk-live-Q7vX2pL9mZ4rT8wK3nB6yH1a1b2"
OTHER_SECRET = "sk-live-J5cD8fG2hK6mN9pR3tV7xZ1c3d4"


@pytest.fixture
def staff(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password=None)


@pytest.fixture
def staff_api(staff) -> Client:
    return logged_in(staff)
