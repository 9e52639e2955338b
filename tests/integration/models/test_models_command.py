"""``manage.py models``: the acceptance path (install a folder as tiny-ce, then a pipeline naming
it validates and answers), listing, hub installs, offline refusal and removal."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.test import override_settings
from django.urls import reverse

import jobs
from knowledge.services import documents_upload, knowledge_base_create
from models.models import ModelInstall
from rag.strategies.traces import retriever_nodes

from .conftest import REPO, zip_of

pytestmark = [pytest.mark.integration, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def run(*arguments: str) -> str:
    output = StringIO()
    call_command("models", *arguments, stdout=output)
    return output.getvalue()


def pipeline_naming(model_name: str) -> dict:
    return {"component": "NaiveRAG", "params": {
        "retriever": {"component": "SentenceTransformerCrossEncoderRetriever", "params": {
            "model_name": model_name, "top_k": 2,
            "children": [{"component": "BM25Retriever", "params": {"top_k": 5}}]}},
        "response_synthesizer": {"component": "ResponseSynthesizer", "params": {
            "llm": {"component": "LocalLLM", "params": {"model": "smollm2-135m-instruct", "max_tokens": 48}}}},
    }}


def test_a_folder_installed_as_tiny_ce_is_named_by_a_pipeline_that_validates_and_answers(
        api, owner, tiny_model_folders, tmp_path):
    missing = api.post(reverse("component-validate"), {"tree": pipeline_naming("tiny-ce"), "kind": "strategy"},
                       content_type="application/json")
    assert missing.status_code == 200 and missing.json()["valid"] is False
    (error,) = missing.json()["errors"]
    assert error["path"] == "params.retriever.component" and error["code"] == "unavailable"
    assert "Models page" in error["message"]
    assert "manage.py" not in error["message"]
    assert error["action"] == {"code": "install_model", "params": {"kind": "cross-encoder", "model": "tiny-ce"}}

    printed = run("install", tiny_model_folders["cross-encoder"], "--kind", "cross-encoder", "--name", "tiny-ce")
    assert "Installed tiny-ce (cross-encoder" in printed and "pipelines name it 'tiny-ce'" in printed
    install = ModelInstall.objects.get()
    assert install.owner is None and install.source == "folder" and install.status == ModelInstall.Status.READY

    knowledge_base = knowledge_base_create(owner=owner, name="Quillon")
    documents_upload(knowledge_base=knowledge_base, files=[SimpleUploadedFile("festival.txt", (
        b"The Zorblax lantern festival is held in Quillon every March.\n\n"
        b"The Vell river floods the lower quarter when the snow melts."))])
    assert jobs.wait_until_idle(180)
    created = api.post(reverse("pipeline-list"), {"name": "Re-ranked", "knowledge_base": knowledge_base.pk,
                                                  "strategy": pipeline_naming("tiny-ce")},
                       content_type="application/json")
    assert created.status_code == 201, created.content

    document = tmp_path / "re-ranked.json"
    document.write_text(json.dumps({"name": "Re-ranked", "version": 1, "strategy": pipeline_naming("tiny-ce")}))
    answer = StringIO()
    call_command("ask", "When is the lantern festival held?", "--pipeline", str(document), "--knowledge-base",
                 "Quillon", "--json", stdout=answer)
    state = json.loads(answer.getvalue())
    assert state["answer"].strip()
    nodes = list(retriever_nodes(state["trace"]))
    assert [node["class"] for node in nodes] == ["SentenceTransformerCrossEncoderRetriever", "BM25Retriever"]
    assert nodes[0]["params"]["model_name"] == "tiny-ce" and 1 <= len(nodes[0]["results"]) <= 2
    assert all(0 < row["score"] < 1 for row in nodes[0]["results"]) and state["chunks"]


def test_models_list_shows_every_kind_and_json_lists_the_installed_ones(tiny_model_folders):
    run("install", tiny_model_folders["embedding"], "--kind", "embedding", "--name", "tiny-embed")
    printed = run("list")
    for line in ("embedding", "  all-minilm-l6-v2-int8", "  tiny-embed", "llm", "  qwen2.5-0.5b-instruct"):
        assert line in printed, printed
    listed = json.loads(run("list", "--kind", "embedding", "--json"))
    assert {model["name"] for model in listed} >= {"tiny-embed", "all-minilm-l6-v2-int8"}
    assert {model["kind"] for model in listed} == {"embedding"}


def test_a_hub_id_and_a_zip_install_from_the_command_line(hub, tiny_model_folders, tmp_path):
    printed = run("install", REPO, "--kind", "cross-encoder")
    assert "Installing tiny-ce (cross-encoder) from hub acme/tiny-ce" in printed and "Installed tiny-ce" in printed
    archive = zip_of(tiny_model_folders["cross-encoder"], tmp_path / "zipped-ce.zip")
    assert "Installed zipped-ce" in run("install", str(archive), "--kind", "cross-encoder")
    assert {model["name"] for model in json.loads(run("list", "--kind", "cross-encoder", "--json"))} == {
        "tiny-ce", "zipped-ce"}
    assert "Removed tiny-ce" in run("remove", "tiny-ce")
    with pytest.raises(CommandError, match="no model named 'tiny-ce' is installed"):
        run("remove", "tiny-ce")


def test_a_failed_install_exits_with_the_reason(hub):
    with pytest.raises(CommandError, match="has no model acme/missing"):
        run("install", "acme/missing", "--kind", "cross-encoder")
    assert ModelInstall.objects.get().status == ModelInstall.Status.FAILED


@override_settings(TRELLIS_OFFLINE=True)
def test_an_offline_server_refuses_a_hub_install_from_the_command_line(hub):
    with pytest.raises(CommandError, match=r"offline \(TRELLIS_OFFLINE=1\)"):
        run("install", REPO, "--kind", "cross-encoder")
    assert hub.requests == []
