"""The contract every registered component keeps. New components are covered automatically."""

import json
import re
import sys
import types
import typing
from typing import Any

import jsonschema
import pytest
from pydantic import SecretStr

from rag.components import load_components
from rag.core import (
    LANGUAGES,
    ConfigObject,
    RegistryVocabulary,
    localize_schema,
    render_representation,
    validate_or_raise,
)
from rag.core.component import declared_params
from rag.core.params import I18N_KEY, LABELS_KEY
from rag.core.representation import placeholders, value_key

pytestmark = pytest.mark.contracts

registry = load_components()
COMPONENTS = sorted(registry, key=lambda component: component.NAME)


def example_params(component: type[ConfigObject]) -> dict[str, Any]:
    """Parameters that construct ``component``: its declared example, or nothing (defaults)."""
    return dict(getattr(component, "EXAMPLE_PARAMS", {}))


def component_classes(root: type = ConfigObject):
    """``root`` and every class below it, registered or not (the slot base classes among them)."""
    yield root
    for subclass in root.__subclasses__():
        yield from component_classes(subclass)


def slot_annotation(component: type[ConfigObject], name: str) -> Any:
    """The annotation ``component`` gives the attribute holding slot ``name``, evaluated."""
    owner = next((klass for klass in component.__mro__ if name in klass.__dict__.get("__annotations__", {})), None)
    assert owner is not None, f"{component.NAME} does not annotate the attribute of its slot {name!r}"
    namespace = {klass.__name__: klass for klass in component_classes()} | vars(sys.modules[owner.__module__])
    return eval(owner.__annotations__[name], namespace)


def walk_properties(schema: dict[str, Any]):
    yield from (schema.get("properties") or {}).items()


def test_the_registry_is_frozen_and_not_empty():
    assert registry.frozen
    assert len(registry) > 0


@pytest.mark.parametrize("component", COMPONENTS, ids=lambda component: component.NAME)
class TestComponentContract:
    def test_schema_is_valid_json_schema_in_every_language(self, component):
        for language in LANGUAGES:
            schema = localize_schema(component.get_schema(), language)
            jsonschema.Draft202012Validator.check_schema(schema)
            assert I18N_KEY not in json.dumps(schema)
            assert schema["title"] == component.DISPLAY_NAME.get(language)

    def test_every_parameter_has_a_title_and_description_in_every_language(self, component):
        for name, prop in walk_properties(component.get_schema()):
            texts = prop.get(I18N_KEY, {})
            for key in ("title", "description"):
                assert set(texts.get(key, {})) == set(LANGUAGES), f"{component.NAME}.{name} {key} lacks a language"

    def test_default_or_example_params_validate_and_construct(self, component):
        config = validate_or_raise({"component": component.NAME, "params": example_params(component)},
                                   registry=registry)
        jsonschema.validate(config["params"], localize_schema(component.get_schema(), "en"))
        instance = component(**config["params"])
        assert instance.params is not None

    def test_config_round_trips_through_json(self, component):
        instance = component(**example_params(component))
        serialised = json.loads(json.dumps(instance.to_config()))
        # Secrets never serialise, so a rebuild takes them again from where they live.
        secrets = {name: value for name, value in example_params(component).items()
                   if isinstance(getattr(instance.params, name, None), SecretStr)}
        rebuilt = registry.get(serialised["component"])(**serialised["params"], **secrets)
        assert rebuilt.to_config() == instance.to_config()
        json.dumps(instance.get_schema_summary())

    def test_representation_renders_in_every_language_with_nothing_missing(self, component):
        instance = component(**example_params(component))
        for language in LANGUAGES:
            rendered = instance.render_representation(language)
            assert rendered.strip()
            assert "⟨" not in rendered, f"{component.NAME} ({language}) rendered {rendered!r}"
        template = component.get_representation()
        if template is not None:
            for language in LANGUAGES:
                assert set(placeholders(template.get(language))) <= set(placeholders(template.get("en"))) | {
                    "component"
                }, f"{component.NAME}: the {language} template uses placeholders the English one does not"

    def test_representation_reads_well_before_anything_is_nested(self, component):
        """As the builder shows a new node: defaults, every nested slot still empty."""
        template = component.get_representation()
        if template is None:
            return
        params = {name: prop["default"] for name, prop in walk_properties(component.get_schema()) if "default" in prop}
        params |= {name: [] if slot.multiple else None for name, slot in component.slots().items()}
        class_names = [other.NAME for other in COMPONENTS if other.get_short_name().get("en") != other.NAME]
        for language in LANGUAGES:
            rendered = render_representation(template.get(language), {"component": component.NAME, "params": params},
                                             RegistryVocabulary(registry, language))
            assert not re.search(r"[·→]\s*[·→]|^\s*[·→]|[·→]\s*$|⟨", rendered), f"{component.NAME}: {rendered!r}"
            assert not any(re.search(rf"\b{name}\b", rendered) for name in class_names), rendered

    def test_value_labels_name_every_value_of_their_parameter_in_every_language(self, component):
        for name, prop in walk_properties(component.get_schema()):
            tables = prop.get(I18N_KEY, {}).get(LABELS_KEY)
            if tables is None:
                continue
            options = [value for option in (prop, *prop.get("anyOf", []))
                       for value in option.get("enum", [option["const"]] if "const" in option else [])]
            assert set(tables) == set(LANGUAGES), f"{component.NAME}.{name}"
            for language, labels in tables.items():
                assert set(labels) == {value_key(value) for value in options}, f"{component.NAME}.{name} ({language})"
                assert all(label.strip() for label in labels.values())

    def test_params_are_typed_by_the_type_argument_so_type_checkers_see_them(self, component):
        assert declared_params(component) is component.Params, (
            f"declare {component.__qualname__} as {component.__bases__[0].__name__}[\"{component.__name__}.Params\"]"
        )

    def test_slots_are_typed_by_the_base_class_of_their_kind(self, component):
        for slot in component.slots().values():
            annotation = slot_annotation(component, slot.name)
            field = component.Params.model_fields[slot.name]
            optional = not slot.required and field.default is None and field.default_factory is None
            if slot.multiple:
                assert typing.get_origin(annotation) is list, f"{component.NAME}.{slot.name}: {annotation}"
                (held,) = typing.get_args(annotation)
            elif optional:
                assert isinstance(annotation, types.UnionType), f"{component.NAME}.{slot.name} may be None: {annotation}"
                (held,) = set(typing.get_args(annotation)) - {type(None)}
            else:
                held = annotation
            assert isinstance(held, type) and issubclass(held, ConfigObject), f"{component.NAME}.{slot.name}: {held}"
            assert slot.kind == held.KIND, f"{component.NAME}.{slot.name} takes a {slot.kind}, typed {held.__name__}"
            built = component(**example_params(component))
            values = getattr(built, slot.name) if slot.multiple else [getattr(built, slot.name)]
            assert all(value is None or isinstance(value, held) for value in values), f"{component.NAME}.{slot.name}"

    def test_names_and_descriptions_ship_in_every_language(self, component):
        for text in (component.DISPLAY_NAME, component.DESCRIPTION):
            for language in LANGUAGES:
                assert text.has(language) and text.get(language).strip()
        metadata = component.get_metadata()
        assert metadata["icon"] and metadata["category"] and metadata["kind"]
