"""Reads of the credentials app. Every function takes the acting user: a user sees their own
credentials and the shared ones, never another user's private credential. Resolving one at run
time records its use, so it is a service (``services.credential_resolve``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

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


@dataclass(frozen=True)
class CredentialUse:
    """A pipeline or knowledge base (its embedding model) that names a credential."""

    type: Literal["pipeline", "knowledge_base"]
    id: int
    name: str


def _names_in(tree: Mapping[str, Any], registry: Any) -> set[str]:
    from rag.core import TrellisError, credential_references

    try:
        return {name for _, name, _ in credential_references(tree, registry=registry)}
    except (TrellisError, KeyError, TypeError, AttributeError):
        # A tree stored by an older version (a component since removed) names nothing we can
        # follow; its pipeline reports that itself when it runs.
        return set()


def credential_uses(*, user: AbstractBaseUser) -> dict[int, list[CredentialUse]]:
    """``{credential id: uses}``: the user's pipelines and knowledge bases whose trees name a
    credential, filed under the credential the name resolves to for them (their own before a
    shared one, as ``credential_named`` resolves it). Only the user's own objects are listed,
    whoever owns the credential. Three queries, however many objects."""
    from knowledge.models import KnowledgeBase
    from pipelines.models import Pipeline
    from rag.components import load_components

    resolved: dict[str, int] = {}
    visible = credential_list(user=user).only("pk", "name", "owner_id", "shared")
    for credential in sorted(visible, key=lambda c: (c.owner_id != user.pk, not c.shared, c.pk)):
        resolved.setdefault(credential.name, credential.pk)
    registry = load_components()
    uses: dict[int, list[CredentialUse]] = {pk: [] for pk in resolved.values()}
    trees: list[tuple[Literal["pipeline", "knowledge_base"], int, str, Any]] = [
        *(("pipeline", pk, name, tree) for pk, name, tree
          in Pipeline.objects.filter(owner=user).order_by("name", "pk").values_list("pk", "name", "strategy")),
        *(("knowledge_base", pk, name, tree) for pk, name, tree
          in KnowledgeBase.objects.filter(owner=user).order_by("name", "pk")
          .values_list("pk", "name", "embedding_model")),
    ]
    for kind, pk, name, tree in trees:
        if not isinstance(tree, Mapping):
            continue
        for credential_name in sorted(_names_in(tree, registry)):
            if credential_name in resolved:
                uses[resolved[credential_name]].append(CredentialUse(kind, pk, name))
    return uses
