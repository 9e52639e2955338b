"""Building a validated component tree and preparing it to run."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar, overload

from .component import ConfigObject, CredentialResolver
from .registry import Registry
from .registry import registry as default_registry
from .validation import validate_or_raise

C = TypeVar("C", bound="ConfigObject[Any]")


@overload
def build(
    config: Mapping[str, Any],
    *,
    kind: type[C],
    registry: Registry | None = None,
    infra: Mapping[str, Any] | None = None,
    credentials: CredentialResolver | None = None,
) -> C: ...


@overload
def build(
    config: Mapping[str, Any],
    *,
    kind: str | None = None,
    registry: Registry | None = None,
    infra: Mapping[str, Any] | None = None,
    credentials: CredentialResolver | None = None,
) -> ConfigObject[Any]: ...


def build(
    config: Mapping[str, Any],
    *,
    kind: str | type[ConfigObject[Any]] | None = None,
    registry: Registry | None = None,
    infra: Mapping[str, Any] | None = None,
    credentials: CredentialResolver | None = None,
) -> ConfigObject[Any]:
    """Validate ``config`` and build the component tree it describes, ready to run.

    ``kind`` is a component kind (``"retriever"``) or the base class of one (``BaseRetriever``,
    which also types the result). Every node is constructed, then prepared bottom-up:
    ``set_trace_params`` (with its normalised parameters), ``inject_infra(**infra)``,
    ``init_model()``.

    Raises
    ------
    ConfigValidationError
        With every error of the tree and its JSON path; nothing is built.
    """
    registry = registry or default_registry
    kind_name: str | None
    if isinstance(kind, type):
        expected, kind_name = kind, kind.KIND
    else:
        expected, kind_name = None, kind
    normalised = validate_or_raise(config, registry=registry, kind=kind_name)
    component = registry.get(normalised["component"])
    if expected is not None and not issubclass(component, expected):
        raise TypeError(f"{component.NAME} is of kind {expected.KIND} but does not subclass {expected.__name__}")
    root = component(**normalised["params"])
    prepare(root, infra=infra, credentials=credentials)
    return root


def prepare(
    component: ConfigObject,
    *,
    infra: Mapping[str, Any] | None = None,
    credentials: CredentialResolver | None = None,
    load: bool = True,
) -> ConfigObject:
    """Prepare an already constructed tree, children before their parent; a subtree in one of
    its parent's ``LOADED_ON_USE`` slots (or with ``load`` false) is not loaded here."""
    for slot, child in component.named_sub_components():
        prepare(child, infra=infra, credentials=credentials, load=load and slot not in component.LOADED_ON_USE)
    component.set_credential_resolver(credentials)
    component.set_trace_params(component.to_config()["params"])
    component.inject_infra(**dict(infra or {}))
    if load:
        component.init_model()
    return component
