from django.urls import path

from common.api import one_path

from . import apis

urlpatterns = [
    path("pipelines/", one_path("PipelineCollectionApi", apis.PipelineListApi, apis.PipelineCreateApi),
         name="pipeline-list"),
    path("pipelines/templates/", apis.PipelineTemplateListApi.as_view(), name="pipeline-templates"),
    path("pipelines/import/", apis.PipelineImportApi.as_view(), name="pipeline-import"),
    path("pipelines/<int:pipeline_id>/",
         one_path("PipelineItemApi", apis.PipelineDetailApi, apis.PipelineUpdateApi, apis.PipelineDeleteApi),
         name="pipeline-detail"),
    path("pipelines/<int:pipeline_id>/duplicate/", apis.PipelineDuplicateApi.as_view(), name="pipeline-duplicate"),
    path("pipelines/<int:pipeline_id>/export/", apis.PipelineExportApi.as_view(), name="pipeline-export"),
    path("pipelines/<int:pipeline_id>/playground/", apis.PipelinePlaygroundApi.as_view(), name="pipeline-playground"),
    path("knowledge-bases/<int:knowledge_base_id>/playground/", apis.KnowledgeBasePlaygroundApi.as_view(),
         name="knowledge-base-playground"),
]
