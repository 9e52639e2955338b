"""Browser tests: Debian's Chromium driven by Playwright against Trellis served as ``make run``
serves it (``asgi_server``)."""

import os
import re
import shutil
from pathlib import Path

import pytest

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

# How long an expectation waits for the page. Playwright's 5 s is too short on a 2-core machine
# where the server may be loading a model while the page asks its first questions.
EXPECT_TIMEOUT_MS = 20_000

# Playwright's sync API runs an event loop in this thread; Django must still allow the ORM here.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(scope="session", autouse=True)
def patient_expectations():
    from playwright.sync_api import expect

    expect.set_options(timeout=EXPECT_TIMEOUT_MS)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    assert os.path.exists(CHROMIUM), "Chromium is missing: `make test` installs Debian's chromium package"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        yield browser
        browser.close()


class BrowserErrors:
    """What went wrong in the page: uncaught exceptions and console errors. A test that provokes
    an error on purpose (a wrong password answers 400) says so with ``expect``."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.expected: list[re.Pattern[str]] = []

    def expect(self, pattern: str) -> None:
        self.expected.append(re.compile(pattern))

    def unexpected(self) -> list[str]:
        return [error for error in self.seen if not any(pattern.search(error) for pattern in self.expected)]


def watch_errors(page, errors: BrowserErrors) -> None:
    page.on("pageerror", lambda error: errors.seen.append(f"uncaught {error}"))

    def console(message) -> None:
        if message.type == "error":
            location = message.location or {}
            errors.seen.append(f"console: {message.text} ({location.get('url', '')})")

    page.on("console", console)


@pytest.fixture
def browser_errors() -> BrowserErrors:
    return BrowserErrors()


@pytest.fixture
def page(browser, browser_errors):
    """A fresh page; the test fails if the app threw or logged an error it did not expect."""
    context = browser.new_context(locale="en-US", viewport={"width": 1440, "height": 960})
    page = context.new_page()
    watch_errors(page, browser_errors)
    yield page
    context.close()
    unexpected = browser_errors.unexpected()
    assert not unexpected, "the page reported errors:\n" + "\n".join(unexpected)


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


def sign_in(page, url: str, username: str = "ada", password: str = PASSWORD) -> None:
    page.goto(url + "/")
    page.get_by_label("User name").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
