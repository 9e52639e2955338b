"""Reads of the accounts app; every function sees only the acting user's rows."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from .models import ApiToken


def api_token_list(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """The user's tokens, newest first, revoked ones included."""
    return ApiToken.objects.filter(owner=user)


def api_token_get(*, user: AbstractBaseUser, api_token_id: int) -> ApiToken:
    """Raises ``ApiToken.DoesNotExist`` for a missing id or another user's token."""
    return api_token_list(user=user).get(pk=api_token_id)
