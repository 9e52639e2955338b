"""Stored names and descriptions holding HTML are shown as the text they are, in the browser app
and in the admin: the markup is visible, no element of it exists in the page, no script of it runs.

The server is daphne as ``make run`` starts it; every page is read by Chromium.
"""

import pytest
from playwright.sync_api import expect

from chat.services import conversation_create
from knowledge.models import Document
from knowledge.services import knowledge_base_create
from pipelines.services import pipeline_create

from .asgi_server import asgi_server  # noqa: F401
from .conftest import PASSWORD, sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

# Each tries an element (found by its id if it got into the page) and a script.
NAME = '<img src=x id=injected-kb onerror="window.pwned=1">Orchard'
DESCRIPTION = '<script>window.pwned=1</script><b id=injected-description>bold</b>'
DOCUMENT = '<svg id=injected-document onload="window.pwned=1">.txt'
ERROR = '<a id=injected-error href="javascript:window.pwned=1">click</a>'
PIPELINE = '<iframe id=injected-pipeline src="javascript:window.pwned=1"></iframe>Hybrid'
TITLE = '<details id=injected-title open ontoggle="window.pwned=1">Chat'
INJECTED = "#injected-kb, #injected-description, #injected-document, #injected-error, #injected-pipeline, #injected-title"


@pytest.fixture
def hostile_rows(django_user_model):
    root = django_user_model.objects.create_superuser(username="root", password=PASSWORD)
    knowledge_base = knowledge_base_create(owner=root, name=NAME, description=DESCRIPTION)
    document = Document.objects.create(owner=root, knowledge_base=knowledge_base, name=DOCUMENT, size=1,
                                       sha256="0" * 64, file="nowhere", status=Document.Status.FAILED, error=ERROR,
                                       error_code="damaged")
    pipeline = pipeline_create(owner=root, name=PIPELINE, knowledge_base=knowledge_base,
                               strategy={"component": "NaiveRAG"})
    conversation = conversation_create(owner=root, pipeline=pipeline, title=TITLE)
    return {"knowledge_base": knowledge_base, "document": document, "pipeline": pipeline,
            "conversation": conversation}


def shown_as_text(page, *texts: str) -> None:
    for text in texts:
        expect(page.get_by_text(text, exact=False).first).to_be_visible(timeout=30_000)
    assert page.locator(INJECTED).count() == 0, f"markup of stored text became elements on {page.url}"
    assert page.evaluate("window.pwned") is None, f"a stored script ran on {page.url}"


def test_stored_names_and_descriptions_are_text_in_the_app_and_the_admin(asgi_server, page, hostile_rows):  # noqa: F811
    url = asgi_server()
    sign_in(page, url, username="root")
    expect(page.get_by_role("navigation").get_by_role("link", name="Pipelines")).to_be_visible(timeout=30_000)
    knowledge_base, pipeline = hostile_rows["knowledge_base"], hostile_rows["pipeline"]

    page.goto(f"{url}/knowledge-bases")
    shown_as_text(page, NAME, DESCRIPTION)
    page.goto(f"{url}/knowledge-bases/{knowledge_base.pk}")
    shown_as_text(page, NAME, DOCUMENT)
    page.goto(f"{url}/pipelines")
    shown_as_text(page, PIPELINE)
    page.goto(f"{url}/chat/{hostile_rows['conversation'].pk}")
    shown_as_text(page, TITLE)

    admin_pages = {
        "/admin/knowledge/knowledgebase/": [NAME],
        f"/admin/knowledge/knowledgebase/{knowledge_base.pk}/change/": [NAME],
        "/admin/knowledge/document/": [DOCUMENT],
        f"/admin/knowledge/document/{hostile_rows['document'].pk}/change/": [DOCUMENT, ERROR],
        "/admin/pipelines/pipeline/": [PIPELINE],
        "/admin/chat/conversation/": [TITLE],
    }
    for path, texts in admin_pages.items():
        page.goto(url + path)
        assert page.title() != "Page not found", path
        shown_as_text(page, *texts)
    # The change form holds the description as the textarea's value, untouched.
    page.goto(f"{url}/admin/knowledge/knowledgebase/{knowledge_base.pk}/change/")
    assert page.locator("textarea[name=description]").input_value() == DESCRIPTION
    assert pipeline.name == PIPELINE
