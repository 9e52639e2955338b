"""The migrations describe the models exactly: a model change without its migration fails here."""

import io

import pytest
from django.core.management import call_command


@pytest.mark.django_db
def test_every_model_change_has_its_migration():
    output = io.StringIO()
    try:
        call_command("makemigrations", "--check", "--dry-run", stdout=output, stderr=output)
    except SystemExit as exit:
        pytest.fail(f"models and migrations differ (exit {exit.code}):\n{output.getvalue()}")
