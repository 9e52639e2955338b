from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from . import services
from .models import Document, KnowledgeBase, VectorIndex


class ReadOnlyAdmin(admin.ModelAdmin):
    """Rows the services own: shown, never added or edited by hand."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj=None) -> bool:
        return False


@admin.register(KnowledgeBase)
class KnowledgeBaseAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "language", "evaluation_only", "created_at")
    list_filter = ("language", "evaluation_only")
    search_fields = ("name", "owner__username")
    list_select_related = ("owner",)
    fields = ("name", "description", "owner", "language", "chunker", "embedding_model", "content_version",
              "created_at", "updated_at")
    readonly_fields = ("owner", "language", "chunker", "embedding_model", "content_version", "created_at", "updated_at")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # knowledge bases are created through the API, which validates the components

    def save_model(self, request: HttpRequest, obj: KnowledgeBase, form, change: bool) -> None:
        services.knowledge_base_update(
            knowledge_base=obj, name=form.cleaned_data["name"], description=form.cleaned_data["description"]
        )

    def delete_model(self, request: HttpRequest, obj: KnowledgeBase) -> None:
        services.knowledge_base_delete(knowledge_base=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[KnowledgeBase]) -> None:
        for knowledge_base in queryset:
            services.knowledge_base_delete(knowledge_base=knowledge_base)


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ("name", "knowledge_base", "status", "chunk_count", "updated_at")
    list_filter = ("status",)
    search_fields = ("name",)
    list_select_related = ("knowledge_base",)
    readonly_fields = [field.name for field in Document._meta.fields]
    actions = ["retry_ingestion"]

    def delete_model(self, request: HttpRequest, obj: Document) -> None:
        services.document_delete(document=obj)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        for document in queryset:
            services.document_delete(document=document)

    @admin.action(description=_("Retry ingestion"))
    def retry_ingestion(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        count = 0
        for document in queryset:
            services.document_requeue(document=document)
            count += 1
        self.message_user(request, _("Queued %(count)d document(s) for ingestion.") % {"count": count}, messages.SUCCESS)


@admin.register(VectorIndex)
class VectorIndexAdmin(ReadOnlyAdmin):
    list_display = ("knowledge_base", "model_key", "metric", "status", "updated_at")
    list_filter = ("status", "metric")
    list_select_related = ("knowledge_base",)
    readonly_fields = [field.name for field in VectorIndex._meta.fields]

    def has_delete_permission(self, request: HttpRequest, obj=None) -> bool:
        return False
