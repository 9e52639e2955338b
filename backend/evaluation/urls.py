from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path("evaluations/", one_path("EvaluationCollectionApi", apis.EvaluationListApi, apis.EvaluationCreateApi),
         name="evaluation-list"),
    path("evaluations/datasets/", one_path("EvaluationDatasetCollectionApi", apis.DatasetListApi,
                                           apis.DatasetImportApi), name="evaluation-dataset-list"),
    path("evaluations/datasets/available/", apis.SharedDatasetListApi.as_view(), name="evaluation-dataset-available"),
    path("evaluations/datasets/upload/", apis.DatasetUploadApi.as_view(), name="evaluation-dataset-upload"),
    path("evaluations/datasets/<int:dataset_id>/",
         one_path("EvaluationDatasetItemApi", apis.DatasetDetailApi, apis.DatasetDeleteApi),
         name="evaluation-dataset-detail"),
    path("evaluations/datasets/<int:dataset_id>/promote/", apis.DatasetPromoteApi.as_view(),
         name="evaluation-dataset-promote"),
    path("evaluations/live/", apis.LiveQualityApi.as_view(), name="evaluation-live"),
    path("pipelines/<int:pipeline_id>/test-set/", apis.PipelineTestSetApi.as_view(), name="pipeline-test-set"),
    path("evaluations/<int:evaluation_id>/",
         one_path("EvaluationItemApi", apis.EvaluationDetailApi, apis.EvaluationDeleteApi), name="evaluation-detail"),
    path("evaluations/<int:evaluation_id>/comparison/", apis.EvaluationComparisonApi.as_view(),
         name="evaluation-comparison"),
    path("evaluations/<int:evaluation_id>/report/<str:name>", apis.EvaluationReportFileApi.as_view(),
         name="evaluation-report-file"),
]
