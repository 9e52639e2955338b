from django.contrib import admin
from django.http import HttpRequest

from . import services
from .models import Evaluation, EvaluationDataset


@admin.register(EvaluationDataset)
class EvaluationDatasetAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "source", "language", "document_count", "query_count", "imported", "created_at")
    list_filter = ("language", "imported")
    search_fields = ("name", "owner__username", "source")
    list_select_related = ("owner",)
    fields = ("name", "owner", "source", "language", "knowledge_base", "document_count", "query_count", "has_answers",
              "imported", "error", "created_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # datasets are imported through the API, which reads and checks the files

    def delete_model(self, request: HttpRequest, obj: EvaluationDataset) -> None:
        services.dataset_delete(dataset=obj)


@admin.register(Evaluation)
class EvaluationAdmin(admin.ModelAdmin):
    list_display = ("id", "dataset", "owner", "status", "progress_done", "progress_total", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("dataset__name", "owner__username")
    list_select_related = ("dataset", "owner")
    fields = ("owner", "dataset", "pipelines", "query_limit", "depth", "answer_queries", "seed", "judge", "status",
              "progress_done", "progress_total", "error", "report_dir", "created_at", "started_at", "finished_at")
    readonly_fields = fields

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Evaluation) -> None:
        services.evaluation_delete(evaluation=obj)
