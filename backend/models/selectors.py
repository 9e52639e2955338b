"""Reads of the models app: the models this machine can run, and install requests."""

from __future__ import annotations

import functools
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from common.i18n import translate
from rag.models_manager import INSTALLABLE_KINDS, InstalledModel, enables, packaged_models, store
from rag.models_manager.hub import endpoint_of

from .models import ModelInstall

RECENT_INSTALLS = 50


@functools.lru_cache(maxsize=1)
def _packaged() -> tuple[InstalledModel, ...]:
    # Packages do not change while the process runs; their sizes cost a walk of their files.
    return tuple(packaged_models())


def _row(model: InstalledModel) -> dict[str, Any]:
    source = model.source
    kind = source.get("type", "")
    detail = {"package": source.get("package"), "hub": source.get("repo_id"), "zip": source.get("file"),
              "folder": source.get("path")}.get(kind)
    return {
        "name": model.name,
        "kind": model.kind,
        "source": kind,
        "source_detail": detail or "",
        "revision": source.get("revision") or "",
        "size": model.size,
        "license": model.license,
        "installed_at": model.installed_at,
        "details": model.details,
        "enables": enables(model),
        "removable": kind != "package",
    }


def model_list(*, kind: str | None = None) -> list[dict[str, Any]]:
    """Every model this machine can run: packaged ones first, then the installed ones, by name."""
    models = [*_packaged(), *store().installed()]
    return [_row(model) for model in models if kind is None or model.kind == kind]


def installer_settings(*, user: AbstractBaseUser) -> dict[str, Any]:
    """What the install form needs to know about this server and this user."""
    return {
        "offline": settings.TRELLIS_OFFLINE,
        "hub_endpoint": endpoint_of(None),
        "max_bytes": settings.TRELLIS_MAX_MODEL_BYTES,
        "kinds": list(INSTALLABLE_KINDS),
        "can_install_folders": bool(user.is_staff),
        "can_remove": bool(user.is_staff),
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
