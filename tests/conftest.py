import pytest


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user(username="ada", password="correct horse battery")


@pytest.fixture
def admin_user(django_user_model):
    return django_user_model.objects.create_superuser(username="root", password="correct horse battery")

