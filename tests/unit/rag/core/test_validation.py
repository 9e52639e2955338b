import pytest

from rag.core import ConfigValidationError, validate_or_raise, validate_tree

from .sample_components import registry

pytestmark = pytest.mark.unit

BROKEN_TREE = {
    "component": "Blend",
    "params": {
        "top_k": 0,
        "tpo_k": 3,
        "weights": [1.0],
        "children": [
            {"component": "Keyword", "params": {"top_k": "5", "k1": -1}},
            {"component": "Keywrod"},
            {"component": "Encoder"},
            {"component": "Rerank", "params": {"children": [{"component": "Keyword"}, {"component": "Keyword"}]}},
            {"component": "Semantic", "params": {"encoder": {"component": "Encoder", "params": {"device": "TPU"}}}},
            7,
        ],
    },
}


def test_a_broken_nested_tree_reports_every_error_with_its_json_path():
    config, errors = validate_tree(BROKEN_TREE, registry=registry, kind="retriever")
    assert config is None
    reported = {(error.path, error.message) for error in errors}
    assert reported == {
        ("params.children", "Blend takes between 1 and 4 retrievers"),
        ("params.top_k", "must be ≥ 1"),
        ("params.tpo_k", "is not a parameter of Blend (did you mean top_k?)"),
        ("params.children[0].params.top_k", "must be an integer"),
        ("params.children[0].params.k1", "must be ≥ 0.0"),
        ("params.children[1].component", "unknown component 'Keywrod'; did you mean Keyword?"),
        ("params.children[2].component", "expects a component of kind retriever; Encoder is of kind embedding"),
        ("params.children[3].params.children", "Rerank takes exactly 1 retriever"),
        ("params.children[4].params.encoder.params.device", "must be one of 'CPU' or 'CUDA'"),
        ("params.children[5]", 'must be an object like {"component": "<name>", "params": {...}}'),
    }


def test_a_cross_field_rule_reports_at_the_params_of_its_component():
    tree = {"component": "Blend", "params": {"children": [{"component": "Keyword"}], "weights": [0.5, 0.5]}}
    _, errors = validate_tree(tree, registry=registry)
    assert [(error.path, error.message) for error in errors] == [
        ("params", "weights has 2 values for 1 children")
    ]


def test_a_valid_tree_comes_back_with_every_default_filled():
    config = validate_or_raise({"component": "Blend", "params": {"top_k": 4}}, registry=registry)
    assert config == {
        "component": "Blend",
        "params": {
            "top_k": 4,
            "weights": None,
            "children": [
                {"component": "Keyword", "params": {"top_k": 10, "k1": 1.5}},
                {"component": "Semantic", "params": {
                    "top_k": 10, "encoder": {"component": "Encoder", "params": {"batch_size": 32, "device": "CPU"}},
                }},
            ],
        },
    }


def test_validate_or_raise_lists_every_error_in_the_exception():
    with pytest.raises(ConfigValidationError) as failure:
        validate_or_raise(BROKEN_TREE, registry=registry)
    assert len(failure.value.errors) == 10
    assert "params.children[0].params.k1: must be ≥ 0.0" in str(failure.value)


@pytest.mark.parametrize(
    ("tree", "path", "code"),
    [
        ({"params": {}}, "component", "missing"),
        ({"component": 3}, "component", "string_type"),
        ({"component": "Keyword", "params": []}, "params", "dict_type"),
        ({"component": "Keyword", "children": []}, "children", "unknown_key"),
        ("Keyword", "", "ref_type"),
    ],
)
def test_malformed_references_are_refused_at_their_path(tree, path, code):
    _, errors = validate_tree(tree, registry=registry)
    assert [(error.path, error.code) for error in errors] == [(path, code)]


def test_the_root_kind_is_checked():
    _, errors = validate_tree({"component": "Encoder"}, registry=registry, kind="retriever")
    assert errors[0].code == "wrong_kind"


def test_pathologically_deep_nesting_is_refused_without_recursing_forever():
    tree = {"component": "Keyword"}
    for _ in range(200):
        tree = {"component": "Rerank", "params": {"children": [tree]}}
    _, errors = validate_tree(tree, registry=registry)
    assert [error.code for error in errors] == ["too_deep"]
    assert errors[0].path.startswith("params.children[0]")


def test_a_tree_with_more_components_than_the_limit_is_refused_at_its_root():
    from rag.core.validation import MAX_NODES

    def blend(depth):  # a full 4-ary tree: 4**5 = 1024 leaves at depth 5
        if depth == 0:
            return {"component": "Keyword"}
        return {"component": "Blend", "params": {"children": [blend(depth - 1) for _ in range(4)]}}

    _, errors = validate_tree(blend(5), registry=registry, path="strategy.params.retriever")
    assert [(error.path, error.code, error.message) for error in errors] == [(
        "strategy.params.retriever", "too_many_nodes", f"has more than {MAX_NODES} components, the most a tree may have")]
    config, errors = validate_tree(blend(4), registry=registry)  # 341 components
    assert errors == [] and config is not None


def test_a_tree_that_contains_itself_is_refused_cleanly():
    """"Cycles by reference" cannot occur in a JSON tree: JSON has no references, so every
    tree the API receives is finite and acyclic (its depth and size are bounded instead). Only
    the Python API can pass a dict that contains itself; it is refused with the path of the
    repeated node, without a RecursionError."""
    tree = {"component": "Blend", "params": {"children": []}}
    tree["params"]["children"].append(tree)
    _, errors = validate_tree(tree, registry=registry)
    assert [(error.path, error.code) for error in errors] == [("params.children[0]", "cycle")]
    with pytest.raises(ConfigValidationError) as raised:
        validate_or_raise({"component": "Rerank", "params": {"children": [tree]}}, registry=registry)
    assert raised.value.errors[0].path == "params.children[0].params.children[0]"


def test_secret_values_are_kept_for_building_but_typed_strictly():
    config = validate_or_raise({"component": "ApiKey", "params": {"api_key": "sk-123"}}, registry=registry)
    assert config["params"]["api_key"] == "sk-123"
    _, errors = validate_tree({"component": "ApiKey", "params": {}}, registry=registry)
    assert [(error.path, error.message) for error in errors] == [("params.api_key", "is required")]


def test_availability_is_checked_only_when_asked_and_reported_at_the_component():
    tree = {"component": "Semantic", "params": {"encoder": {"component": "Encoder", "params": {"device": "CUDA"}}}}
    assert validate_tree(tree, registry=registry)[1] == []
    _, errors = validate_tree(tree, registry=registry, check_availability=True)
    assert [(error.path, error.code, error.message) for error in errors] == [
        ("params.encoder.component", "unavailable", "this machine has no CUDA device; choose CPU")
    ]
