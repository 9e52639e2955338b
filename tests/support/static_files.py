import pytest


@pytest.fixture(autouse=True)
def plain_static_files(settings):
    """Serve static files without a collectstatic manifest (make run builds one; tests need not)."""
    settings.STORAGES = {
        **settings.STORAGES,
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }
