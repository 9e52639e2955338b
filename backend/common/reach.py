"""What the components of a user who is not an administrator may reach on the server.

A pipeline, a knowledge base's embedding model or an evaluation's judge names servers and model
files. Saved by an ordinary user, a ``base_url`` is a way into the server's own network (loopback
ports, private ranges, cloud metadata) and a model path a way to make llama.cpp or
sentence-transformers open any file. So for them:

- outbound URLs (parameters marked ``x-outbound``) must be public addresses, or ones an
  administrator allowed with ``TRELLIS_OUTBOUND_ALLOW``;
- model files and folders (``x-local-path``, and a path given where a model name is expected,
  ``x-model-name``) must lie inside ``TRELLIS_MODELS_DIRS``;
- an installed model private to another user may not be named, by its name or by a path into
  the model store;
- a parameter marked ``x-admin-only`` (``trust_remote_code``) may not be turned on.

The refusals say the same whether a host or a file exists or not. Administrators (staff users)
may name anything: they run the server.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser

from rag.clients.outbound import OutboundPolicy
from rag.components import load_components
from rag.core import FieldError, iter_nodes
from rag.core.i18n import gettext_noop
from rag.core.validation import join_path

OUTSIDE_MODEL_FOLDERS = gettext_noop(
    "must name a model inside the model folders an administrator set up (TRELLIS_MODELS_DIRS)")
ADMIN_ONLY = gettext_noop(
    "only an administrator may turn this on: it lets the model run the Python code that comes with it")
ANOTHER_USERS_MODEL = gettext_noop(
    "{name!r} is another user's private model; install your own copy to use it")
_HUB_NAME = re.compile(r"^[A-Za-z0-9][\w.\-]*(/[A-Za-z0-9][\w.\-]*)?$")


def reach_errors(*, owner: AbstractBaseUser | None, config: Mapping[str, Any], path: str) -> list[FieldError]:
    """Every outbound URL and model path of the validated tree ``config`` that ``owner`` may
    not use, at its JSON path under ``path``; none for an administrator."""
    if owner is not None and owner.is_staff:
        return []
    registry = load_components()
    policy = OutboundPolicy(settings.TRELLIS_OUTBOUND_ALLOW)
    errors = []
    for node_path, node in iter_nodes(config, registry=registry):
        fields = registry.get(node["component"]).Params.model_fields
        for name, info in fields.items():
            extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
            value = (node.get("params") or {}).get(name)
            if extra.get("x-admin-only") and value:
                relative = join_path(node_path, "params", name)
                errors.append(FieldError(f"{path}.{relative}" if path else relative, ADMIN_ONLY, "admin_only"))
                continue
            if not isinstance(value, str) or not value:
                continue
            relative = join_path(node_path, "params", name)
            where = f"{path}.{relative}" if path else relative
            hidden = _private_model_of_another(owner, value, extra) if extra.get("x-model-name") \
                or extra.get("x-local-path") else None
            if hidden is not None:
                errors.append(FieldError(where, ANOTHER_USERS_MODEL, "private_model", {"name": hidden}))
                continue
            if extra.get("x-outbound"):
                problem = policy.problem(value)
                if problem:
                    errors.append(FieldError(where, problem, "outbound_address"))
            elif (extra.get("x-local-path") or (extra.get("x-model-name") and _names_a_path(value))) \
                    and not inside_model_folders(value):
                errors.append(FieldError(where, OUTSIDE_MODEL_FOLDERS, "model_path"))
    return errors


def _private_model_of_another(owner: AbstractBaseUser | None, value: str, extra: Mapping[str, Any]) -> str | None:
    """The name of the installed model ``value`` names (by name, or by a path into the model
    store) when it is private to another user than ``owner``; else None. Private models are
    named by their name only (``ModelStore.resolve``), so a hub id never reaches one."""
    from rag.models_manager import Viewer, store

    models = store()
    viewer = Viewer(owner=str(owner.pk) if owner is not None and owner.pk is not None else None)
    model = models.get(value) if not extra.get("x-local-path") else None
    if model is None:
        try:
            target = Path(value).expanduser().resolve()
            root = models.root.expanduser().resolve()
        except (OSError, RuntimeError, ValueError):
            return None
        if root not in target.parents:
            return None
        folder = target.relative_to(root).parts[0]
        model = models.get(folder)
        if model is None:  # the store's own folders (.staging, .partial…) hold no model to use
            return folder
    return model.name if not viewer.sees(model) else None


def _names_a_path(value: str) -> bool:
    """Where a hub name or a folder is accepted: whether ``value`` is taken as a folder. A name
    shaped like a hub id (``org/name``) never is, whatever exists under the working directory
    (the model loaders take a folder only when it is spelt as one, ``spelt_as_path``), so the
    answer does not depend on what is on disk."""
    return not _HUB_NAME.match(value)


def inside_model_folders(value: str) -> bool:
    """Whether the path ``value`` (symbolic links resolved) lies in one of the model folders."""
    try:
        target = Path(value).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return False
    for folder in settings.TRELLIS_MODELS_DIRS:
        root = Path(folder).expanduser().resolve()
        if target == root or root in target.parents:
            return True
    return False
