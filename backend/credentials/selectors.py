"""Reads of the credentials app. Every function takes the acting user: a user sees their own
credentials and the shared ones, never another user's private credential. Resolving one at run
time records its use, so it is a service (``services.credential_resolve``)."""

from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from .models import Credential


def visible_to(user: AbstractBaseUser | AnonymousUser | None) -> Q:
    """The credentials ``user``'s pipelines may use: their own, and the shared ones granted to
    them or one of their groups (every shared one for a superuser)."""
    if user is None or not user.is_authenticated:
        return Q(pk__in=[])
    if user.is_superuser:
        return Q(owner=user) | Q(shared=True)
    granted = Q(shared=True) & (Q(granted_users=user) | Q(granted_groups__in=user.groups.all()))
    return Q(owner=user) | Q(pk__in=Credential.objects.filter(granted).values("pk"))


def credential_destinations(*, user: AbstractBaseUser, name: str) -> list[str] | None:
    """The origins the credential ``name`` (as ``user`` resolves it) may be sent to; None when
    no such credential is available to the user. Reads no secret."""
    from rag.components import load_components

    credential = credential_named(user=user, name=name)
    if credential is None:
        return None
    registry = load_components()
    if credential.kind not in registry:
        return []
    return registry.get(credential.kind).destinations_of(credential.public_params, credential.destinations)


def credential_named(*, user: AbstractBaseUser | AnonymousUser | None, name: str) -> Credential | None:
    """The credential ``user`` means by ``name``: their own, else a shared one granted to them."""
    own_first = Case(When(owner_id=getattr(user, "pk", None), then=Value(0)), default=Value(1),
                     output_field=IntegerField())
    return (Credential.objects.filter(visible_to(user), name=name)
            .order_by(own_first, "-shared", "id").first())


def credential_list(*, user: AbstractBaseUser) -> QuerySet[Credential]:
    """The user's own credentials and every shared one, by name (the secret column deferred)."""
    return Credential.objects.filter(visible_to(user)).defer("secret").distinct()


def credential_get(*, user: AbstractBaseUser, credential_id: int) -> Credential:
    """Raises ``Credential.DoesNotExist`` for a missing id or another user's private credential."""
    return credential_list(user=user).get(pk=credential_id)
