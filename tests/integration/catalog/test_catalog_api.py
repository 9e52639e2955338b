import pytest
from django.urls import reverse

from catalog.models import Component, ComponentTranslation
from catalog.services import component_sync_all
from rag.components import load_components

pytestmark = [pytest.mark.integration, pytest.mark.django_db]

registry = load_components()
SAMPLE = sorted(registry, key=lambda component: component.NAME)[0]


def by_name(rows):
    return {row["name"]: row for row in rows}


def test_the_catalog_holds_every_registered_component_after_migrate(client):
    rows = by_name(client.get(reverse("component-list")).json())
    assert set(rows) == set(registry.names())
    sample = rows[SAMPLE.NAME]
    assert sample["kind"] == SAMPLE.KIND
    assert sample["icon"] == SAMPLE.ICON
    assert sample["display_name"] == SAMPLE.DISPLAY_NAME.get("en")


@pytest.mark.parametrize(
    ("headers", "query", "language"),
    [
        ({"HTTP_ACCEPT_LANGUAGE": "es"}, "", "es"),
        ({"HTTP_ACCEPT_LANGUAGE": "es-CL,es;q=0.9"}, "", "es"),
        ({"HTTP_ACCEPT_LANGUAGE": "zh-Hant"}, "", "zh-Hant"),
        ({"HTTP_ACCEPT_LANGUAGE": "zh-TW"}, "", "zh-Hant"),
        ({"HTTP_ACCEPT_LANGUAGE": "es"}, "?lang=zh-Hant", "zh-Hant"),
        ({}, "?lang=es", "es"),
        ({"HTTP_ACCEPT_LANGUAGE": "fr"}, "", "en"),
    ],
)
def test_texts_follow_accept_language_or_the_lang_parameter(client, headers, query, language):
    response = client.get(reverse("component-list") + query, **headers)
    row = by_name(response.json())[SAMPLE.NAME]
    assert row["display_name"] == SAMPLE.DISPLAY_NAME.get(language)
    assert row["description"] == SAMPLE.DESCRIPTION.get(language)
    assert response.headers["Content-Language"].lower() == language.lower()


def test_list_filters_by_kind_and_refuses_an_unknown_kind(client):
    rows = client.get(reverse("component-list"), {"kind": SAMPLE.KIND}).json()
    assert rows and {row["kind"] for row in rows} == {SAMPLE.KIND}
    response = client.get(reverse("component-list"), {"kind": "gizmo"})
    assert response.status_code == 400
    assert "kind" in response.json()


def test_list_costs_the_same_number_of_queries_whatever_the_catalog_size(client, django_assert_max_num_queries):
    with django_assert_max_num_queries(2):
        client.get(reverse("component-list"))


def test_detail_carries_the_schema_with_translated_titles(client):
    response = client.get(reverse("component-detail", args=[SAMPLE.NAME]), HTTP_ACCEPT_LANGUAGE="zh-Hant")
    assert response.status_code == 200
    schema = response.json()["schema"]
    assert schema["title"] == SAMPLE.DISPLAY_NAME.get("zh-Hant")
    expected = SAMPLE.get_schema()["properties"]
    for name, prop in schema["properties"].items():
        assert prop["title"] == expected[name]["x-i18n"]["title"]["zh-Hant"]
    assert "x-i18n" not in response.content.decode()


def test_detail_of_an_unknown_component_is_404(client):
    assert client.get(reverse("component-detail", args=["NoSuchThing"])).status_code == 404


def test_validate_answers_an_invalid_tree_with_200_and_every_error_at_its_path_translated(api):
    tree = {"component": SAMPLE.NAME, "params": {"no_such_param": 1}}
    response = api.post(reverse("component-validate"), {"tree": tree}, content_type="application/json",
                           HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is False
    assert body["config"] is None and body["nodes"] == []
    assert [(error["path"], error["code"]) for error in body["errors"]] == [("params.no_such_param", "unknown_parameter")]
    assert body["errors"][0]["message"] == f"no es un parámetro de {SAMPLE.NAME}"


@pytest.mark.parametrize(("language", "expected"), [
    ("en", {"params.retriever": "Add a retriever here",
            "params.retriever.params.children": "Fusion needs at least 2 retrievers"}),
    ("es", {"params.retriever": "Añade aquí un recuperador",
            "params.retriever.params.children": "Fusión necesita al menos 2 recuperadores"}),
    ("zh-Hant", {"params.retriever": "請在此加入檢索器",
                 "params.retriever.params.children": "「融合」至少需要 2 個檢索器"}),
])
def test_validation_says_what_to_do_in_the_requests_language(api, language, expected):
    def problems(tree):
        body = api.post(reverse("component-validate"), {"tree": tree, "kind": "strategy"},
                           content_type="application/json", HTTP_ACCEPT_LANGUAGE=language).json()
        return {error["path"]: error["message"] for error in body["errors"]}

    assert problems({"component": "NaiveRAG", "params": {"retriever": None}}) == {
        "params.retriever": expected["params.retriever"]}
    fusion = {"component": "EnsembleRetriever", "params": {"children": [{"component": "BM25Retriever"}]}}
    assert problems({"component": "NaiveRAG", "params": {"retriever": fusion}}) == {
        "params.retriever.params.children": expected["params.retriever.params.children"]}


def test_an_unknown_component_is_only_compared_with_what_the_slot_takes(api):
    tree = {"component": "NaiveRAG", "params": {"retriever": {"component": "WebSearchRetriever"}}}
    body = api.post(reverse("component-validate"), {"tree": tree, "kind": "strategy"},
                       content_type="application/json").json()
    [error] = body["errors"]
    assert error["code"] == "unknown_component"
    # WebSearchAPIRetriever is the closest name, but a web retriever cannot stand where a retriever goes.
    assert "WebSearchAPIRetriever" not in error["message"] and "did you mean" in error["message"]


def test_validate_reports_a_wrong_root_kind_and_refuses_a_request_without_a_tree(api):
    response = api.post(reverse("component-validate"), {"tree": {"component": SAMPLE.NAME}, "kind": "strategy"},
                           content_type="application/json")
    assert response.status_code == 200
    assert response.json()["errors"][0]["code"] == "wrong_kind"
    malformed = api.post(reverse("component-validate"), {}, content_type="application/json")
    assert malformed.status_code == 400
    assert [error["path"] for error in malformed.json()["errors"]] == ["tree"]


def test_validate_renders_the_representation_of_a_valid_tree(api):
    response = api.post(reverse("component-validate"), {"tree": {"component": SAMPLE.NAME}},
                           content_type="application/json", HTTP_ACCEPT_LANGUAGE="es")
    assert response.status_code == 200
    body = response.json()
    assert body["valid"] is True
    assert body["config"]["component"] == SAMPLE.NAME
    node = body["nodes"][0]
    assert node["path"] == ""
    assert node["representation"] == SAMPLE(**body["config"]["params"]).render_representation("es")


def test_nested_components_read_as_short_names_and_values_as_labels_in_the_requests_language(api):
    tree = {"component": "EnsembleRetriever", "params": {"children": [
        {"component": "BM25Retriever"}, {"component": "DenseEmbeddingRetriever"}]}}
    expected = {"en": "Fusion · RRF · BM25, Dense · top 10", "es": "Fusión · RRF · BM25, Denso · 10 mejores",
                "zh-Hant": "融合 · RRF · BM25、稠密 · 前 10 名"}
    for language, representation in expected.items():
        body = api.post(reverse("component-validate"), {"tree": tree}, content_type="application/json",
                           HTTP_ACCEPT_LANGUAGE=language).json()
        assert body["nodes"][0]["representation"] == representation
    dense = by_name(api.get(reverse("component-list"), HTTP_ACCEPT_LANGUAGE="es").json())["DenseEmbeddingRetriever"]
    assert dense["short_name"] == "Denso"
    assert dense["value_labels"]["similarity_metric"] == {"cosine": "coseno", "l2": "L2", "ip": "producto interno"}


def test_an_admins_short_name_shows_in_the_representations_of_the_nodes_around_it(api):
    bm25 = Component.objects.get(name="BM25Retriever").translations.get(language="en")
    bm25.short_name, bm25.edited = "Keywords", True
    bm25.save()
    tree = {"component": "EnsembleRetriever", "params": {"children": [
        {"component": "BM25Retriever"}, {"component": "DenseEmbeddingRetriever"}]}}
    body = api.post(reverse("component-validate"), {"tree": tree}, content_type="application/json").json()
    assert body["nodes"][0]["representation"] == "Fusion · RRF · Keywords, Dense · top 10"


def test_sync_is_idempotent_and_keeps_what_an_admin_edited():
    assert component_sync_all().created == 0
    assert str(component_sync_all()) == "0 created, 0 updated, 0 retired"
    row = Component.objects.get(name=SAMPLE.NAME)
    row.icon, row.icon_edited = "star", True
    row.save()
    spanish = row.translations.get(language="es")
    spanish.display_name, spanish.edited = "Nombre del admin", True
    spanish.save()
    english = row.translations.get(language="en")
    english.display_name = "Stale text nobody edited"
    english.save()

    component_sync_all()

    row.refresh_from_db()
    assert row.icon == "star"
    assert row.translations.get(language="es").display_name == "Nombre del admin"
    assert row.translations.get(language="en").display_name == SAMPLE.DISPLAY_NAME.get("en")


def test_components_the_engine_dropped_are_retired_not_deleted(client):
    ghost = Component.objects.create(name="RetiredThing", kind="retriever", category="x", icon="x", schema={})
    ComponentTranslation.objects.create(component=ghost, language="en", display_name="Old", description="Old")
    assert component_sync_all().retired == 1
    ghost.refresh_from_db()
    assert ghost.available is False
    assert "RetiredThing" not in by_name(client.get(reverse("component-list")).json())


def test_admin_edits_are_flagged_so_sync_keeps_them(client, admin_user):
    client.force_login(admin_user)
    row = Component.objects.get(name=SAMPLE.NAME)
    page = client.get(reverse("admin:catalog_component_change", args=[row.pk]))
    assert page.status_code == 200
    translations = list(row.translations.order_by("language"))
    form = {
        "icon": "wand",
        "translations-TOTAL_FORMS": str(len(translations)),
        "translations-INITIAL_FORMS": str(len(translations)),
        "translations-MIN_NUM_FORMS": "0",
        "translations-MAX_NUM_FORMS": "1000",
    }
    for index, translation in enumerate(translations):
        form[f"translations-{index}-id"] = str(translation.pk)
        form[f"translations-{index}-component"] = str(row.pk)
        form[f"translations-{index}-display_name"] = translation.display_name
        form[f"translations-{index}-short_name"] = translation.short_name
        form[f"translations-{index}-description"] = translation.description
        form[f"translations-{index}-representation"] = translation.representation
    spanish_index = [t.language for t in translations].index("es")
    form[f"translations-{spanish_index}-display_name"] = "Editado"
    response = client.post(reverse("admin:catalog_component_change", args=[row.pk]), form)
    assert response.status_code == 302, response.content.decode()[:2000]
    row.refresh_from_db()
    assert (row.icon, row.icon_edited) == ("wand", True)
    edited = {t.language: t.edited for t in row.translations.all()}
    assert edited == {"en": False, "es": True, "zh-Hant": False}
    component_sync_all()
    assert Component.objects.get(name=SAMPLE.NAME).translations.get(language="es").display_name == "Editado"


def test_presets_are_valid_trees_with_hybrid_as_the_default_and_say_what_cannot_run(client):
    rows = {row["name"]: row for row in client.get(reverse("component-presets"), HTTP_ACCEPT_LANGUAGE="es").json()}
    assert set(rows) == {"keyword", "semantic", "hybrid", "hybrid-llm-rerank", "hybrid-cross-encoder", "agentic"}
    assert [name for name, row in rows.items() if row["default"]] == ["hybrid"]
    assert rows["hybrid"]["display_name"] == "Híbrido"
    assert rows["hybrid"]["tree"]["component"] == "EnsembleRetriever"
    assert rows["hybrid"]["tree"]["params"]["rrf_k"] == 60  # normalised, defaults filled
    # The hybrid's keyword child stems in the knowledge base's language; the Keyword preset counts
    # words as written, as rank-bm25 does.
    keyword_child = rows["hybrid"]["tree"]["params"]["children"][0]
    assert keyword_child["component"] == "BM25Retriever"
    assert keyword_child["params"]["vectorizer"]["params"]["stemmer"] == "auto"
    assert rows["keyword"]["tree"]["params"]["vectorizer"]["params"]["stemmer"] == "none"
    for name in ("keyword", "semantic", "hybrid", "hybrid-llm-rerank", "agentic"):
        assert rows[name]["available"], rows[name]["unavailable_reason"]
    # No package ships cross-encoder weights, so this machine cannot run that preset.
    assert rows["hybrid-cross-encoder"]["available"] is False
    assert "cross-encoder/ms-marco-MiniLM-L-6-v2" in rows["hybrid-cross-encoder"]["unavailable_reason"]
