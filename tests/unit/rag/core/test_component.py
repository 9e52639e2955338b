import copy

import pytest

from rag.core import ConfigValidationError, CredentialError, build, localize_schema

from .sample_components import ApiKey, Blend, Encoder, Keyword, Semantic, events, registry

pytestmark = pytest.mark.unit


def test_constructor_accepts_exactly_the_params_and_refuses_typos():
    assert Keyword(top_k=3).params.top_k == 3
    with pytest.raises(ConfigValidationError, match="params.topk: is not a parameter of Keyword"):
        Keyword(topk=3)


def test_nested_components_may_be_given_as_instances_or_references():
    encoder = Encoder(batch_size=8)
    semantic = Semantic(encoder=encoder)
    assert semantic.encoder is encoder
    blend = Blend(children=[Keyword(top_k=2), {"component": "Semantic", "params": {"top_k": 4}}])
    assert [type(child) for child in blend.children] == [Keyword, Semantic]
    assert blend.children[1].params.top_k == 4
    assert blend.children[1].encoder.params.batch_size == 32


def test_to_config_round_trips_through_the_factory():
    config = {"component": "Blend", "params": {"top_k": 3, "children": [{"component": "Keyword", "params": {"k1": 1.2}}]}}
    built = build(config, registry=registry)
    again = build(built.to_config(), registry=registry)
    assert again.to_config() == built.to_config()
    assert built.to_config()["params"]["children"][0]["params"] == {"top_k": 10, "k1": 1.2}


def test_the_factory_takes_a_kind_by_its_base_class_and_checks_the_result_is_one():
    assert isinstance(build({"component": "Keyword"}, kind=Keyword, registry=registry), Keyword)
    with pytest.raises(ConfigValidationError, match="expects a component of kind retriever"):
        build({"component": "Encoder"}, kind=Keyword, registry=registry)
    with pytest.raises(TypeError, match="Semantic is of kind retriever but does not subclass Keyword"):
        build({"component": "Semantic"}, kind=Keyword, registry=registry)


def test_factory_prepares_children_before_their_parent():
    events.clear()
    build({"component": "Blend", "params": {"children": [{"component": "Semantic"}]}}, registry=registry,
          infra={"env_path": "/tmp/x"})
    order = [(step, name) for step, name in events]
    assert order == [
        ("set_trace_params", "Encoder"), ("inject_infra", "Encoder"), ("init_model", "Encoder"),
        ("set_trace_params", "Semantic"), ("inject_infra", "Semantic"), ("init_model", "Semantic"),
        ("set_trace_params", "Blend"), ("inject_infra", "Blend"), ("init_model", "Blend"),
    ]


def test_a_component_in_a_slot_loaded_on_use_is_prepared_but_not_loaded(monkeypatch):
    # A strategy's follow-up model is asked only for follow-ups: building the pipeline must not
    # load it (the packaged model would take seconds and a gigabyte for a hosted pipeline).
    monkeypatch.setattr(Semantic, "LOADED_ON_USE", frozenset({"encoder"}))
    events.clear()
    semantic = build({"component": "Semantic"}, registry=registry, infra={"env_path": "/tmp/x"})
    assert events == [("set_trace_params", "Encoder"), ("inject_infra", "Encoder"),
                      ("set_trace_params", "Semantic"), ("inject_infra", "Semantic"), ("init_model", "Semantic")]
    assert semantic.encoder.infra == {"env_path": "/tmp/x"}


def test_infra_reaches_every_node_and_trace_params_are_a_deep_copy():
    blend = build({"component": "Blend", "params": {"children": [{"component": "Keyword"}]}}, registry=registry,
                  infra={"env_path": "/data"})
    assert blend.children[0].infra == {"env_path": "/data"}
    snapshot = copy.deepcopy(blend.trace_params)
    blend.children[0].params.top_k = 99
    blend.trace_params["children"][0]["params"]["top_k"] = 42
    assert blend.children[0].trace_params == {"top_k": 10, "k1": 1.5}
    assert snapshot["children"][0]["params"]["top_k"] == 10


def test_schema_summary_is_recursive():
    blend = Blend(children=[Keyword(top_k=2), Semantic()])
    assert blend.get_schema_summary() == {
        "class": "Blend",
        "params": {"top_k": 10, "weights": None},
        "children": [
            {"class": "Keyword", "params": {"top_k": 2, "k1": 1.5}, "children": []},
            {"class": "Semantic", "params": {
                "top_k": 10,
                "encoder": {"class": "Encoder", "params": {"batch_size": 32, "device": "CPU"}, "children": []},
            }, "children": []},
        ],
    }


def test_representation_renders_nested_values_in_each_language():
    semantic = Semantic(encoder=Encoder(batch_size=64), top_k=3)
    assert semantic.render_representation("en") == "Semantic · Encoder · bs 64 · top 3"
    assert Keyword(top_k=4).render_representation("zh-TW") == "關鍵字 · 前 4"
    assert Encoder().render_representation("es") == Encoder.DESCRIPTION.get("es")


def test_metadata_reports_composite_limits():
    assert Blend.get_metadata()["composite"] is True
    assert (Blend.get_metadata()["min_children"], Blend.get_metadata()["max_children"]) == (1, 4)
    assert Semantic.get_metadata()["composite"] is False
    assert Semantic.get_metadata()["slots"] == {"encoder": "embedding"}


def test_secrets_never_serialise():
    key = ApiKey(api_key="sk-live-abcdef")
    for rendered in (key.to_config(), key.get_schema_summary(), repr(key)):
        assert "sk-live-abcdef" not in str(rendered)
    key.set_trace_params({"api_key": "sk-live-abcdef", "base_url": None})
    assert "sk-live-abcdef" not in str(key.trace_params)
    schema = ApiKey.get_schema()["properties"]["api_key"]
    assert schema["writeOnly"] is True and schema["format"] == "password"


def test_credentials_resolve_through_the_injected_resolver_only():
    keyword = Keyword()
    with pytest.raises(CredentialError, match="no credential store"):
        keyword.get_credential("openai")
    stored = ApiKey(api_key="sk-1")
    resolved = build({"component": "Keyword"}, registry=registry, credentials={"openai": stored}.__getitem__)
    assert resolved.get_credential("openai") is stored


def test_localized_schema_carries_translated_titles_and_no_i18n_keys():
    schema = localize_schema(Keyword.get_schema(), "zh-Hant")
    assert schema["title"] == "Keyword (zh)"
    assert schema["properties"]["top_k"]["title"] == "前 k 名"
    assert "x-i18n" not in str(schema)
    assert localize_schema(Keyword.get_schema(), "fr")["properties"]["top_k"]["title"] == "Top k"
