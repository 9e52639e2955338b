import pytest

from rag.components import load_components

pytestmark = [pytest.mark.e2e, pytest.mark.django_db(transaction=True)]

SAMPLE = sorted(load_components(), key=lambda component: component.NAME)[0]


def test_the_app_loads_the_catalog_and_follows_the_language_switcher(live_server, page):
    page.goto(live_server.url + "/")
    page.get_by_text(SAMPLE.DISPLAY_NAME.get("en"), exact=True).wait_for()

    page.get_by_role("combobox").select_option("es")
    page.get_by_text(SAMPLE.DISPLAY_NAME.get("es"), exact=True).wait_for()

    page.reload()
    page.get_by_text(SAMPLE.DISPLAY_NAME.get("es"), exact=True).wait_for()
    assert page.evaluate("localStorage.getItem('trellis.lang')") == "es"
