"""Browser tests: Debian's Chromium driven by Playwright against a live server."""

import os
import shutil
from pathlib import Path

import pytest

from tests.support.static_files import plain_static_files  # noqa: F401

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "test-results" / "screenshots"
# Set to refresh the README's screenshots (docs/screenshots/) from the browser tests.
DOCS_SCREENSHOTS = os.environ.get("TRELLIS_DOCS_SCREENSHOTS") == "1"
PASSWORD = "correct horse battery"
JOBS_TIMEOUT = 120

# Playwright's sync API runs an event loop in this thread; Django must still allow the ORM here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "Chromium is missing: `make test` installs Debian's chromium package"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(locale="en-US", viewport={"width": 1440, "height": 960})
    page = context.new_page()
    yield page
    context.close()


@pytest.fixture(autouse=True)
def background_jobs_finish():
    """No ingestion job may outlive its test: the next test's database would be written by it."""
    import jobs

    yield
    assert jobs.wait_until_idle(JOBS_TIMEOUT), f"background jobs still running after {JOBS_TIMEOUT} s"


@pytest.fixture
def screenshot(page):
    """Save the page as test-results/screenshots/<name>.png (and, on request, docs/screenshots/)."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)

    def take(name: str, *, docs: bool = False) -> None:
        path = SCREENSHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        if docs and DOCS_SCREENSHOTS:
            target = ROOT / "docs" / "screenshots" / f"{name}.png"
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)

    return take


@pytest.fixture
def ada(django_user_model):
    return django_user_model.objects.create_user(username="ada", password=PASSWORD)


def sign_in(page, live_server, username: str = "ada", password: str = PASSWORD) -> None:
    page.goto(live_server.url + "/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
