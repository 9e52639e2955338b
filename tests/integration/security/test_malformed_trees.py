"""Malformed retriever trees and JSON bodies through the API: every one is a 400 with the path
of the problem, never a 500."""

import pytest
from django.urls import reverse

from knowledge.services import knowledge_base_create
from pipelines.models import Pipeline
from rag.core.validation import MAX_DEPTH, MAX_NODES

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

ROOT = "strategy.params.retriever"


def bm25(**params):
    return {"component": "BM25Retriever", "params": params}


def nested(levels):
    node = bm25()
    for _ in range(levels):
        node = {"component": "EnsembleRetriever", "params": {"children": [node, bm25()]}}
    return node


MALFORMED = {
    # name: (tree, expected (path below the retriever, code) pairs, each matching the start of a
    # reported error's path; "" is the root of the tree)
    "nested deeper than the limit": (nested(MAX_DEPTH + 8), {(".params.children[0]" * (MAX_DEPTH - 2), "too_deep")}),
    "more components than the limit": ({"component": "EnsembleRetriever", "params": {
        "children": [bm25() for _ in range(MAX_NODES + 1)]}}, {("", "too_many_nodes")}),
    "a huge top_k": (bm25(top_k=10 ** 30), {(".params.top_k", "less_than_equal")}),
    "a top_k of the wrong type": (bm25(top_k="ten"), {(".params.top_k", "int_type")}),
    "a float top_k": (bm25(top_k=2.5), {(".params.top_k", "int_type")}),
    "children that are not a list": ({"component": "EnsembleRetriever", "params": {"children": "all"}},
                                     {(".params.children", "list_type")}),
    "params that are not an object": ({"component": "BM25Retriever", "params": [1, 2]}, {(".params", "dict_type")}),
    "a component name that is not a string": ({"component": 7}, {(".component", "string_type")}),
    "an unknown component": ({"component": "BM52Retriever"}, {(".component", "unknown_component")}),
    "a child that is a number": ({"component": "EnsembleRetriever", "params": {"children": [bm25(), 3]}},
                                 {(".params.children[1]", "ref_type")}),
}


@pytest.fixture
def knowledge_base(user):
    return knowledge_base_create(owner=user, name="Notes")


@pytest.fixture
def api(client, user):
    client.force_login(user)
    return client


@pytest.mark.parametrize("name", list(MALFORMED))
def test_a_malformed_tree_is_refused_on_save_and_reported_by_validation_with_paths(api, knowledge_base, name):
    tree, expected = MALFORMED[name]
    saved = api.post(reverse("pipeline-list"), {"name": name, "knowledge_base": knowledge_base.pk, "strategy": {
        "component": "NaiveRAG", "params": {"retriever": tree}}}, content_type="application/json")
    assert saved.status_code == 400, saved.content[:500]
    # A node-count refusal concerns the whole pipeline tree, so it sits at the tree's root.
    expect_reported(saved.json()["errors"], {(ROOT + path if path else "strategy", code) for path, code in expected})

    checked = api.post(reverse("component-validate"), {"tree": tree, "kind": "retriever"},
                       content_type="application/json")
    # The validation ran and found the problems: an answer, not a refused request.
    assert checked.status_code == 200, checked.content[:500]
    assert checked.json()["valid"] is False and checked.json()["config"] is None
    expect_reported(checked.json()["errors"], {(path.removeprefix("."), code) for path, code in expected})
    assert not Pipeline.objects.exists()


def expect_reported(errors, expected):
    for prefix, code in expected:
        assert any(error["code"] == code and error["path"].startswith(prefix) for error in errors), (
            f"no {code} error at {prefix or 'the root'!r} among {[(e['path'][:80], e['code']) for e in errors]}")
    assert all(error["message"] and "Traceback" not in error["message"] for error in errors)


@pytest.mark.parametrize("body", [
    "[" * 100_000 + "]" * 100_000,
    '{"tree": ' * 50_000 + "1" + "}" * 50_000,
    '{"name": "x", "strategy": {"component": "NaiveRAG"',
    "\x00",
])
@pytest.mark.parametrize("url", ["component-validate", "pipeline-list", "knowledge-base-list", "conversation-list"])
def test_a_body_that_is_not_usable_json_is_a_400(api, body, url):
    response = api.post(reverse(url), body, content_type="application/json")
    assert response.status_code == 400, response.content[:300]
    assert "JSON parse error" in response.json()["detail"]
