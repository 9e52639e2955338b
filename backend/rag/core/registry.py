"""The component registry: a dict filled by a decorator at import time, frozen afterwards."""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

from .errors import RegistryError, UnknownComponentError
from .multilingual import LANGUAGES, MultilingualString
from .params import Params, component_slots
from .representation import placeholders

if TYPE_CHECKING:
    from .component import ConfigObject

KINDS: tuple[str, ...] = (
    "chunker",
    "embedding",
    "vectorizer",
    "retriever",
    "llm",
    "prompt",
    "query_transformer",
    "relevance_filter",
    "relevance_evaluator",
    "router",
    "classifier",
    "synthesizer",
    "reranker",
    "web_retriever",
    "strategy",
    "route_branch",
    "credential",
)

_NAME = re.compile(r"^[A-Z][A-Za-z0-9]{1,63}$")

C = TypeVar("C", bound="type[ConfigObject[Any]]")


class Registry:
    """Components by their short stable name.

    Names are what stored JSON refers to, so they never change once shipped. Registration
    checks a component's declaration completely, so a mistake fails at import, not at use.
    """

    def __init__(self) -> None:
        self._components: dict[str, type[ConfigObject[Any]]] = {}
        self._frozen = False

    @property
    def frozen(self) -> bool:
        return self._frozen

    def freeze(self) -> None:
        """Refuse further registrations; called once every component module is imported."""
        self._frozen = True

    def register(self, component: C | None = None, *, name: str | None = None) -> C | Callable[[C], C]:
        """Class decorator: ``@register`` (name = class name) or ``@register(name="...")``."""

        def decorate(cls: C) -> C:
            self._add(cls, name or cls.__name__)
            return cls

        return decorate(component) if component is not None else decorate

    def _add(self, cls: type[ConfigObject[Any]], name: str) -> None:
        if self._frozen:
            raise RegistryError(f"cannot register {name!r}: the component registry is frozen after start-up")
        if not _NAME.match(name):
            raise RegistryError(f"component name {name!r} must be CamelCase letters and digits (2-64 characters)")
        existing = self._components.get(name)
        if existing is not None:
            raise RegistryError(
                f"component name {name!r} is already registered by {existing.__module__}.{existing.__qualname__}; "
                f"{cls.__module__}.{cls.__qualname__} cannot take it too"
            )
        _check_declaration(cls, name)
        cls.NAME = name
        cls._registry = self
        self._components[name] = cls

    def get(self, name: str) -> type[ConfigObject[Any]]:
        try:
            return self._components[name]
        except KeyError:
            raise UnknownComponentError(name, difflib.get_close_matches(name, list(self._components), n=3)) from None

    def __contains__(self, name: object) -> bool:
        return name in self._components

    def __iter__(self) -> Iterator[type[ConfigObject[Any]]]:
        return iter(self._components.values())

    def __len__(self) -> int:
        return len(self._components)

    def names(self) -> list[str]:
        return sorted(self._components)

    def of_kind(self, kind: str) -> list[type[ConfigObject[Any]]]:
        return [cls for cls in self._components.values() if kind == cls.KIND]


def _check_declaration(cls: type[ConfigObject[Any]], name: str) -> None:
    from .component import declared_params

    def fail(problem: str) -> NoReturn:
        raise RegistryError(f"component {name!r} ({cls.__module__}.{cls.__qualname__}): {problem}")

    params_model = getattr(cls, "Params", None)
    if not (isinstance(params_model, type) and issubclass(params_model, Params)):
        fail("Params must subclass rag.core.params.Params")
    declared = declared_params(cls)
    if declared is not None and declared is not params_model:
        fail(f"its type argument names {getattr(declared, '__qualname__', declared)!s} as its parameters, "
             f"but its Params is {params_model.__qualname__}; declare it as {cls.__bases__[0].__name__}"
             f"[\"{cls.__name__}.Params\"]")
    if getattr(cls, "KIND", None) not in KINDS:
        fail(f"KIND must be one of {', '.join(KINDS)}")
    for attribute in ("CATEGORY", "ICON"):
        value = getattr(cls, attribute, None)
        if not isinstance(value, str) or not value:
            fail(f"{attribute} must be a non-empty string")
    for attribute in ("DISPLAY_NAME", "DESCRIPTION"):
        value = getattr(cls, attribute, None)
        if not isinstance(value, MultilingualString):
            fail(f"{attribute} must be a MultilingualString")
        missing = [language for language in LANGUAGES if not value.has(language)]
        if missing:
            fail(f"{attribute} lacks a text in {', '.join(missing)}")
    short_name = getattr(cls, "SHORT_NAME", None)
    if short_name is not None:
        if not isinstance(short_name, MultilingualString):
            fail("SHORT_NAME must be a MultilingualString or None")
        missing = [language for language in LANGUAGES if not short_name.has(language)]
        if missing:
            fail(f"SHORT_NAME lacks a text in {', '.join(missing)}")
    fields = set(params_model.model_fields)
    representation = getattr(cls, "REPRESENTATION", None)
    if representation is not None:
        if not isinstance(representation, MultilingualString):
            fail("REPRESENTATION must be a MultilingualString or None")
        for language in LANGUAGES:
            for path in placeholders(representation.get(language)):
                head = path.split(".", 1)[0]
                if head not in fields and head != "component":
                    fail(f"representation ({language}) refers to {{{path}}}, but {head!r} is not a parameter")
    for slot in component_slots(params_model).values():
        if slot.kind not in KINDS:
            fail(f"parameter {slot.name!r} refers to unknown component kind {slot.kind!r}")
        if hasattr(cls, slot.name):
            fail(f"parameter {slot.name!r} would shadow the attribute {cls.__name__}.{slot.name}")


registry = Registry()
register = registry.register
