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
        "children": [{"component": "Keyword", "params": {"name": "kw"}}, {"component": "Semantic", "params": {}}],
    },
}


class Words:
    """A vocabulary that names components in lower case, labels ``mode`` values and joins with "; "."""

    list_separator = "; "

    def name(self, component: str) -> str:
        return component.lower()

    def label(self, component: str, param: str, value: object) -> str | None:
        return {"fast": "Fast!"}.get(value) if (component, param) == ("Semantic", "mode") else None


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
        ("{children.name}", "kw"),
        ("{{literal}} {top_k}", "{literal} 7"),
    ],
)
def test_placeholders_resolve_against_the_config(template, expected):
    assert render(template, CONFIG) == expected


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Semantic · {missing} · top {top_k}", "Semantic · top 7"),
        ("Semantic · {encoder.nothing}", "Semantic"),
        ("{top_k.deeper} · top {top_k}", "top 7"),
        ("Semantic · {} · top {top_k}", "Semantic · top 7"),
        ("{children.9.component} · top {top_k}", "top 7"),
        ("{missing}", ""),
    ],
)
def test_a_segment_with_nothing_to_show_is_left_out_whole(template, expected):
    assert render(template, CONFIG) == expected


@pytest.mark.parametrize(
    ("params", "expected"),
    [
        ({"children": [], "rounds": 3}, "Agentic · rounds ≤ 3"),
        ({"children": [{"component": "Keyword"}], "rounds": 3}, "Agentic · Keyword · rounds ≤ 3"),
        ({"children": [], "rounds": None}, "Agentic"),
        ({"retriever": None, "llm": {"component": "Local"}}, "Agentic · Local"),
        ({"note": "  ", "rounds": 2}, "Agentic · rounds ≤ 2"),
    ],
)
def test_a_node_reads_well_at_every_stage_of_building(params, expected):
    template = "Agentic · {children} · {retriever.component} → {llm.component} · {note} · rounds ≤ {rounds}"
    assert render(template, {"component": "Agentic", "params": params}) == expected


def test_a_dropped_segment_leaves_the_separator_before_it():
    config = {"component": "Naive", "params": {"retriever": None, "llm": {"component": "Local"}}}
    assert render("Naive · {retriever.component} → {llm.component}", config) == "Naive · Local"


def test_nested_components_render_as_the_vocabularys_names_and_values_as_its_labels():
    config = {**CONFIG, "params": {**CONFIG["params"], "mode": "fast"}}
    assert render("{encoder.component} · {children} · {mode} · {component}", config, Words()) == (
        "encoder · keyword; semantic · Fast! · semantic"
    )
    assert render("{children.name}", {"component": "X", "params": {"children": [
        {"component": "B", "params": {"name": "a"}}, {"component": "B", "params": {"name": "b"}}]}}, Words()) == "a; b"


def test_long_lists_show_their_first_items_and_how_many_more():
    children = [{"component": f"C{n}"} for n in range(5)]
    assert render("{children}", {"component": "X", "params": {"children": children}}) == "C0, C1, C2 +2"


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
