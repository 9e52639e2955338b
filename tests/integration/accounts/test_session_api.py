import pytest
from django.test import Client
from django.urls import reverse

pytestmark = [pytest.mark.integration, pytest.mark.django_db]


def test_sign_in_needs_the_csrf_token_and_the_right_password(user):
    browser = Client(enforce_csrf_checks=True)
    anonymous = browser.get(reverse("auth-session"))
    assert anonymous.json() == {"authenticated": False, "id": None, "username": None, "is_staff": False}
    token = anonymous.cookies["csrftoken"].value

    refused = browser.post(reverse("auth-session"), {"username": "ada", "password": "correct horse battery"},
                           content_type="application/json")
    assert refused.status_code == 403

    wrong = browser.post(reverse("auth-session"), {"username": "ada", "password": "nope"},
                         content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert wrong.status_code == 400 and "wrong" in wrong.json()["detail"]

    signed_in = browser.post(reverse("auth-session"), {"username": "ada", "password": "correct horse battery"},
                             content_type="application/json", HTTP_X_CSRFTOKEN=token)
    assert signed_in.status_code == 200 and signed_in.json()["username"] == "ada"
    assert browser.get(reverse("auth-session")).json()["authenticated"] is True


def test_sign_out_ends_the_session(user):
    browser = Client()
    browser.force_login(user)
    assert browser.delete(reverse("auth-session")).status_code == 204
    assert browser.get(reverse("auth-session")).json()["authenticated"] is False
    assert browser.get(reverse("knowledge-base-list")).status_code == 403
