import pytest


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="correct horse battery")


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="correct horse battery")



def pytest_collection_modifyitems(items):
    """Browser tests last: Playwright's sync API keeps an event loop running in the main thread
    for as long as the browser is open, which the async tests' loops cannot share."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)


def pytest_xdist_make_scheduler(config, log):
    """Under ``make test``'s two workers: the browser suite on one, everything else on the
    other. The halves take about as long, and the async tests never share a process with an open
    browser. (xdist's ``loadgroup`` cannot do it: with pytest 9 it no longer sees its groups.)"""
    from xdist.scheduler import LoadScopeScheduling

    class BrowserApart(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "browser" if nodeid.startswith("tests/e2e/") else "engine"

    return BrowserApart(config, log)
