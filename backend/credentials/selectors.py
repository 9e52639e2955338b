"""Reads of the credentials app. Every function takes the acting user: a user sees their own
credentials and the shared ones, never another user's private credential."""

from __future__ import annotations

import logging

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When
from django.utils import timezone

from rag.components import load_components
from rag.core import ConfigObject, ConfigValidationError, CredentialError, CredentialResolver

from . import crypto
from .models import Credential

logger = logging.getLogger(__name__)


def _visible(user: AbstractBaseUser | AnonymousUser | None) -> Q:
    if user is None or not user.is_authenticated:
        return Q(shared=True)
    return Q(owner=user) | Q(shared=True)


def credential_list(*, user: AbstractBaseUser) -> QuerySet[Credential]:
    """The user's own credentials and every shared one, by name (the secret column deferred)."""
    return Credential.objects.filter(_visible(user)).defer("secret")


def credential_get(*, user: AbstractBaseUser, credential_id: int) -> Credential:
    """Raises ``Credential.DoesNotExist`` for a missing id or another user's private credential."""
    return credential_list(user=user).get(pk=credential_id)


def credential_resolve(*, user: AbstractBaseUser | AnonymousUser | None, name: str) -> ConfigObject:
    """The credential component called ``name``, built with its decrypted secret: the user's own
    credential of that name, else a shared one. Records the use in ``last_used_at``.

    Raises
    ------
    rag.core.CredentialError
        When no such credential is available to the user, or it cannot be decrypted or built.
    """
    own_first = Case(When(owner_id=getattr(user, "pk", None), then=Value(0)), default=Value(1),
                     output_field=IntegerField())
    credential = (Credential.objects.filter(_visible(user), name=name)
                  .order_by(own_first, "-shared", "id").first())
    if credential is None:
        raise CredentialError(f"no credential named {name!r} is available to you")
    registry = load_components()
    if credential.kind not in registry:
        raise CredentialError(f"the credential {name!r} is of kind {credential.kind!r}, which this version of "
                              f"Trellis does not know")
    secrets = crypto.decrypt_secrets(credential.secret, name=name)
    try:
        component = registry.get(credential.kind)(**{**credential.public_params, **secrets})
    except ConfigValidationError as exc:
        paths = ", ".join(error.path for error in exc.errors)
        raise CredentialError(f"the credential {name!r} no longer fits {credential.kind} ({paths}); "
                              f"edit it in the admin panel") from None
    Credential.objects.filter(pk=credential.pk).update(last_used_at=timezone.now())
    logger.info("credential %r (%s) resolved for user %s", name, credential.kind, getattr(user, "pk", None))
    return component


def credential_resolver_for(user: AbstractBaseUser | AnonymousUser | None) -> CredentialResolver:
    """A resolver for ``ConfigObject.set_credential_resolver`` / ``rag.core.build(credentials=...)``
    that resolves names as ``user`` (see ``credential_resolve``).

    It queries the database on each call; from async code, call it through ``sync_to_async``.
    """

    def resolve(name: str) -> ConfigObject:
        return credential_resolve(user=user, name=name)

    return resolve
