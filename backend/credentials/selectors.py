"""Reads of the credentials app. Every function takes the acting user: a user sees their own
credentials and the shared ones, never another user's private credential. Resolving one at run
time records its use, so it is a service (``services.credential_resolve``)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Q, QuerySet

from .models import Credential


def visible_to(user: AbstractBaseUser | AnonymousUser | None) -> Q:
    if user is None or not user.is_authenticated:
        return Q(shared=True)
    return Q(owner=user) | Q(shared=True)


def credential_list(*, user: AbstractBaseUser) -> QuerySet[Credential]:
    """The user's own credentials and every shared one, by name (the secret column deferred)."""
    return Credential.objects.filter(visible_to(user)).defer("secret")


def credential_get(*, user: AbstractBaseUser, credential_id: int) -> Credential:
    """Raises ``Credential.DoesNotExist`` for a missing id or another user's private credential."""
    return credential_list(user=user).get(pk=credential_id)
