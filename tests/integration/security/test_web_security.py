"""Web security: headers and the Content-Security-Policy, CSRF on session writes, sign-in
throttling on the API and the admin, password validation, and the production settings that
``manage.py check --deploy`` inspects."""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.password_validation import validate_password
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.test import Client
from django.urls import reverse

pytestmark = [pytest.mark.integration]

ROOT = Path(settings.BASE_DIR)


def production_environment(tmp_path: Path, **extra: str) -> dict[str, str]:
    # Only what a production server would have: nothing of the test process's own environment
    # (pytest sets DJANGO_ALLOW_ASYNC_UNSAFE for some tests, which the deploy check rightly flags).
    environment = {name: os.environ[name] for name in ("PATH", "HOME", "LANG") if name in os.environ}
    return {**environment, "DEBUG": "0", "SECRET_KEY": secrets.token_urlsafe(50), "HF_HUB_OFFLINE": "1",
            "TRELLIS_CREDENTIALS_KEY": "YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=",
            "TRELLIS_DATA_DIR": str(tmp_path), "ALLOWED_HOSTS": "trellis.example.org",
            "PYTHONPATH": str(ROOT / "backend"), "DJANGO_SETTINGS_MODULE": "config.settings", **extra}


def check_deploy(tmp_path: Path, **extra: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "manage.py", "check", "--deploy"], cwd=ROOT, capture_output=True,
                          text=True, env=production_environment(tmp_path, **extra), timeout=120)


def settings_under(tmp_path: Path, **extra: str) -> dict:
    names = ["SESSION_COOKIE_SECURE", "CSRF_COOKIE_SECURE", "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS",
             "SESSION_COOKIE_HTTPONLY", "X_FRAME_OPTIONS", "SECURE_CONTENT_TYPE_NOSNIFF"]
    code = ("import django, json; django.setup(); from django.conf import settings; "
            f"print(json.dumps({{name: getattr(settings, name) for name in {names!r}}}))")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                          env=production_environment(tmp_path, **extra), timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_check_deploy_is_clean_with_production_settings_over_https(tmp_path):
    done = check_deploy(tmp_path, TRELLIS_HTTPS="1")
    assert done.returncode == 0, done.stdout + done.stderr
    # The one silenced warning is HSTS preload: the operator's decision for their domain.
    assert "System check identified no issues (1 silenced)." in done.stdout + done.stderr, done.stdout + done.stderr


@pytest.mark.slow
def test_without_https_the_deploy_check_names_what_https_would_switch_on(tmp_path):
    done = check_deploy(tmp_path)
    output = done.stdout + done.stderr
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in output, f"{warning} missing from:\n{output}"
    plain, https = settings_under(tmp_path / "plain"), settings_under(tmp_path / "https", TRELLIS_HTTPS="1")
    assert plain["SESSION_COOKIE_SECURE"] is False and plain["SECURE_SSL_REDIRECT"] is False
    assert https == {"SESSION_COOKIE_SECURE": True, "CSRF_COOKIE_SECURE": True, "SECURE_SSL_REDIRECT": True,
                     "SECURE_HSTS_SECONDS": 31536000, "SESSION_COOKIE_HTTPONLY": True, "X_FRAME_OPTIONS": "DENY",
                     "SECURE_CONTENT_TYPE_NOSNIFF": True}


def policy(response) -> dict[str, str]:
    return {directive.split()[0]: directive.partition(" ")[2]
            for directive in response["Content-Security-Policy"].split("; ")}


@pytest.mark.django_db
def test_pages_carry_a_content_security_policy_and_the_safety_headers(client):
    spa, admin, api = client.get("/"), client.get(reverse("admin:login")), client.get(reverse("auth-session"))
    for response in (spa, admin, api):
        assert response["X-Content-Type-Options"] == "nosniff"
        assert response["Referrer-Policy"] == "same-origin"
        assert response["X-Frame-Options"] == "DENY"
        rules = policy(response)
        assert rules["default-src"] == "'self'" and rules["object-src"] == "'none'"
        assert rules["frame-ancestors"] == "'none'" and rules["base-uri"] == "'self'"
        assert rules["connect-src"] == "'self' ws://testserver wss://testserver"
        assert "'unsafe-inline'" not in rules["script-src"] and "'unsafe-inline'" not in rules["style-src"]
    # The browser app's forms compile JSON Schemas with Ajv (eval); nothing else may.
    assert policy(spa)["script-src"] == "'self' 'unsafe-eval'"
    assert policy(admin)["script-src"] == "'self'"


@pytest.mark.django_db
def test_session_authenticated_writes_need_the_csrf_token(user):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    token = browser.get(reverse("auth-session")).cookies["csrftoken"].value
    refused = browser.post(reverse("knowledge-base-list"), {"name": "Notes"}, content_type="application/json")
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    accepted = browser.post(reverse("knowledge-base-list"), {"name": "Notes"}, content_type="application/json",
                            HTTP_X_CSRFTOKEN=token)
    assert accepted.status_code == 201, accepted.content


@pytest.fixture
def fresh_counters():
    cache.clear()
    yield
    cache.clear()


def sign_in(browser: Client, username: str, password: str, **extra):
    return browser.post(reverse("auth-session"), {"username": username, "password": password},
                        content_type="application/json", **extra)


@pytest.mark.django_db
def test_ten_failed_sign_ins_lock_that_user_name_and_address_out_with_a_readable_429(user, fresh_counters):
    browser = Client()
    for _ in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        assert sign_in(browser, "ada", "guess").status_code == 400
    locked = sign_in(browser, "ada", "correct horse battery")
    assert locked.status_code == 429
    assert "Too many failed sign-ins" in locked.json()["detail"] and "15 minutes" in locked.json()["detail"]
    assert 60 * 14 < int(locked["Retry-After"]) <= 60 * 15
    assert "_auth_user_id" not in browser.session, "a locked-out sign-in must not sign in"
    # Other user names, and the same name from another address, are not affected.
    assert sign_in(browser, "grace", "guess").status_code == 400
    elsewhere = sign_in(Client(REMOTE_ADDR="10.9.8.7"), "ada", "correct horse battery")
    assert elsewhere.status_code == 200 and elsewhere.json()["username"] == "ada"
    spanish = sign_in(browser, "ada", "guess", HTTP_ACCEPT_LANGUAGE="es")
    assert spanish.status_code == 429


@pytest.mark.django_db
def test_a_successful_sign_in_forgets_earlier_failures(user, fresh_counters):
    browser = Client()
    for _ in range(settings.TRELLIS_LOGIN_MAX_FAILURES - 1):
        sign_in(browser, "ada", "guess")
    assert sign_in(browser, "ada", "correct horse battery").status_code == 200
    for _ in range(settings.TRELLIS_LOGIN_MAX_FAILURES - 1):
        assert sign_in(Client(), "ada", "guess").status_code == 400
    assert sign_in(Client(), "ada", "correct horse battery").status_code == 200


@pytest.mark.django_db
def test_the_admin_login_is_throttled_too(admin_user, fresh_counters):
    browser = Client()
    url = reverse("admin:login")
    for _ in range(settings.TRELLIS_LOGIN_MAX_FAILURES):
        page = browser.post(url, {"username": "root", "password": "guess", "next": "/admin/"})
        assert page.status_code == 200  # the form again, with its error
    locked = browser.post(url, {"username": "root", "password": "correct horse battery", "next": "/admin/"})
    assert locked.status_code == 429 and "Too many failed sign-ins" in locked.content.decode()
    assert not browser.get("/admin/").wsgi_request.user.is_authenticated


def test_passwords_go_through_djangos_validators():
    names = {validator["NAME"].rsplit(".", 1)[-1] for validator in settings.AUTH_PASSWORD_VALIDATORS}
    assert names == {"UserAttributeSimilarityValidator", "MinimumLengthValidator", "CommonPasswordValidator",
                     "NumericPasswordValidator"}
    for weak in ("password", "12345678901", "short"):
        with pytest.raises(ValidationError):
            validate_password(weak)
    validate_password("correct horse battery staple")
