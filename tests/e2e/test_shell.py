import pytest
from playwright.sync_api import expect

from rag.components import load_components

from .asgi_server import asgi_server  # noqa: F401
from .conftest import sign_in

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

CHUNKER = load_components().get("RecursiveCharacterChunker")


def test_signing_in_shows_the_server_reason_then_the_app(asgi_server, page, ada, browser_errors,  # noqa: F811
                                                          screenshot):
    url = asgi_server()
    browser_errors.expect(r"status of 400")  # the wrong password, on purpose
    page.goto(url + "/pipelines")
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()
    screenshot("sign-in")

    sign_in(page, url, password="wrong")
    expect(page.get_by_role("alert")).to_have_text("The user name or password is wrong.")

    page.get_by_label("Password").fill("correct horse battery")
    page.get_by_role("button", name="Sign in").click()
    expect(page.get_by_role("heading", name="Knowledge bases", level=1)).to_be_visible()
    expect(page.get_by_text("No knowledge bases yet")).to_be_visible()
    screenshot("knowledge-bases-empty")

    page.get_by_role("link", name="Chat").click()
    expect(page.get_by_text("Chat answers through a pipeline")).to_be_visible()
    assert page.url.endswith("/chat")

    page.get_by_role("button", name="Sign out").click()
    expect(page.get_by_role("heading", name="Sign in")).to_be_visible()


def test_the_interface_follows_the_language_switcher_and_remembers_it(asgi_server, page, ada,  # noqa: F811
                                                                      screenshot):
    sign_in(page, asgi_server())
    nav = page.get_by_role("navigation")
    expect(nav.get_by_role("link", name="Pipelines")).to_be_visible()

    page.get_by_role("combobox", name="Language").select_option("es")
    # "Pipelines" in Spanish too, as the Spanish guide calls them.
    expect(nav.get_by_role("link", name="Pipelines")).to_be_visible()
    expect(nav.get_by_role("link", name="Evaluación")).to_be_visible()
    expect(page.get_by_role("heading", name="Bases de conocimiento", level=1)).to_be_visible()
    screenshot("knowledge-bases-es")

    page.get_by_role("combobox", name="Idioma").select_option("zh-Hant")
    expect(nav.get_by_role("link", name="流程")).to_be_visible()
    page.get_by_role("button", name="新增知識庫").click()
    dialog = page.get_by_role("dialog", name="新增知識庫")
    dialog.get_by_role("button", name="分塊與嵌入").click()
    # The catalog's own texts come translated too.
    expect(dialog.get_by_label("分塊器").get_by_role("option", name=CHUNKER.DISPLAY_NAME.get("zh-Hant"))).to_be_attached()
    screenshot("knowledge-base-create-zh-Hant")
    dialog.get_by_role("button", name="取消").click()

    page.reload()
    expect(nav.get_by_role("link", name="流程")).to_be_visible()
    assert page.evaluate("localStorage.getItem('trellis.lang')") == "zh-Hant"
