from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from . import services
from .models import Component, ComponentTranslation


class ComponentTranslationInline(admin.TabularInline):
    model = ComponentTranslation
    extra = 0
    fields = ("language", "display_name", "short_name", "description", "representation", "edited")
    readonly_fields = ("language", "edited")
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: Component | None = None) -> bool:
        return False


@admin.register(Component)
class ComponentAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "category", "icon", "composite", "available", "synced_at")
    list_filter = ("kind", "category", "available", "composite")
    search_fields = ("name", "translations__display_name")
    fields = (
        "name", "kind", "category", "icon", "icon_edited", "composite", "child_kind",
        "min_children", "max_children", "slots", "schema", "available", "synced_at",
    )
    readonly_fields = (
        "name", "kind", "category", "icon_edited", "composite", "child_kind",
        "min_children", "max_children", "slots", "schema", "available", "synced_at",
    )
    inlines = [ComponentTranslationInline]
    actions = ["reset_to_engine"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # rows come from the engine registry

    def save_model(self, request: HttpRequest, obj: Component, form, change: bool) -> None:
        if "icon" in form.changed_data:
            obj.icon_edited = True
        super().save_model(request, obj, form, change)

    def save_formset(self, request: HttpRequest, form, formset, change: bool) -> None:
        for inline_form in formset.forms:
            if inline_form.has_changed():
                inline_form.instance.edited = True
        super().save_formset(request, form, formset, change)

    @admin.action(description=_("Reset icon and texts to the engine's"))
    def reset_to_engine(self, request: HttpRequest, queryset: QuerySet[Component]) -> None:
        for component in queryset:
            services.component_reset_to_engine(component=component)
        self.message_user(request, _("Reset %(count)d component(s).") % {"count": queryset.count()}, messages.SUCCESS)
