"""Reads of the models app: the models this machine can run, and install requests."""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.db.models import QuerySet

from common.i18n import translate
from rag.models_manager import (
    INSTALLABLE_KINDS,
    InstalledModel,
    Viewer,
    enables,
    packaged_models,
    store,
    viewing_as,
)
from rag.models_manager.hub import endpoint_of

from .models import ModelInstall

RECENT_INSTALLS = 50


@functools.lru_cache(maxsize=1)
def _packaged() -> tuple[InstalledModel, ...]:
    # Packages do not change while the process runs; their sizes cost a walk of their files.
    return tuple(packaged_models())


def install_owner(user: AbstractBaseUser | None) -> str | None:
    """Whom a model ``user`` installs is private to: an ordinary user's own installs (uploads and
    hub downloads alike: anyone may publish a hub repository) are theirs alone; an
    administrator's, and the command line's (``None``), are every user's."""
    if user is None or user.is_staff:
        return None
    return str(user.pk)


def model_viewer(user: AbstractBaseUser | AnonymousUser | None) -> Viewer:
    """What ``user`` sees of the installed models: the shared ones and their own; an
    administrator, every one."""
    if user is None or not user.is_authenticated:
        return Viewer(owner=None)
    return Viewer(owner=str(user.pk), admin=bool(user.is_staff))


@contextlib.contextmanager
def models_visible_to(user: AbstractBaseUser | AnonymousUser | None) -> Iterator[None]:
    """Inside, the engine offers ``user`` only the installed models they may use (the presets'
    choice of an installed cross-encoder)."""
    viewer = model_viewer(user)
    with viewing_as(viewer.owner, admin=viewer.admin):
        yield


def model_hidden_from(user: AbstractBaseUser | AnonymousUser | None, model: InstalledModel) -> bool:
    """Whether ``model`` is another user's private model, which ``user`` may not name."""
    return not model_viewer(user).sees(model)


def _row(model: InstalledModel, *, user: AbstractBaseUser | None = None,
         owners: dict[str, str] | None = None) -> dict[str, Any]:
    source = model.source
    kind = source.get("type", "")
    detail = {"package": source.get("package"), "hub": source.get("repo_id"), "zip": source.get("file"),
              "folder": source.get("path")}.get(kind)
    mine = user is not None and model.owner is not None and model.owner == str(user.pk)
    return {
        "name": model.name,
        "display_name": source.get("title") or model.name,
        "upstream": source.get("upstream") or "",
        "kind": model.kind,
        "source": kind,
        "source_detail": detail or "",
        "revision": source.get("revision") or "",
        "size": model.size,
        "license": model.license,
        "installed_at": model.installed_at,
        "details": model.details,
        "enables": enables(model),
        "removable": kind != "package" and (user is None or bool(user.is_staff) or mine),
        "private": model.owner is not None,
        "owner": (owners or {}).get(model.owner or "", None) if model.owner is not None else None,
    }


def model_list(*, kind: str | None = None, user: AbstractBaseUser | None = None) -> list[dict[str, Any]]:
    """Every model this machine can run that ``user`` may use: packaged ones first, then the
    installed ones, by name; an ordinary user sees the shared models and their own private
    ones, an administrator (and the command line, ``user=None``) every one, with its owner."""
    installed = store().installed()
    if user is not None:
        viewer = model_viewer(user)
        installed = [model for model in installed if viewer.sees(model)]
    ids = {model.owner for model in installed if model.owner is not None and model.owner.isdigit()}
    owners = {str(pk): username for pk, username in
              get_user_model().objects.filter(pk__in=ids).values_list("pk", get_user_model().USERNAME_FIELD)}
    return [_row(model, user=user, owners=owners) for model in [*_packaged(), *installed]
            if kind is None or model.kind == kind]


def installer_settings(*, user: AbstractBaseUser) -> dict[str, Any]:
    """What the install form needs to know about this server and this user."""
    return {
        "offline": settings.TRELLIS_OFFLINE,
        "hub_endpoint": endpoint_of(None),
        "max_bytes": settings.TRELLIS_MAX_MODEL_BYTES,
        "kinds": list(INSTALLABLE_KINDS),
        "can_install_folders": bool(user.is_staff),
        "can_remove": bool(user.is_staff),
        "installs_private": install_owner(user) is not None,
    }


def model_install_list(*, user: AbstractBaseUser) -> QuerySet[ModelInstall]:
    """The user's install requests, newest first (the last ``RECENT_INSTALLS``)."""
    return ModelInstall.objects.filter(owner=user)[:RECENT_INSTALLS]


def model_install_get(*, user: AbstractBaseUser, install_id: int) -> ModelInstall:
    """Raises ``ModelInstall.DoesNotExist`` for a missing install or another user's."""
    return ModelInstall.objects.get(owner=user, pk=install_id)


def install_error(install: ModelInstall | dict[str, Any], language: str | None) -> str | None:
    """An install's error in ``language`` (from its template), or None."""
    if isinstance(install, ModelInstall):
        template, context, message = install.error_template, install.error_context, install.error
    else:
        template, context, message = install.get("error_template"), install.get("error_context"), install.get("error")
    if not message:
        return None
    return translate(template or "", context or {}, language, fallback=message)
