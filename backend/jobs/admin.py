from django.contrib import admin

from .models import JobRun


@admin.register(JobRun)
class JobRunAdmin(admin.ModelAdmin):
    """Runs the server died in: what recovery will re-queue once more, or fail (``MAX_CRASHES``).
    Read-only: deleting a row forgets the crashes it counted."""

    list_display = ("subject", "task", "started", "last_started_at")
    search_fields = ("subject", "task")
    readonly_fields = ("subject", "task", "started", "last_started_at")

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False
