from django.contrib import admin

from .models import Pipeline


@admin.register(Pipeline)
class PipelineAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "knowledge_base", "updated_at")
    list_filter = ("owner",)
    search_fields = ("name",)
    readonly_fields = ("strategy", "created_at", "updated_at")
