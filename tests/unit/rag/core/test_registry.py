import pytest

from rag.core import ConfigObject, Params, Registry, RegistryError, UnknownComponentError, ml, param
from rag.core.component import declared_params

pytestmark = pytest.mark.unit


def make_component(**overrides):
    attributes = {
        "KIND": "retriever",
        "CATEGORY": "sparse",
        "ICON": "search",
        "DISPLAY_NAME": ml("Thing", "Cosa", "東西"),
        "DESCRIPTION": ml("Finds things.", "Encuentra cosas.", "尋找東西。"),
        "Params": type("Params", (Params,), {"__annotations__": {"top_k": int}, "top_k": param(3, title=ml("k"))}),
    }
    attributes.update(overrides)
    return type("Thing", (ConfigObject,), attributes)


def test_registering_two_components_under_one_name_fails_with_both_culprits_named():
    registry = Registry()
    registry.register(make_component(), name="Thing")
    with pytest.raises(RegistryError) as failure:
        registry.register(make_component(), name="Thing")
    message = str(failure.value)
    assert "'Thing' is already registered" in message
    assert message.count("Thing") >= 3


def test_a_frozen_registry_refuses_new_components():
    registry = Registry()
    registry.freeze()
    with pytest.raises(RegistryError, match="frozen"):
        registry.register(make_component(), name="Late")


def test_decorator_uses_the_class_name_and_sets_NAME():
    registry = Registry()
    component = registry.register(make_component())
    assert component.NAME == "Thing"
    assert registry.get("Thing") is component
    assert "Thing" in registry and len(registry) == 1


def test_unknown_names_suggest_close_matches():
    registry = Registry()
    registry.register(make_component(), name="BM25Retriever")
    with pytest.raises(UnknownComponentError, match="did you mean BM25Retriever"):
        registry.get("BM25Retriver")


@pytest.mark.parametrize(
    ("overrides", "problem"),
    [
        ({"KIND": "gizmo"}, "KIND must be one of"),
        ({"ICON": ""}, "ICON must be a non-empty string"),
        ({"DISPLAY_NAME": "Thing"}, "DISPLAY_NAME must be a MultilingualString"),
        ({"DESCRIPTION": ml("Finds things.", es="Encuentra cosas.")}, "DESCRIPTION lacks a text in zh-Hant"),
        ({"REPRESENTATION": ml("top {top_kk}")}, "refers to {top_kk}"),
        ({"Params": dict}, "Params must subclass"),
    ],
)
def test_a_wrong_declaration_fails_at_registration(overrides, problem):
    with pytest.raises(RegistryError, match=problem.replace("{", r"\{").replace("}", r"\}")):
        Registry().register(make_component(**overrides), name="Thing")


@pytest.mark.parametrize("name", ["thing", "T", "Has-Dash", "A" * 65])
def test_names_must_be_short_camel_case(name):
    with pytest.raises(RegistryError, match="CamelCase"):
        Registry().register(make_component(), name=name)


class ThingParams(Params):
    top_k: int = param(3, title=ml("k"))


def test_a_component_typed_by_its_own_nested_params_registers():
    class Thing(ConfigObject["Thing.Params"]):
        KIND = "retriever"
        CATEGORY = "sparse"
        ICON = "search"
        DISPLAY_NAME = ml("Thing", "Cosa", "東西")
        DESCRIPTION = ml("Finds things.", "Encuentra cosas.", "尋找東西。")

        class Params(Params):
            top_k: int = param(3, title=ml("k"))

    Registry().register(Thing)
    assert declared_params(Thing) is Thing.Params
    assert Thing(top_k=4).params.top_k == 4


def test_a_component_typed_by_a_params_model_it_does_not_use_fails_at_registration():
    class Thing(ConfigObject[ThingParams]):
        KIND = "retriever"
        CATEGORY = "sparse"
        ICON = "search"
        DISPLAY_NAME = ml("Thing", "Cosa", "東西")
        DESCRIPTION = ml("Finds things.", "Encuentra cosas.", "尋找東西。")

        class Params(Params):
            top_k: int = param(3, title=ml("k"))

    with pytest.raises(RegistryError, match=r"names ThingParams as its parameters, but its Params is .*Thing\.Params"):
        Registry().register(Thing)


def test_a_subclass_with_new_params_must_name_them_again():
    class Base(ConfigObject[ThingParams]):
        KIND = "retriever"
        CATEGORY = "sparse"
        ICON = "search"
        DISPLAY_NAME = ml("Thing", "Cosa", "東西")
        DESCRIPTION = ml("Finds things.", "Encuentra cosas.", "尋找東西。")
        Params = ThingParams

    class Wider(Base):
        class Params(ThingParams):
            depth: int = param(1, title=ml("depth"))

    Registry().register(Base)
    with pytest.raises(RegistryError, match=r'declare it as Base\["Wider.Params"\]'):
        Registry().register(Wider)


def test_an_unresolvable_type_argument_fails_at_registration():
    class Thing(ConfigObject["Missing.Params"]):
        KIND = "retriever"
        CATEGORY = "sparse"
        ICON = "search"
        DISPLAY_NAME = ml("Thing", "Cosa", "東西")
        DESCRIPTION = ml("Finds things.", "Encuentra cosas.", "尋找東西。")
        Params = ThingParams

    with pytest.raises(RegistryError, match=r"names Missing.Params as its parameters"):
        Registry().register(Thing)
