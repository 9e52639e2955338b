"""Evaluation API: datasets (import a shared one or upload a BEIR zip), evaluations (start,
follow, read results and the report), and the comparison of pipelines."""

from __future__ import annotations

import mimetypes
from typing import Any

from django.http import FileResponse, Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from common.api import (
    INVALID,
    LANG_PARAMETER,
    Invalid,
    consent_response,
    get_for_owner,
    message_error,
    no_such,
    validated,
)
from common.i18n import translate
from knowledge.selectors import knowledge_base_get
from pipelines.playground import LanguageModelConsentNeeded
from pipelines.selectors import pipeline_get, pipeline_list
from rag.core.i18n import gettext_noop
from rag.evaluation import REPORT_FILES

from . import live, selectors, services
from .models import Evaluation, EvaluationDataset

# -- datasets -------------------------------------------------------------------------------------


@extend_schema_serializer(component_name="DroppedRecord")
class DroppedRecordSerializer(serializers.Serializer):
    file = serializers.CharField(help_text="The file in the dataset, e.g. scifact/corpus.jsonl.")
    line = serializers.IntegerField(allow_null=True)
    code = serializers.CharField(help_text="too_long (longer than the record limit), too_large, …")
    reason = serializers.CharField(help_text="Why, in the request's language.")


@extend_schema_serializer(component_name="EvaluationDataset")
class DatasetOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    source = serializers.CharField(help_text="shared:<name> or upload:<file name>.")
    language = serializers.CharField()
    knowledge_base = serializers.IntegerField(source="knowledge_base_id")
    document_count = serializers.IntegerField(help_text="Corpus documents (empty ones are not uploaded).")
    query_count = serializers.IntegerField(help_text="Queries with at least one relevant judgement.")
    has_answers = serializers.BooleanField(help_text="Whether queries carry reference answers.")
    promoted = serializers.SerializerMethodField(
        help_text="Whether its corpus was promoted to an ordinary knowledge base (listed, offered to pipelines, an "
                  "MCP tool); until then it stays under Evaluation.")
    status = serializers.SerializerMethodField(help_text="importing, indexing, ready or failed.")
    documents = serializers.SerializerMethodField(
        help_text="Knowledge-base documents: uploaded, ready, failed, in_progress.")
    error = serializers.SerializerMethodField(help_text="Why the import failed (empty unless status is failed).")
    dropped = serializers.SerializerMethodField(
        help_text='Records left out of the import: [{"file", "line", "code", "reason"}], in file order.')
    created_at = serializers.DateTimeField()

    def _state(self, dataset: EvaluationDataset) -> dict[str, Any]:
        known = self.context.setdefault("states", {})
        if dataset.pk not in known:
            known[dataset.pk] = selectors.dataset_state(dataset)
        return known[dataset.pk]

    def get_promoted(self, dataset: EvaluationDataset) -> bool:
        return not dataset.knowledge_base.evaluation_only

    def get_status(self, dataset: EvaluationDataset) -> str:
        return self._state(dataset)["status"]

    def get_documents(self, dataset: EvaluationDataset) -> dict[str, int]:
        state = self._state(dataset)
        return {key: state[key] for key in ("uploaded", "ready", "failed", "in_progress")}

    def get_error(self, dataset: EvaluationDataset) -> str:
        error = self._state(dataset)["error"]
        return translate(*error, self._language()) if isinstance(error, tuple) else error

    @extend_schema_field(DroppedRecordSerializer(many=True))
    def get_dropped(self, dataset: EvaluationDataset) -> list[dict[str, Any]]:
        language = self._language()
        return [{"file": row["file"], "line": row["line"], "code": row["code"],
                 "reason": translate(row["template"], row["context"], language)} for row in dataset.dropped]

    def _language(self) -> str | None:
        return getattr(self.context.get("request"), "LANGUAGE_CODE", None)


def _dataset(request: Request, dataset_id: int) -> EvaluationDataset:
    return get_for_owner(selectors.dataset_get, user=request.user, dataset_id=dataset_id)


def _dataset_data(dataset: EvaluationDataset, request: Request) -> dict[str, Any]:
    return DatasetOutputSerializer(selectors.dataset_get(user=request.user, dataset_id=dataset.pk),
                                   context={"request": request}).data


class DatasetListApi(APIView):
    """The user's evaluation datasets and where each import stands."""

    @extend_schema(operation_id="evaluation_datasets_list", responses=DatasetOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(DatasetOutputSerializer(selectors.dataset_list(user=request.user), many=True,
                                                context={"request": request}).data)


COUNT_MAX = 2**31 - 1
"""The largest count the database's integer columns hold (and far past any dataset)."""
ID_MAX = 2**63 - 1
"""The largest id a row may have."""


class SubsetFields(serializers.Serializer):
    max_queries = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=COUNT_MAX,
                                           default=None, help_text="Keep only the first N judged queries.")
    max_documents = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, max_value=COUNT_MAX, default=None,
        help_text="Keep every document judged for the kept queries, then leading documents up to N.")
    chunker = serializers.JSONField(required=False, allow_null=True, default=None,
                                    help_text="A chunker reference; empty keeps one chunk per document.")


class DatasetImportApi(APIView):
    """Import a dataset of the shared datasets folder by name. Its queries and judgements are
    stored at once; its corpus becomes a knowledge base in the background."""

    @extend_schema_serializer(component_name="EvaluationDatasetImport")
    class InputSerializer(SubsetFields):
        dataset = serializers.CharField(help_text="A name from datasets/available/, e.g. scifact.")
        name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="",
                                     help_text="Defaults to the dataset's name.")

    @extend_schema(operation_id="evaluation_datasets_import", request=InputSerializer, parameters=[LANG_PARAMETER],
                   responses={201: DatasetOutputSerializer, **INVALID})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        dataset = services.dataset_import_shared(
            owner=request.user, shared_name=data["dataset"], name=data["name"] or None,
            max_queries=data["max_queries"], max_documents=data["max_documents"], chunker=data["chunker"])
        return Response(_dataset_data(dataset, request), status=status.HTTP_201_CREATED)


class DatasetUploadApi(APIView):
    """Import a BEIR dataset uploaded as a zip: ``corpus.jsonl`` (or ``.gz``), ``queries.jsonl``
    and ``qrels/test.tsv``, at the archive's root or in one folder."""

    parser_classes = [MultiPartParser, FormParser]

    @extend_schema_serializer(component_name="EvaluationDatasetUpload")
    class InputSerializer(SubsetFields):
        name = serializers.CharField(max_length=200)
        file = serializers.FileField(help_text="The zip archive.")

    @extend_schema(operation_id="evaluation_datasets_upload", request={"multipart/form-data": InputSerializer},
                   parameters=[LANG_PARAMETER], responses={201: DatasetOutputSerializer, **INVALID})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        dataset = services.dataset_import_archive(
            owner=request.user, name=data["name"], archive=data["file"], max_queries=data["max_queries"],
            max_documents=data["max_documents"], chunker=data["chunker"])
        return Response(_dataset_data(dataset, request), status=status.HTTP_201_CREATED)


class SharedDatasetListApi(APIView):
    """The datasets that can be imported by name (the BEIR folders of TRELLIS_DATASETS_DIR)."""

    @extend_schema_serializer(component_name="SharedEvaluationDataset")
    class OutputSerializer(serializers.Serializer):
        name = serializers.CharField()
        title = serializers.CharField(help_text="The first heading of its README.")

    @extend_schema(operation_id="evaluation_datasets_available", responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        return Response(self.OutputSerializer(selectors.shared_dataset_list(), many=True).data)


class DatasetDetailApi(APIView):
    """One dataset and where its import stands."""

    @extend_schema(operation_id="evaluation_datasets_retrieve", responses=DatasetOutputSerializer)
    def get(self, request: Request, dataset_id: int) -> Response:
        return Response(DatasetOutputSerializer(_dataset(request, dataset_id), context={"request": request}).data)


class DatasetPromoteApi(APIView):
    """Make the dataset's corpus an ordinary knowledge base: it joins the knowledge base list,
    the pipeline editor's choice and the MCP tools. Evaluations go on using it."""

    @extend_schema(operation_id="evaluation_datasets_promote", request=None, responses=DatasetOutputSerializer)
    def post(self, request: Request, dataset_id: int) -> Response:
        dataset = services.dataset_promote(dataset=_dataset(request, dataset_id))
        return Response(_dataset_data(dataset, request))


class DatasetDeleteApi(APIView):
    """Delete a dataset and every evaluation run on it, with its knowledge base unless that was
    promoted."""

    @extend_schema(operation_id="evaluation_datasets_destroy", responses={204: None})
    def delete(self, request: Request, dataset_id: int) -> Response:
        services.dataset_delete(dataset=_dataset(request, dataset_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


# -- evaluations ----------------------------------------------------------------------------------


@extend_schema_serializer(component_name="EvaluatedPipeline")
class EvaluatedPipelineSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="What the results, the summary and the comparisons call it.")
    pipeline_id = serializers.IntegerField(allow_null=True)
    preset = serializers.CharField(allow_null=True, help_text="The preset's slug, for a preset.")
    display_name = serializers.CharField(help_text="How to show it: a preset's name in the request's language.")


@extend_schema_serializer(component_name="EvaluationProgress")
class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Steps run, over every pipeline.")
    total = serializers.IntegerField(help_text="Steps to run, over every pipeline: (queries + answers) × pipelines.")
    queries = serializers.IntegerField(help_text="Queries each pipeline searches.")
    answers = serializers.IntegerField(help_text="Of those, how many each pipeline also answers.")


@extend_schema_serializer(component_name="Evaluation")
class EvaluationOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    dataset = serializers.IntegerField(source="dataset_id")
    dataset_name = serializers.CharField(source="dataset.name")
    pipelines = serializers.SerializerMethodField(
        help_text='[{"name", "pipeline_id" or "preset", "display_name"}]: "name" is what the results and the summary '
                  "call it; \"display_name\" how to show it, a preset's name in the request's language.")
    status = serializers.ChoiceField(choices=Evaluation.Status.choices)
    progress = serializers.SerializerMethodField(
        help_text='{"done", "total", "queries", "answers"}: steps run and to run over every pipeline (each pipeline '
                  'searches "queries" queries, then answers the first "answers" of them).')
    query_limit = serializers.IntegerField(allow_null=True)
    depth = serializers.IntegerField(allow_null=True)
    answer_queries = serializers.IntegerField()
    seed = serializers.IntegerField()
    summary = serializers.SerializerMethodField(help_text="Per pipeline: averaged metrics and 95% CIs (when done).")
    report = serializers.SerializerMethodField(help_text="URLs of report.md, metrics.png, recall.png, results.json.")
    error = serializers.SerializerMethodField(help_text="Why it failed (empty unless failed), in the request's "
                                                        "language where the reason is one of Trellis's own.")
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_error(self, evaluation: Evaluation) -> str:
        # Stored in English; a reason Trellis itself gives whole ("crashed the server while
        # loading…") is a catalogue message, any other text comes back as it is.
        language = getattr(self.context.get("request"), "LANGUAGE_CODE", None)
        return translate(evaluation.error, {}, language, fallback=evaluation.error) if evaluation.error else ""

    @extend_schema_field(EvaluatedPipelineSerializer(many=True))
    def get_pipelines(self, evaluation: Evaluation) -> list[dict[str, Any]]:
        language = getattr(self.context.get("request"), "LANGUAGE_CODE", None)
        return [{**{key: entry.get(key) for key in ("name", "pipeline_id", "preset")},
                 "display_name": selectors.evaluated_pipeline_label(entry, language)}
                for entry in evaluation.pipelines]

    @extend_schema_field(ProgressSerializer)
    def get_progress(self, evaluation: Evaluation) -> dict[str, int]:
        return {"done": evaluation.progress_done, "total": evaluation.progress_total,
                **selectors.evaluation_steps(evaluation)}

    def get_summary(self, evaluation: Evaluation) -> list[dict[str, Any]]:
        return evaluation.summary

    def get_report(self, evaluation: Evaluation) -> dict[str, str] | None:
        if not evaluation.report_dir:
            return None
        request = self.context.get("request")
        return {kind: reverse("evaluation-report-file", args=[evaluation.pk, name], request=request)
                for kind, name in REPORT_FILES.items()}


@extend_schema_serializer(component_name="EvaluationDetail")
class EvaluationDetailSerializer(EvaluationOutputSerializer):
    results = serializers.JSONField(
        allow_null=True,
        help_text="The whole result: dataset, settings, per pipeline metrics, ci, recall_curve, latency_ms, "
                  "llm_calls_per_query, answers and per_query rows, and the pairwise comparisons.")


def _evaluation(request: Request, evaluation_id: int) -> Evaluation:
    return get_for_owner(selectors.evaluation_get, user=request.user, evaluation_id=evaluation_id)


class EvaluationListApi(APIView):
    """The user's evaluations, newest first, with progress and (when done) the averaged metrics."""

    @extend_schema(operation_id="evaluations_list", responses=EvaluationOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        evaluations = selectors.evaluation_list(user=request.user)
        return Response(EvaluationOutputSerializer(evaluations, many=True, context={"request": request}).data)


class EvaluationCreateApi(APIView):
    """Start an evaluation of saved pipelines and/or presets on a ready dataset; it runs in the
    background and reports its progress here and to the channel group ``evaluation-<id>``."""

    @extend_schema_serializer(component_name="EvaluationCreate")
    class InputSerializer(serializers.Serializer):
        dataset = serializers.IntegerField(min_value=1, max_value=ID_MAX)
        pipelines = serializers.ListField(child=serializers.IntegerField(min_value=1, max_value=ID_MAX), required=False,
                                          default=list,
                                          help_text="Ids of your saved pipelines (run over the dataset's corpus).")
        presets = serializers.ListField(child=serializers.CharField(), required=False, default=list,
                                        help_text="Retriever presets run by NaiveRAG: keyword, semantic, hybrid…")
        query_limit = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=COUNT_MAX,
                                               default=None,
                                               help_text="Evaluate only the first N queries.")
        depth = serializers.IntegerField(required=False, allow_null=True, min_value=1, max_value=1000, default=100,
                                         help_text="Results asked of each retriever at least; null keeps each retriever's "
                                                   "own top_k (omitted: 100, as BEIR evaluates).")
        answer_queries = serializers.IntegerField(
            required=False, min_value=0, max_value=COUNT_MAX, default=0,
            help_text="How many of the queries are also answered, for the answer metrics.")
        judge = serializers.JSONField(required=False, allow_null=True, default=None,
                                      help_text="An LLM reference that judges faithfulness of the answers.")
        seed = serializers.IntegerField(required=False, min_value=-(2**31), max_value=2**31 - 1, default=0)

    @extend_schema(operation_id="evaluations_create", request=InputSerializer, parameters=[LANG_PARAMETER],
                   responses={201: EvaluationOutputSerializer, **INVALID})
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        dataset = get_for_owner(selectors.dataset_get, user=request.user, dataset_id=data["dataset"],
                                missing=no_such("dataset", gettext_noop("no such dataset"), request.LANGUAGE_CODE))
        owned = {pipeline.pk: pipeline for pipeline in pipeline_list(user=request.user).filter(pk__in=data["pipelines"])}
        missing = [message_error(f"pipelines[{index}]", gettext_noop("no such pipeline"), "not_found", request.LANGUAGE_CODE)
                   for index, pipeline_id in enumerate(data["pipelines"]) if pipeline_id not in owned]
        if missing:
            raise Invalid(missing)
        evaluation = services.evaluation_create(
            owner=request.user, dataset=dataset, pipelines=[owned[pk] for pk in data["pipelines"]],
            presets=data["presets"], query_limit=data["query_limit"], depth=data["depth"],
            answer_queries=data["answer_queries"], judge=data["judge"], seed=data["seed"])
        evaluation = selectors.evaluation_get(user=request.user, evaluation_id=evaluation.pk)
        return Response(EvaluationOutputSerializer(evaluation, context={"request": request}).data,
                        status=status.HTTP_201_CREATED)


class EvaluationDetailApi(APIView):
    """One evaluation: progress, and when done the whole result and the report's URLs."""

    @extend_schema(operation_id="evaluations_retrieve", responses=EvaluationDetailSerializer)
    def get(self, request: Request, evaluation_id: int) -> Response:
        evaluation = _evaluation(request, evaluation_id)
        return Response(EvaluationDetailSerializer(evaluation, context={"request": request}).data)


class EvaluationDeleteApi(APIView):
    """Delete an evaluation and its report."""

    @extend_schema(operation_id="evaluations_destroy", responses={204: None})
    def delete(self, request: Request, evaluation_id: int) -> Response:
        services.evaluation_delete(evaluation=_evaluation(request, evaluation_id))
        return Response(status=status.HTTP_204_NO_CONTENT)


class EvaluationComparisonApi(APIView):
    """The pipelines of a finished evaluation side by side: each pair's difference per metric
    (A − B) with its 95% bootstrap interval and the p-values of the paired randomisation and
    paired bootstrap tests. Needs two or more pipelines."""

    @extend_schema_serializer(component_name="EvaluationComparison")
    class OutputSerializer(serializers.Serializer):
        evaluation = serializers.IntegerField()
        pipelines = serializers.JSONField(help_text="Per pipeline: name, queries, metrics and ci.")
        comparisons = serializers.JSONField(
            help_text='[{"a", "b", "queries", "metrics": {metric: {"mean_a", "mean_b", "difference", "ci", '
                      '"p_randomization", "p_bootstrap"}}}].')

    @extend_schema(operation_id="evaluations_comparison", responses={200: OutputSerializer, **INVALID})
    def get(self, request: Request, evaluation_id: int) -> Response:
        evaluation = _evaluation(request, evaluation_id)
        if len(evaluation.pipelines) < 2:
            raise Invalid([message_error(
                "pipelines", gettext_noop("a comparison needs an evaluation of two or more pipelines"),
                "single_pipeline", request.LANGUAGE_CODE)])
        if evaluation.status != Evaluation.Status.DONE:
            raise Invalid([message_error(
                "status", gettext_noop("the evaluation is {status}, not done"), "not_finished", request.LANGUAGE_CODE,
                status=evaluation.status)])
        body = {"evaluation": evaluation.pk,
                "pipelines": [{key: entry[key] for key in ("name", "queries", "metrics", "ci")}
                              for entry in evaluation.summary],
                "comparisons": evaluation.results.get("comparisons", [])}
        return Response(self.OutputSerializer(body).data)


class EvaluationReportFileApi(APIView):
    """A file of a finished evaluation's report: report.md, metrics.png, recall.png or results.json."""

    @extend_schema(operation_id="evaluations_report_file", responses={
        (200, "image/png"): OpenApiTypes.BINARY, (200, "text/markdown"): OpenApiTypes.STR,
        (200, "application/json"): OpenApiTypes.OBJECT})
    def get(self, request: Request, evaluation_id: int, name: str) -> FileResponse:
        path = selectors.evaluation_report_file(_evaluation(request, evaluation_id), name)
        if path is None:
            raise Http404
        content_type = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if name.endswith(".md"):
            content_type = "text/markdown; charset=utf-8"
        return FileResponse(open(path, "rb"), content_type=content_type)



@extend_schema_serializer(component_name="LiveQualityRequest")
class LiveQualityInputSerializer(serializers.Serializer):
    knowledge_base = serializers.IntegerField()
    retriever = serializers.JSONField(help_text="The retriever tree as edited.")
    baseline = serializers.JSONField(required=False, allow_null=True,
                                     help_text="The saved retriever tree: each metric's change is measured against it.")
    test_set = serializers.JSONField(help_text='{"dataset": <id>} or {"questions": [{"question", "documents"}]}.')
    limit = serializers.IntegerField(required=False, min_value=1, max_value=live.MAX_QUESTIONS,
                                     default=live.DEFAULT_QUESTIONS, help_text="Score the first N judged questions.")
    allow_llm = serializers.BooleanField(
        default=False, help_text="Score a tree that calls a language model (it costs time or money); otherwise 409.")


@extend_schema_serializer(component_name="LiveQuality")
class LiveQualityOutputSerializer(serializers.Serializer):
    questions = serializers.IntegerField()
    metrics = serializers.DictField(help_text="ndcg_at_10 and recall_at_10: {value, ci}.")
    change = serializers.DictField(allow_null=True, help_text=(
        "Against the baseline, per metric: {difference, ci, p_value, within_noise} (the interval holds 0)."))
    baseline = serializers.DictField(allow_null=True, help_text="The baseline's own metrics.")
    llm_calls = serializers.IntegerField()
    elapsed_ms = serializers.FloatField()


class LiveQualityApi(APIView):
    """Score a retriever tree on a test set as it is edited: nDCG@10 and Recall@10 with their
    95% intervals and, against the saved tree, each metric's change and whether it is within
    noise. Scores are kept per version, so the saved tree is scored once. Writes nothing."""

    @extend_schema(operation_id="evaluations_live", request=LiveQualityInputSerializer,
                   responses={200: LiveQualityOutputSerializer, 400: None, 409: None})
    def post(self, request: Request) -> Response:
        data = validated(LiveQualityInputSerializer, request.data)
        knowledge_base = get_for_owner(
            knowledge_base_get, user=request.user, knowledge_base_id=data["knowledge_base"],
            missing=no_such("knowledge_base", gettext_noop("no such knowledge base"), request.LANGUAGE_CODE))
        try:
            scores = live.tree_quality(owner=request.user, knowledge_base=knowledge_base, retriever=data["retriever"],
                                       baseline=data.get("baseline"), test_set=data["test_set"], limit=data["limit"],
                                       allow_llm=data["allow_llm"])
        except LanguageModelConsentNeeded as needed:
            return consent_response(needed.components, request.LANGUAGE_CODE)
        return Response(scores)


@extend_schema_serializer(component_name="PipelineTestSet")
class PipelineTestSetSerializer(serializers.Serializer):
    test_set = serializers.JSONField(allow_null=True, help_text=(
        '{"dataset": <id>} or {"questions": [{"question", "documents": [document ids]}]}; null: none.'))


class PipelineTestSetApi(APIView):
    """The test set the builder scores a pipeline's tree on: read, attach or replace, remove."""

    def _pipeline(self, request: Request, pipeline_id: int) -> Any:
        return get_for_owner(pipeline_get, user=request.user, pipeline_id=pipeline_id)

    @extend_schema(operation_id="pipelines_test_set_retrieve", responses=PipelineTestSetSerializer)
    def get(self, request: Request, pipeline_id: int) -> Response:
        return Response({"test_set": selectors.pipeline_test_set_get(pipeline=self._pipeline(request, pipeline_id))})

    @extend_schema(operation_id="pipelines_test_set_update", request=PipelineTestSetSerializer,
                   responses={200: PipelineTestSetSerializer, 400: None})
    def put(self, request: Request, pipeline_id: int) -> Response:
        pipeline = self._pipeline(request, pipeline_id)
        data = validated(PipelineTestSetSerializer, request.data)
        return Response({"test_set": live.pipeline_test_set_save(pipeline=pipeline, test_set=data["test_set"])})

    @extend_schema(operation_id="pipelines_test_set_destroy", responses={204: None})
    def delete(self, request: Request, pipeline_id: int) -> Response:
        live.pipeline_test_set_delete(pipeline=self._pipeline(request, pipeline_id))
        return Response(status=status.HTTP_204_NO_CONTENT)
