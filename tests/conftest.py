import pytest


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="correct horse battery")


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="correct horse battery")



@pytest.hookimpl(tryfirst=True)  # before xdist's own hook reads the groups
def pytest_collection_modifyitems(items):
    """Browser tests last, and under ``make test``'s two workers (pytest-xdist, ``--dist
    loadgroup``) all on one of them while the other runs everything else: Playwright's sync API
    keeps an event loop running in the main thread for as long as the browser is open, which the
    async tests' loops cannot share, and the two halves take about as long."""
    items.sort(key=lambda item: item.get_closest_marker("e2e") is not None)
    for item in items:
        item.add_marker(pytest.mark.xdist_group("browser" if item.get_closest_marker("e2e") else "engine"))
