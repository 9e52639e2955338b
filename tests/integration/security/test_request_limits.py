"""Request limits: a body past its limit, or too many files, is refused in the API's error shape
naming the limit, from the Content-Length before the body is read; a file past the upload limit
is stored no further than the limit while the rest of its request goes on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from asgiref.testing import ApplicationCommunicator
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.test import Client
from django.urls import reverse

import jobs
from knowledge.models import Document

pytestmark = [pytest.mark.integration, pytest.mark.django_db(transaction=True)]

MEGABYTE = 1024 * 1024


@pytest.fixture(autouse=True)
def no_job_outlives_its_test():
    yield
    assert jobs.wait_until_idle(120)


@pytest.fixture
def knowledge_base(api):
    response = api.post(reverse("knowledge-base-list"), {"name": "Limits"}, content_type="application/json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


def only_error(response) -> dict:
    assert response["Content-Type"].startswith("application/json"), response.content[:300]
    [error] = response.json()["errors"]
    return error


def test_a_json_body_past_the_limit_is_a_413_naming_the_limit(api):
    body = json.dumps({"name": "x" * (3 * MEGABYTE)})
    response = api.post(reverse("knowledge-base-list"), body, content_type="application/json")
    assert response.status_code == 413
    error = only_error(response)
    assert error["code"] == "too_large" and "2.5 MB" in error["message"] and "3.0 MB" in error["message"], error
    spanish = api.post(reverse("knowledge-base-list"), body, content_type="application/json", HTTP_ACCEPT_LANGUAGE="es")
    assert spanish.status_code == 413 and "límite" in only_error(spanish)["message"]
    # The sign-in endpoint reads its body in a middleware (the throttle): the same answer.
    sign_in = Client().post(reverse("auth-session"), body, content_type="application/json")
    assert sign_in.status_code == 413 and only_error(sign_in)["code"] == "too_large"


def test_too_many_files_in_one_upload_is_a_400_naming_the_limit(api, knowledge_base, settings):
    files = [SimpleUploadedFile(f"note-{index}.txt", b"Pears are pruned in winter.") for index in range(101)]
    response = api.post(reverse("document-list", args=[knowledge_base]), {"files": files})
    assert response.status_code == 400
    error = only_error(response)
    assert (error["path"], error["code"]) == ("files", "too_many_files") and "100" in error["message"], error
    assert not Document.objects.exists()


def test_a_content_length_past_the_request_limit_is_refused_before_the_body_is_read(api, knowledge_base, settings):
    # The test client's payload cannot be read past its real length: reading it would fail.
    declared = settings.TRELLIS_MAX_REQUEST_BYTES + 1
    response = api.post(reverse("document-list", args=[knowledge_base]), b"--x\r\n",
                        content_type="multipart/form-data; boundary=x", CONTENT_LENGTH=str(declared))
    assert response.status_code == 413
    error = only_error(response)
    assert error["code"] == "too_large" and "60.0 MB" in error["message"], error


class RecordingTemporaryFileUploadHandler(TemporaryFileUploadHandler):
    """Django's handler that writes uploads to temporary files, recording how much it wrote."""

    written: dict[str, int] = {}

    def receive_data_chunk(self, raw_data, start):
        RecordingTemporaryFileUploadHandler.written[self.file_name] = \
            RecordingTemporaryFileUploadHandler.written.get(self.file_name, 0) + len(raw_data)
        return super().receive_data_chunk(raw_data, start)


def test_a_file_past_the_upload_limit_is_stored_no_further_than_the_limit(api, knowledge_base, settings):
    settings.TRELLIS_MAX_UPLOAD_BYTES = MEGABYTE
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 1024  # every file goes to a temporary file
    settings.FILE_UPLOAD_HANDLERS = [
        RecordingTemporaryFileUploadHandler.__module__ + ".RecordingTemporaryFileUploadHandler"
        if handler.endswith(".TemporaryFileUploadHandler") else handler
        for handler in settings.FILE_UPLOAD_HANDLERS]
    RecordingTemporaryFileUploadHandler.written = {}
    huge = SimpleUploadedFile("huge.txt", b"compost " * (3 * MEGABYTE // 8), content_type="text/plain")
    good = SimpleUploadedFile("good.txt", b"Pears are pruned in winter. " * 100, content_type="text/plain")
    response = api.post(reverse("document-list", args=[knowledge_base]), {"files": [huge, good]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert [document["name"] for document in body["documents"]] == ["good.txt"]
    [rejected] = body["rejected"]
    assert (rejected["name"], rejected["code"]) == ("huge.txt", "too_large")
    assert "3.0 MB" in rejected["reason"] and "1.0 MB" in rejected["reason"], rejected
    written = RecordingTemporaryFileUploadHandler.written
    assert written["good.txt"] == len(good)
    assert written["huge.txt"] <= MEGABYTE + 64 * 1024, f"{written['huge.txt']} bytes of huge.txt were stored"
    assert not any(Path(settings.FILE_UPLOAD_TEMP_DIR).glob("*.upload*")), "a temporary upload file was left"


def test_a_dataset_zip_past_the_upload_limit_is_a_413(api, settings):
    settings.TRELLIS_MAX_UPLOAD_BYTES = 100_000
    archive = SimpleUploadedFile("set.zip", b"PK" + bytes(200_000), content_type="application/zip")
    response = api.post(reverse("evaluation-dataset-upload"), {"name": "Big", "file": archive})
    assert response.status_code == 413
    error = only_error(response)
    assert (error["path"], error["code"]) == ("file", "too_large") and "97.7 KB" in error["message"], error


def http_scope(path: str, headers: list[tuple[bytes, bytes]]) -> dict:
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST", "scheme": "http",
            "path": path, "raw_path": path.encode(), "query_string": b"", "root_path": "",
            "headers": [(b"host", b"localhost"), *headers], "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000)}


async def response_of(communicator: ApplicationCommunicator) -> tuple[int, dict]:
    start = await communicator.receive_output(timeout=10)
    assert start["type"] == "http.response.start", start
    body = await communicator.receive_output(timeout=10)
    return start["status"], json.loads(body["body"])


@pytest.mark.asyncio
async def test_the_served_asgi_application_refuses_a_declared_size_without_reading_the_body():
    from config.asgi import application

    communicator = ApplicationCommunicator(application, http_scope("/api/v1/knowledge-bases/", [
        (b"content-type", b"application/json"), (b"content-length", str(100 * MEGABYTE).encode())]))
    await communicator.send_input({"type": "http.request", "body": b'{"name": "', "more_body": True})
    status, body = await response_of(communicator)  # answered without waiting for the other 100 MB
    assert status == 413 and body["errors"][0]["code"] == "too_large"
    assert "100.0 MB" in body["errors"][0]["message"] and "2.5 MB" in body["errors"][0]["message"]
    await communicator.wait(timeout=5)


@pytest.mark.asyncio
async def test_the_served_asgi_application_cuts_off_a_body_without_length_at_the_limit():
    from config.asgi import application

    communicator = ApplicationCommunicator(application, http_scope("/api/v1/knowledge-bases/", [
        (b"content-type", b"application/json"), (b"transfer-encoding", b"chunked")]))
    sent = 0
    while sent <= 3 * MEGABYTE:
        await communicator.send_input({"type": "http.request", "body": b" " * MEGABYTE, "more_body": True})
        sent += MEGABYTE
    status, body = await response_of(communicator)
    assert status == 413 and "2.5 MB" in body["errors"][0]["message"], body
    await communicator.wait(timeout=5)
