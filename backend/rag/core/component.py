"""``ConfigObject``: the base of every configurable component."""

from __future__ import annotations

import copy
import sys
import typing
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar, cast

from pydantic import SecretStr

from .errors import ConfigValidationError, CredentialError
from .multilingual import MultilingualString, normalize_language
from .params import Params, Slot, component_slots, enum_label
from .representation import LIST_SEPARATORS, render
from .schema import multilingual_schema

if TYPE_CHECKING:
    from .registry import Registry

CredentialResolver = Callable[[str], "ConfigObject[Any]"]

ParamsT = TypeVar("ParamsT", bound=Params)


class ConfigObject(Generic[ParamsT]):
    """A component: a class whose settings are exactly the fields of its ``Params`` model.

    A component names its ``Params`` twice, once for pydantic and once for type checkers, so
    that ``self.params`` has the type of its own model::

        class BM25Retriever(BaseRetriever["BM25Retriever.Params"]):
            class Params(RetrieverParams):
                k1: float = param(1.2, ...)

    Registration refuses a component whose type argument is not its ``Params``. Nested
    components are attributes named after their slots; a component annotates them with the
    base class of the slot's kind (``retriever: BaseRetriever``); the contracts check both.

    Subclasses declare ``Params``, ``KIND``, ``CATEGORY``, ``ICON``, ``DISPLAY_NAME``,
    ``DESCRIPTION`` and optionally ``SHORT_NAME`` (what a representation calls a nested one of
    them; the display name by default) and ``REPRESENTATION``, and are registered by name with
    ``@register``. ``__init__`` validates the parameters and builds nested components; heavy
    work (loading models) belongs in ``init_model``, which the factory calls once the tree is
    assembled.

    Parameters
    ----------
    **params
        The values of ``Params`` fields. A nested component is given as an instance or as a
        ``{"component": name, "params": {...}}`` reference; unknown names are refused.
    """

    NAME: ClassVar[str] = ""
    KIND: ClassVar[str] = ""
    CATEGORY: ClassVar[str] = ""
    ICON: ClassVar[str] = ""
    DISPLAY_NAME: ClassVar[MultilingualString]
    DESCRIPTION: ClassVar[MultilingualString]
    SHORT_NAME: ClassVar[MultilingualString | None] = None
    REPRESENTATION: ClassVar[MultilingualString | None] = None
    LOADED_ON_USE: ClassVar[frozenset[str]] = frozenset()
    """Slots whose components a run may never call: the factory prepares them without
    ``init_model``, and they load their model when first used."""
    Params: ClassVar[type[Params]] = Params
    params: ParamsT
    # Set on each registered class by ``Registry.register``.
    _registry: ClassVar[Registry]

    def __init__(self, **params: Any) -> None:
        from .validation import validate_params

        slots = component_slots(self.Params)
        normalised, errors = validate_params(type(self), params, registry=self.registry())
        if errors:
            raise ConfigValidationError(errors)
        assert normalised is not None
        # The registry checked that ``Params`` is the type argument ``ParamsT``.
        self.params = cast(ParamsT, self.Params.model_validate(normalised))
        self._slots = slots
        for name, slot in slots.items():
            given = params.get(name)
            reference = normalised[name]
            if slot.multiple:
                given_items = list(given) if isinstance(given, (list, tuple)) else [None] * len(reference)
                instance: Any = [
                    item if isinstance(item, ConfigObject) else self._instantiate(item_reference)
                    for item, item_reference in zip(given_items, reference, strict=True)
                ]
            elif isinstance(given, ConfigObject):
                instance = given
            else:
                instance = self._instantiate(reference)
            setattr(self, name, instance)
        self.trace_params: dict[str, Any] = {}
        self._credential_resolver: CredentialResolver | None = None

    @classmethod
    def registry(cls) -> Registry:
        """The registry this component was registered in (the global one for shipped components).

        The global registry is completed on first use, so nested references to components of
        modules nobody imported yet (``{"component": "AllMiniLML6V2Embedding"}``) resolve.
        """
        from .registry import registry as default_registry

        own = cls.__dict__.get("_registry") or default_registry
        if own is default_registry and not default_registry.frozen:
            from rag.components import load_components

            load_components()
        return own

    def _instantiate(self, reference: Mapping[str, Any] | None) -> ConfigObject[Any] | None:
        if reference is None:
            return None
        return self.registry().get(reference["component"])(**reference["params"])

    # -- metadata ---------------------------------------------------------------------------

    @classmethod
    def slots(cls) -> dict[str, Slot]:
        return component_slots(cls.Params)

    @classmethod
    def get_schema(cls) -> dict[str, Any]:
        """JSON Schema of ``Params`` with every translation under ``x-i18n``
        (``rag.core.schema.localize_schema`` gives one language)."""
        return multilingual_schema(cls)

    @classmethod
    def get_short_name(cls) -> MultilingualString:
        """What representations call a nested component of this class ("BM25", "Fusion")."""
        return cls.SHORT_NAME or cls.DISPLAY_NAME

    @classmethod
    def get_representation(cls) -> MultilingualString | None:
        """The representation template; ``None`` means "show the description"."""
        return cls.REPRESENTATION

    @classmethod
    def get_metadata(cls) -> dict[str, Any]:
        children = next((slot for slot in cls.slots().values() if slot.multiple), None)
        return {
            "name": cls.NAME,
            "kind": cls.KIND,
            "category": cls.CATEGORY,
            "icon": cls.ICON,
            "display_name": cls.DISPLAY_NAME,
            "short_name": cls.get_short_name(),
            "description": cls.DESCRIPTION,
            "representation": cls.REPRESENTATION,
            "composite": children is not None,
            "child_kind": children.kind if children else None,
            "min_children": children.min_children if children else None,
            "max_children": children.max_children if children else None,
            "slots": {slot.name: slot.kind for slot in cls.slots().values()},
        }

    @classmethod
    def validate_and_transform(cls, raw_params: Mapping[str, Any]) -> dict[str, Any]:
        """Validate raw parameters (nested components included) and return them normalised,
        every default filled; raises ``ConfigValidationError`` listing every problem."""
        from .validation import validate_params

        normalised, errors = validate_params(cls, raw_params, registry=cls.registry())
        if errors:
            raise ConfigValidationError(errors)
        assert normalised is not None
        return normalised

    @classmethod
    def availability_problem(cls, params: Mapping[str, Any]) -> str | None:
        """None when a component with these (valid) ``params`` can run on this machine;
        otherwise a sentence saying what to install or configure. Must not download or block."""
        return None

    # -- serialisation ----------------------------------------------------------------------

    def sub_components(self) -> Iterator[ConfigObject[Any]]:
        """The directly nested components, in declaration order."""
        for _, component in self.named_sub_components():
            yield component

    def named_sub_components(self) -> Iterator[tuple[str, ConfigObject[Any]]]:
        """The directly nested components with the slot each is in, in declaration order."""
        for name, slot in self._slots.items():
            value = getattr(self, name)
            if slot.multiple:
                yield from ((name, component) for component in value)
            elif value is not None:
                yield name, value

    def _scalar_params(self, *, reveal_secrets: bool = False) -> dict[str, Any]:
        dumped = self.params.model_dump(mode="json", exclude=set(self._slots))
        for name, value in self.params:
            if isinstance(value, SecretStr) and name in dumped:
                if reveal_secrets:
                    dumped[name] = value.get_secret_value()
                else:
                    del dumped[name]
        return dumped

    def to_config(self) -> dict[str, Any]:
        """``{"component": name, "params": {...}}`` of the current tree. Secrets are left out."""
        params = self._scalar_params()
        for name, slot in self._slots.items():
            value = getattr(self, name)
            if slot.multiple:
                params[name] = [child.to_config() for child in value]
            else:
                params[name] = value.to_config() if value is not None else None
        return {"component": self.NAME, "params": params}

    def render_representation(self, language: str | None = None) -> str:
        """This instance's representation in ``language``, or its description when it has none."""
        template = self.get_representation()
        rendered = render(template.get(language), self.to_config(), RegistryVocabulary(self.registry(), language)) \
            if template is not None else ""
        return rendered or self.DESCRIPTION.get(language)

    def get_schema_summary_parameters(self) -> dict[str, Any]:
        """Parameters for summaries and traces: scalars, and single nested components as their
        own summaries. Secrets are left out."""
        params = self._scalar_params()
        for name, slot in self._slots.items():
            value = getattr(self, name)
            if not slot.multiple:
                params[name] = value.get_schema_summary() if value is not None else None
        return params

    def get_schema_summary(self) -> dict[str, Any]:
        """``{"class": name, "params": {...}, "children": [...]}``, recursively."""
        children = [
            child.get_schema_summary()
            for name, slot in self._slots.items()
            if slot.multiple
            for child in getattr(self, name)
        ]
        return {"class": self.NAME, "params": self.get_schema_summary_parameters(), "children": children}

    # -- life cycle -------------------------------------------------------------------------

    def set_trace_params(self, raw_params: Mapping[str, Any]) -> None:
        """Keep a deep copy of the parameters this instance was built from, for traces."""
        self.trace_params = _without_secrets(copy.deepcopy(dict(raw_params)), self)

    def inject_infra(self, **infra: Any) -> None:
        """Receive run-time infrastructure (data directory, chunks, stores...). Components that
        need some override this; the factory calls it for every node, children first."""

    def init_model(self) -> None:
        """Load heavy resources (models, indices). Called once, after ``inject_infra``."""

    def close(self) -> None:
        """Release resources; composites release their children too."""
        for child in self.sub_components():
            child.close()

    # -- credentials ------------------------------------------------------------------------

    def set_credential_resolver(self, resolver: CredentialResolver | None) -> None:
        self._credential_resolver = resolver

    @classmethod
    def credential_destination(cls, params: Mapping[str, Any], credential_params: Mapping[str, Any]) -> str | None:
        """The URL this component sends the credentials it names to, from its validated params
        and the credential's public params: its ``base_url`` unless a component says otherwise.
        Saving a pipeline checks it against the credential's servers before anything is sent."""
        url = params.get("base_url")
        return url if isinstance(url, str) else None

    def get_credential(self, name: str) -> ConfigObject[Any]:
        """Resolve the credential component called ``name`` for this pipeline's owner."""
        if self._credential_resolver is None:
            raise CredentialError(f"{self.NAME} needs the credential {name!r}, but no credential store is available")
        return self._credential_resolver(name)

    def __repr__(self) -> str:
        if not hasattr(self, "params"):
            return f"<{type(self).__name__}, not constructed>"
        return f"{type(self).__name__}({self._scalar_params()!r})"


class RegistryVocabulary:
    """Short names and value labels of the registered components, in ``language``: the words
    representations are rendered with (``rag.core.representation.Vocabulary``)."""

    def __init__(self, registry: Registry, language: str | None) -> None:
        self.registry = registry
        self.language = language
        self.list_separator = LIST_SEPARATORS.get(normalize_language(language), ", ")

    def name(self, component: str) -> str:
        if component not in self.registry:
            return component
        return self.registry.get(component).get_short_name().get(self.language)

    def label(self, component: str, param: str, value: Any) -> str | None:
        if component not in self.registry:
            return None
        return enum_label(self.registry.get(component).Params, param, value, self.language)


def declared_params(cls: type[ConfigObject[Any]]) -> object | None:
    """What ``cls`` names as its type argument (``BaseRetriever["X.Params"]``), resolved, from
    the nearest class that names one; ``None`` when no class in its bases does. A name that
    does not resolve is returned as written."""
    for klass in cls.__mro__:
        for base in klass.__dict__.get("__orig_bases__", ()):
            origin = typing.get_origin(base)
            if not (isinstance(origin, type) and issubclass(origin, ConfigObject)):
                continue
            (argument,) = typing.get_args(base)
            if isinstance(argument, TypeVar):
                continue
            if isinstance(argument, typing.ForwardRef):
                return _resolve(argument.__forward_arg__, klass)
            return argument
    return None


def _resolve(dotted: str, klass: type) -> object:
    # "X.Params", X being the class that names it (not yet bound in its module when it is
    # registered) or a module-level name.
    head, *rest = dotted.split(".")
    value: object = klass if head == klass.__name__ else vars(sys.modules[klass.__module__]).get(head)
    for name in rest:
        value = getattr(value, name, None)
    return dotted if value is None else value


def _without_secrets(params: dict[str, Any], component: ConfigObject[Any]) -> dict[str, Any]:
    for name, value in component.params:
        if isinstance(value, SecretStr):
            params.pop(name, None)
    return params
