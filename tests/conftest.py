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
