"""``/healthz`` and ``/readyz`` in the embedded mode, and the reasons ``/readyz`` gives when a
dependency is down (a Redis port nobody listens on)."""

from __future__ import annotations

import socket

import pytest

from web.health import DependencyError, check_broker, redacted

pytestmark = pytest.mark.integration


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_healthz_answers_ok_without_touching_the_database(client):
    # No django_db mark: pytest-django fails any database access here.
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"].startswith("max-age=0")


@pytest.mark.django_db
def test_readyz_in_the_embedded_mode_reports_the_database_channel_layer_and_local_chroma(client, settings):
    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 200, body
    assert body["status"] == "ready"
    assert list(body["checks"]) == ["database", "channel_layer", "vector_store"], "no broker without REDIS_URL"
    assert {name: check["status"] for name, check in body["checks"].items()} == {
        "database": "ok", "channel_layer": "ok", "vector_store": "ok"}
    assert body["checks"]["database"]["detail"] == "sqlite"
    assert body["checks"]["channel_layer"]["detail"] == "in-memory (this process only)"
    assert body["checks"]["vector_store"]["detail"] == "local chroma (in the data folder)"
    assert str(settings.DATA_DIR) not in response.content.decode(), "the probe answers anyone: no paths"


@pytest.mark.django_db
def test_when_redis_is_down_readyz_fails_naming_the_broker_and_channel_layer_while_healthz_stays_up(
    client, settings
):
    dead = f"redis://127.0.0.1:{unused_port()}/0"
    settings.REDIS_URL = dead
    settings.CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer",
                                           "CONFIG": {"hosts": [dead]}}}

    response = client.get("/readyz")
    body = response.json()
    assert response.status_code == 503, body
    assert body["status"] == "unavailable"
    checks = body["checks"]
    assert checks["database"]["status"] == "ok"
    assert checks["vector_store"]["status"] == "ok"
    assert checks["broker"]["status"] == "failing"
    assert checks["broker"]["error"].startswith(f"cannot reach Redis at {dead}: ConnectionError:"), checks["broker"]
    assert "refused" in checks["broker"]["error"].lower()
    assert checks["channel_layer"]["status"] == "failing"
    assert checks["channel_layer"]["error"].startswith("the RedisChannelLayer did not carry a message: ")
    assert "Traceback" not in response.content.decode()

    assert client.get("/healthz").status_code == 200


def test_a_redis_port_nobody_listens_on_gives_a_readable_reason_quickly():
    port = unused_port()
    with pytest.raises(DependencyError) as caught:
        check_broker(f"redis://127.0.0.1:{port}/0", timeout=2)
    message = str(caught.value)
    assert message.startswith(f"cannot reach Redis at redis://127.0.0.1:{port}/0: ConnectionError: ")
    assert "Connection refused" in message


def test_a_password_in_a_dependency_url_is_never_shown():
    assert redacted("redis://:s3cret@cache.internal:6379/0") == "redis://:***@cache.internal:6379/0"
    assert redacted("redis://user:s3cret@cache.internal/0") == "redis://user:***@cache.internal/0"
    assert redacted("redis://cache.internal:6379/0") == "redis://cache.internal:6379/0"
    with pytest.raises(DependencyError) as caught:
        check_broker(f"redis://:s3cret@127.0.0.1:{unused_port()}/0", timeout=2)
    assert "s3cret" not in str(caught.value)
