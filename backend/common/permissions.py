"""One permission layer for every API and websocket: objects named in a path belong to the user.

Each app registers, for the URL keyword it uses (``knowledge_base_id``, ``pipeline_id``…),
the queryset of objects a user may reach. ``OwnsPathObjects`` (a default DRF permission)
checks every ``*_id`` keyword of every request against it: another user's object is a 404,
exactly like a missing one, so ids do not leak. A keyword without a rule is refused (fail
closed), so a new endpoint cannot forget the check.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from django.db.models import QuerySet
from rest_framework.exceptions import NotFound, PermissionDenied
from rest_framework.permissions import BasePermission

logger = logging.getLogger(__name__)

Scope = Callable[[Any, Mapping[str, Any]], QuerySet]
_scopes: dict[str, Scope] = {}


def owned(keyword: str, scope: Scope) -> None:
    """Register ``scope(user, path_kwargs)``: the objects ``user`` may reach through ``keyword``."""
    if keyword in _scopes and _scopes[keyword] is not scope:
        raise RuntimeError(f"the path keyword {keyword!r} has two ownership rules")
    _scopes[keyword] = scope


def owns(user: Any, keyword: str, value: Any, path_kwargs: Mapping[str, Any] | None = None) -> bool:
    """Whether ``user`` may reach the object ``keyword=value`` (websocket consumers ask too)."""
    if user is None or not user.is_authenticated:
        return False
    scope = _scopes.get(keyword)
    if scope is None:
        logger.error("no ownership rule for the path keyword %r: refused", keyword)
        return False
    try:
        return scope(user, dict(path_kwargs or {keyword: value})).filter(pk=value).exists()
    except (TypeError, ValueError):
        return False


def path_keywords() -> set[str]:
    return set(_scopes)


class OwnsPathObjects(BasePermission):
    """Every object a request's path names must be reachable by the user (404 otherwise)."""

    def has_permission(self, request: Any, view: Any) -> bool:
        keywords = {name: value for name, value in (view.kwargs or {}).items() if name.endswith("_id")}
        if not keywords:
            return True
        if not request.user or not request.user.is_authenticated:
            return False
        for name, value in keywords.items():
            if name not in _scopes:
                logger.error("no ownership rule for the path keyword %r of %s", name, type(view).__name__)
                raise PermissionDenied(f"no ownership rule for {name}")
            if not owns(request.user, name, value, view.kwargs):
                raise NotFound()
        return True
