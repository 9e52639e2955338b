"""Schemathesis over every operation of ``/api/schema/``, signed in with a session (and its CSRF
token) of a user who owns a knowledge base, a document, a pipeline, a conversation, a
credential and an API token, so that paths resolve to real objects. Valid and invalid examples
alike must never get a server error, an undocumented status, or a body that contradicts the
schema."""

from __future__ import annotations

import time

import pytest
import schemathesis
from django.contrib.auth import get_user_model
from django.contrib.sessions.backends.db import SessionStore
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.wsgi import get_wsgi_application
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

import jobs
from accounts.models import ApiToken
from accounts.services import api_token_create
from chat.models import Conversation
from chat.services import conversation_create
from credentials.models import Credential
from credentials.services import credential_create
from knowledge.models import Document, KnowledgeBase
from knowledge.services import documents_upload, knowledge_base_create
from pipelines.models import Pipeline
from pipelines.services import pipeline_create

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

EXAMPLES_PER_OPERATION = 20
CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance, response_schema_conformance]
USERNAME = "fuzzer"
TEXT = ("Pear trees are pruned in winter. Apple fruitlets are thinned in June so that each cluster "
        "keeps one apple.\n\nGrapevines are cut back to two buds per spur.")


class Owned:
    """The signed-in user's objects, made again whenever a fuzzed DELETE removed one."""

    def __init__(self, llm_url: str) -> None:
        self.llm_url = llm_url
        self.user = get_user_model().objects.filter(username=USERNAME).first() or \
            get_user_model().objects.create_user(username=USERNAME, password="fuzzing is fun 42")

    def path_ids(self) -> dict[str, int]:
        knowledge_base = KnowledgeBase.objects.filter(owner=self.user).order_by("pk").first()
        if knowledge_base is None:
            knowledge_base = knowledge_base_create(owner=self.user, name=f"Orchard {time.monotonic_ns()}", chunker={
                "component": "RecursiveCharacterChunker", "params": {"chunk_size": 120, "chunk_overlap": 0}})
        document = Document.objects.filter(knowledge_base=knowledge_base).order_by("pk").first()
        if document is None:
            documents_upload(knowledge_base=knowledge_base, files=[SimpleUploadedFile("orchard.txt", TEXT.encode())],
                             force=True)
            document = Document.objects.filter(knowledge_base=knowledge_base).order_by("pk").first()
        pipeline = Pipeline.objects.filter(owner=self.user).order_by("pk").first() or pipeline_create(
            owner=self.user, name=f"Keyword {time.monotonic_ns()}", knowledge_base=knowledge_base, strategy={
                "component": "NaiveRAG", "params": {
                    "retriever": {"component": "BM25Retriever", "params": {"top_k": 2}},
                    "response_synthesizer": {"component": "ResponseSynthesizer", "params": {"llm": {
                        "component": "OpenAICompatibleLLM", "params": {"base_url": self.llm_url, "model": "m"}}}}}})
        conversation = Conversation.objects.filter(owner=self.user).order_by("pk").first() or \
            conversation_create(owner=self.user, pipeline=pipeline)
        credential = Credential.objects.filter(owner=self.user).order_by("pk").first() or credential_create(
            owner=self.user, name=f"gateway-{time.monotonic_ns()}", kind="OpenAIAPIKey",
            values={"api_key": "sk-fuzz-0123456789", "base_url": "https://gateway.example/v1"})
        token = ApiToken.objects.filter(owner=self.user).order_by("pk").first() or \
            api_token_create(owner=self.user, name="fuzzed").token
        return {"knowledge_base_id": knowledge_base.pk, "document_id": document.pk, "pipeline_id": pipeline.pk,
                "conversation_id": conversation.pk, "credential_id": credential.pk, "api_token_id": token.pk}

    def credentials(self) -> tuple[dict[str, str], dict[str, str]]:
        """Cookies of a fresh session (a fuzzed sign-out ends the previous one) and the CSRF
        header that goes with them."""
        session = SessionStore()
        session["_auth_user_id"] = str(self.user.pk)
        session["_auth_user_backend"] = "django.contrib.auth.backends.ModelBackend"
        session["_auth_user_hash"] = self.user.get_session_auth_hash()
        session.create()
        token = "fuzzcsrftoken" + "x" * 19
        return {"sessionid": session.session_key, "csrftoken": token}, {"X-CSRFToken": token}


@pytest.fixture
def owned(scripted_openai):
    cache.clear()
    objects = Owned(scripted_openai.base_url)
    objects.path_ids()
    assert jobs.wait_until_idle(120)
    yield objects
    cache.clear()


def test_every_operation_answers_within_its_schema_and_never_with_a_server_error(owned):
    # Schemathesis's own pytest wrapper (``from_fixture``) reaches into pytest internals that
    # pytest 9 no longer has, so each operation gets a Hypothesis run here instead.
    schema = schemathesis.openapi.from_wsgi("/api/schema/", get_wsgi_application(),
                                            headers={"Accept": "application/json"})
    failures: dict[str, str] = {}
    examples = 0
    started = time.monotonic()
    for result in schema.get_all_operations():
        operation = result.ok()
        cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE),
                          operation.as_strategy(GenerationMode.NEGATIVE))

        @settings(max_examples=EXAMPLES_PER_OPERATION, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck), phases=[Phase.generate, Phase.shrink])
        @given(case=cases)
        def fuzz(case) -> None:
            nonlocal examples
            examples += 1
            ids = owned.path_ids()
            for name in list(case.path_parameters or {}):
                if name in ids:
                    case.path_parameters[name] = ids[name]
            cookies, headers = owned.credentials()
            case.call_and_validate(headers=headers, cookies=cookies, checks=CHECKS)

        try:
            fuzz()
        except (Exception, BaseExceptionGroup) as exc:  # every operation is fuzzed; failures are reported together
            # A group (Hypothesis's FlakyFailure among them) says little; what it holds says why.
            inner = "".join(f"\n  {type(sub).__name__}: {sub}" for sub in getattr(exc, "exceptions", ()))
            failures[operation.label] = f"{type(exc).__name__}: {exc}{inner}"[:3000]
        assert jobs.wait_until_idle(120), f"background jobs of {operation.label} did not finish"
    elapsed = time.monotonic() - started
    print(f"fuzzed {len(list(schema.get_all_operations()))} operations with {examples} examples in {elapsed:.0f} s")
    for label, detail in failures.items():
        print(f"\n{label}\n{detail}")
    assert not failures, f"{len(failures)} operation(s) failed (details above): " + ", ".join(failures)
