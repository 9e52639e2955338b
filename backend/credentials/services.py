"""Writes of the credentials app: storing, replacing and deleting credentials, rotating the key.

Secrets go from the caller straight into ``crypto.encrypt_secrets``; they are never logged, and
every error raised here names fields and credentials, never values.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser, Group
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.utils import timezone

from common.outbound import outbound_policy_for
from common.reach import reach_errors
from rag.clients.outbound import origin
from rag.components import load_components
from rag.core import (
    ConfigObject,
    ConfigValidationError,
    CredentialError,
    CredentialResolver,
    FieldError,
    validate_or_raise,
)
from rag.core.i18n import gettext_noop
from rag.credentials import CredentialComponent

from . import crypto
from .models import Credential
from .selectors import CredentialUse, credential_named, credential_uses

logger = logging.getLogger(__name__)

KIND = "credential"


def _api_path(path: str) -> str:
    # validate_or_raise reports against {"component", "params"}; callers know them as kind and values.
    if path == "component":
        return "kind"
    if path == "params" or path.startswith(("params.", "params[")):
        return "values" + path.removeprefix("params")
    return path


def credential_values_validate(
    *, kind: str, values: Any, keep_secrets_of: Credential | None = None
) -> tuple[type[CredentialComponent], dict[str, Any]]:
    """Validate ``values`` for the credential component ``kind``; returns (component, normalised values).

    With ``keep_secrets_of``, a secret left out of ``values`` keeps that credential's stored one
    (a client cannot send back what it was never shown).

    Raises
    ------
    ConfigValidationError
        Every problem, at paths ``kind`` and ``values.<param>``.
    """
    registry = load_components()
    if keep_secrets_of is not None and isinstance(values, Mapping) and keep_secrets_of.kind in registry:
        omitted = [name for name in getattr(registry.get(keep_secrets_of.kind), "SECRET_PARAMS", ())
                   if name not in values]
        if omitted:
            stored = crypto.decrypt_secrets(keep_secrets_of.secret, name=keep_secrets_of.name)
            values = {**{name: stored[name] for name in omitted if name in stored}, **values}
    try:
        normalised = validate_or_raise({"component": kind, "params": values}, registry=registry, kind=KIND)
    except ConfigValidationError as exc:
        raise ConfigValidationError([dataclasses.replace(error, path=_api_path(error.path))
                                     for error in exc.errors]) from None
    component = registry.get(kind)
    if not issubclass(component, CredentialComponent):
        raise ConfigValidationError([FieldError("kind", "{kind} cannot be stored as a credential",
                                                "not_storable", {"kind": kind})])
    return component, normalised["params"]


def credential_reach_check(*, owner: AbstractBaseUser, kind: str, values: Mapping[str, Any]) -> None:
    """Refuse a credential of ``owner`` whose URLs (``values.base_url``) are addresses the
    pipelines of ``owner`` may not reach: private networks and loopback, unless an administrator
    allowed them (``TRELLIS_OUTBOUND_ALLOW``). An administrator's credentials may name any.

    Raises
    ------
    ConfigValidationError
        The same sentence for every refused address, whatever answers there.
    """
    errors = reach_errors(owner=owner, config={"component": kind, "params": dict(values)}, path="")
    if errors:
        raise ConfigValidationError([dataclasses.replace(error, path=_api_path(error.path)) for error in errors])


def _seal(credential: Credential, component: type[CredentialComponent], values: dict[str, Any]) -> None:
    instance = component(**values)
    credential.kind = component.NAME
    credential.public_params = instance.public_values()
    credential.secret = crypto.encrypt_secrets(instance.secret_values())
    credential.mask = instance.mask()


def credential_create(
    *,
    owner: AbstractBaseUser,
    name: str,
    kind: str,
    values: Mapping[str, Any],
    shared: bool = False,
) -> Credential:
    """Store a credential of ``kind`` (a credential component's name) for ``owner``.

    Raises
    ------
    ConfigValidationError
        When ``kind`` or ``values`` are invalid, with paths ``kind`` and ``values.api_key``...
    PermissionDenied
        When a user who is not staff asks for a shared credential.
    django.db.IntegrityError
        When the name is taken (by the owner, or by another shared credential).
    """
    if shared and not owner.is_staff:
        raise PermissionDenied("only staff can create shared credentials")
    component, normalised = credential_values_validate(kind=kind, values=values)
    credential_reach_check(owner=owner, kind=component.NAME, values=normalised)
    credential = Credential(owner=owner, name=name, shared=shared)
    _seal(credential, component, normalised)
    credential.full_clean(exclude=["owner", "secret", "public_params", "mask"], validate_constraints=False)
    with transaction.atomic():
        credential.save()
    logger.info("credential %r (%s) created by user %s%s", name, component.NAME, owner.pk,
                " as shared" if shared else "")
    return credential


def credential_update(
    *,
    credential: Credential,
    values: Mapping[str, Any] | None = None,
    name: str | None = None,
) -> Credential:
    """Replace a credential's values (and optionally its name); its kind stays.

    ``values`` replaces every parameter, except that a secret it leaves out keeps its stored
    value: a client never sees a secret, so it cannot send it back.

    Raises
    ------
    ConfigValidationError, django.db.IntegrityError
        As ``credential_create``.
    """
    if values is not None:
        component, normalised = credential_values_validate(kind=credential.kind, values=values,
                                                           keep_secrets_of=credential)
        credential_reach_check(owner=credential.owner, kind=component.NAME, values=normalised)
        _seal(credential, component, normalised)
        if any(secret in values for secret in component.SECRET_PARAMS):
            credential.rotated_at = timezone.now()
    if name is not None:
        credential.name = name
        credential.full_clean(exclude=["owner", "secret", "public_params", "mask"], validate_constraints=False)
    with transaction.atomic():
        credential.save()
    logger.info("credential %r (%s) of user %s updated", credential.name, credential.kind, credential.owner_id)
    return credential


def credential_rotate(*, credential: Credential, secrets: Mapping[str, Any]) -> Credential:
    """Replace the secret values of ``credential`` (``{"api_key": ...}``); its name, kind and
    public params stay, so every pipeline that names it uses the new value from its next run.

    Raises
    ------
    ConfigValidationError
        A param that is not one of the kind's secrets, or a secret left empty, at ``values.<param>``;
        a stored base URL the owner may no longer reach, at ``values.base_url``.
    """
    registry = load_components()
    component = registry.get(credential.kind) if credential.kind in registry else None
    if component is None or not issubclass(component, CredentialComponent):
        raise ConfigValidationError([FieldError("kind", "{kind} cannot be stored as a credential",
                                                "not_storable", {"kind": credential.kind})])
    not_secret = [name for name in secrets if name not in component.SECRET_PARAMS]
    if not_secret:
        raise ConfigValidationError([
            FieldError(f"values.{name}", gettext_noop("only the secret values ({secrets}) are replaced by a rotation"),
                       "not_secret", {"secrets": ", ".join(component.SECRET_PARAMS)})
            for name in not_secret])
    # Every secret is asked for: a rotation that kept one of the old ones would not be one.
    values = {**credential.public_params, **secrets}
    component, normalised = credential_values_validate(kind=credential.kind, values=values)
    credential_reach_check(owner=credential.owner, kind=component.NAME, values=normalised)
    _seal(credential, component, normalised)
    credential.rotated_at = timezone.now()
    with transaction.atomic():
        credential.save()
    logger.info("credential %r (%s) of user %s rotated", credential.name, credential.kind, credential.owner_id)
    return credential


class CredentialInUse(Exception):
    """Deleting a credential that pipelines or knowledge bases of its owner name."""

    def __init__(self, credential: Credential, uses: list[CredentialUse]) -> None:
        super().__init__(f"credential {credential.name!r} is in use")
        self.credential, self.uses = credential, uses


def credential_delete(*, credential: Credential, force: bool = False) -> None:
    """Delete ``credential``. Unless ``force``, refuse while its owner's pipelines or knowledge
    bases name it: they would fail at their next run (or fall back to a shared credential of
    the same name).

    Raises
    ------
    CredentialInUse
        With the uses, when some exist and ``force`` is false.
    """
    if not force:
        uses = credential_uses(user=credential.owner).get(credential.pk, [])
        if uses:
            raise CredentialInUse(credential, uses)
    logger.info("credential %r (%s) of user %s deleted", credential.name, credential.kind, credential.owner_id)
    credential.delete()


def credentials_rotate_key(*, new_key: str) -> int:
    """Re-encrypt every stored secret with ``new_key``; returns how many were re-encrypted.

    Every token is opened with the configured keys (``TRELLIS_CREDENTIALS_KEY`` and
    ``TRELLIS_CREDENTIALS_OLD_KEYS``) or ``new_key`` itself, so an interrupted rotation can be run
    again. All rows change in one transaction, or none does. Afterwards the process must run with
    ``TRELLIS_CREDENTIALS_KEY=new_key``.

    Raises
    ------
    ImproperlyConfigured
        When ``new_key`` is not a Fernet key.
    credentials.crypto.CredentialKeyError
        When some credential cannot be decrypted with any known key (nothing is changed).
    """
    new_key = crypto.validate_key(new_key, setting="--new-key")
    with transaction.atomic():
        credentials = list(Credential.objects.select_for_update().only("pk", "name", "secret"))
        for credential in credentials:
            credential.secret = crypto.reencrypt(credential.secret, new_key=new_key, name=credential.name)
        Credential.objects.bulk_update(credentials, ["secret"], batch_size=500)
    logger.info("re-encrypted %d credential(s) with the key %s", len(credentials), crypto.key_fingerprint(new_key))
    return len(credentials)


def credential_grant(*, credential: Credential, users: Iterable[AbstractBaseUser] = (),
                     groups: Iterable[Group] = ()) -> Credential:
    """Let ``users`` and the members of ``groups`` use the shared ``credential`` in their
    pipelines (an administrator's decision; the admin panel's grant lists do the same)."""
    if not credential.shared:
        raise PermissionDenied("only a shared credential is granted to other users")
    credential.granted_users.add(*users)
    credential.granted_groups.add(*groups)
    logger.info("credential %r granted to users %s and groups %s", credential.name,
                [user.pk for user in users], [group.pk for group in groups])
    return credential


def credential_destinations_set(*, credential: Credential, destinations: list[str]) -> Credential:
    """Let ``credential`` also be sent to ``destinations`` (server URLs); an administrator's
    decision, so no API exposes it. Raises ``ConfigValidationError`` for an address that is not
    an http(s) server."""
    bad = [url for url in destinations if origin(url) is None]
    if bad:
        raise ConfigValidationError([FieldError("destinations", gettext_noop("not an http:// or https:// server "
                                                "address: {urls}"), "destination", {"urls": ", ".join(bad)})])
    credential.destinations = list(dict.fromkeys(destinations))
    Credential.objects.filter(pk=credential.pk).update(destinations=credential.destinations)
    return credential


def credential_resolve(*, user: AbstractBaseUser | AnonymousUser | None, name: str) -> ConfigObject:
    """The credential component called ``name``, built with its decrypted secret: the user's own
    credential of that name, else a shared one. Records the use in ``last_used_at``. For a user
    who is not an administrator, it may be sent only to addresses their pipelines may reach.

    Raises
    ------
    rag.core.CredentialError
        When no such credential is available to the user, or it cannot be decrypted or built.
    """
    credential = credential_named(user=user, name=name)
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
    if isinstance(component, CredentialComponent):
        component.grant_destinations(credential.destinations)
        # Where the credential goes is checked at every use for an ordinary user: a stored base
        # URL, or where its name points now, may be an address their pipelines may not reach.
        component.restrict_outbound(outbound_policy_for(user))
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
