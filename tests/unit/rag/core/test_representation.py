import pytest

from rag.core.representation import placeholders, render

pytestmark = pytest.mark.unit

CONFIG = {
    "component": "Semantic",
    "params": {
        "top_k": 7,
        "threshold": 0.25,
        "enabled": True,
        "encoder": {"component": "Encoder", "params": {"batch_size": 16}},
        "children": [{"component": "Keyword", "params": {}}, {"component": "Semantic", "params": {}}],
    },
}


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("top {top_k}", "top 7"),
        ("{encoder.component} · bs {encoder.batch_size}", "Encoder · bs 16"),
        ("{encoder.params.batch_size}", "16"),
        ("{component}", "Semantic"),
        ("t={threshold} on={enabled}", "t=0.25 on=true"),
        ("of {children}", "of Keyword, Semantic"),
        ("{children.1.component}", "Semantic"),
        ("{{literal}} {top_k}", "{literal} 7"),
    ],
)
def test_placeholders_resolve_against_the_config(template, expected):
    assert render(template, CONFIG) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("{missing}", "⟨missing?⟩"),
        ("{encoder.nothing}", "⟨encoder.nothing?⟩"),
        ("{top_k.deeper}", "⟨top_k.deeper?⟩"),
        ("{}", "⟨?⟩"),
        ("{children.9}", "⟨children.9?⟩"),
    ],
)
def test_missing_values_render_visibly_and_never_raise(template, expected):
    assert render(template, CONFIG) == expected


def test_unbalanced_braces_are_left_as_text():
    assert render("top {top_k", CONFIG) == "top {top_k"


def test_placeholders_lists_paths_in_order():
    assert placeholders("{a} and {b.c} {{x}}") == ["a", "b.c"]


def test_a_fallback_text_stands_in_for_an_unset_value_or_nested_component():
    config = {"component": "Dense", "params": {"top_k": 3, "embedding_model": None, "note": None}}
    assert render("{embedding_model.component|KB model} · {note|none} · {top_k|?}", config) == "KB model · none · 3"
    config["params"]["embedding_model"] = {"component": "Encoder", "params": {}}
    assert render("{embedding_model.component|KB model}", config) == "Encoder"
    assert placeholders("{embedding_model.component|KB model}") == ["embedding_model.component"]
