"""The models admin: every install request with where it stands; adding one registers a folder
on the server (or installs from the hub), through the same services as the API; an action
removes installed models."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from common.i18n import translate
from rag.core import ConfigValidationError
from rag.models_manager import INSTALLABLE_KINDS

from . import services
from .models import ModelInstall


class ModelInstallForm(forms.ModelForm):
    """Asks for what an install needs; saving validates it as the API does."""

    source = forms.ChoiceField(label=_("source"), choices=[(ModelInstall.Source.FOLDER, _("Local folder")),
                                                         (ModelInstall.Source.HUB, _("Hugging Face Hub"))])
    kind = forms.ChoiceField(label=_("kind"), choices=[(kind, kind) for kind in INSTALLABLE_KINDS])
    name = forms.CharField(label=_("name"), required=False, max_length=100,
                           help_text=_("What pipelines will name it; empty takes the folder's or the id's last part."))

    class Meta:
        model = ModelInstall
        fields = ["source", "reference", "kind", "name", "revision", "copy"]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        if self.errors:
            return data
        request = self.request  # set by the admin below
        try:
            self.instance = services.model_install_request(
                owner=request.user, source=data.get("source", ""), kind=data.get("kind", ""),
                reference=data.get("reference", ""), name=data.get("name") or None,
                revision=data.get("revision") or "", copy=bool(data.get("copy")), queue=True)
            # The form writes its fields back onto the instance: let them be what was recorded.
            data.update(name=self.instance.name, reference=self.instance.reference, revision=self.instance.revision)
        except ConfigValidationError as exc:
            for error in exc.errors:
                field = error.path if error.path in self.fields else None
                self.add_error(field, translate(error.template, error.context, request.LANGUAGE_CODE,
                                                fallback=error.message))
        return data


@admin.register(ModelInstall)
class ModelInstallAdmin(admin.ModelAdmin):
    list_display = ("name", "kind", "source", "reference", "status", "progress", "size", "owner", "created_at")
    list_filter = ("status", "kind", "source")
    search_fields = ("name", "reference")
    ordering = ("-created_at",)
    actions = ["remove_installed_models"]
    readonly_fields = ("owner", "status", "bytes_done", "bytes_total", "size", "error", "error_code", "archive",
                       "created_at", "started_at", "finished_at")

    def get_form(self, request: HttpRequest, obj: ModelInstall | None = None, change: bool = False,
                 **kwargs: Any) -> type[forms.ModelForm]:
        if obj is not None:
            return super().get_form(request, obj, change=change, **kwargs)
        form = super().get_form(request, obj, change=change, form=ModelInstallForm, **kwargs)
        form.request = request
        return form

    def get_fields(self, request: HttpRequest, obj: ModelInstall | None = None) -> list[str]:
        if obj is None:
            return ["source", "reference", "kind", "name", "revision", "copy"]
        return ["name", "kind", "source", "reference", "revision", "copy", *self.readonly_fields]

    def get_readonly_fields(self, request: HttpRequest, obj: ModelInstall | None = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return ("name", "kind", "source", "reference", "revision", "copy", *self.readonly_fields)

    def save_model(self, request: HttpRequest, obj: ModelInstall, form: forms.ModelForm, change: bool) -> None:
        # A new install was recorded and queued by the form's validation (the services); an
        # existing one has nothing left to edit.
        return None

    def has_delete_permission(self, request: HttpRequest, obj: ModelInstall | None = None) -> bool:
        return False  # the history stays; the action below removes the model itself

    @admin.display(description=_("progress"))
    def progress(self, install: ModelInstall) -> str:
        if not install.bytes_total:
            return "—"
        return f"{100 * install.bytes_done / install.bytes_total:.0f}%"

    @admin.action(description=_("Remove the selected installed models from the server"))
    def remove_installed_models(self, request: HttpRequest, queryset: QuerySet[ModelInstall]) -> None:
        removed = 0
        for name in sorted(set(queryset.filter(status=ModelInstall.Status.READY).values_list("name", flat=True))):
            try:
                services.model_remove(name=name, user=request.user)
                removed += 1
            except ConfigValidationError as exc:
                for error in exc.errors:
                    self.message_user(request, translate(error.template, error.context, request.LANGUAGE_CODE,
                                                         fallback=error.message), messages.ERROR)
        self.message_user(request, ngettext("Removed %(count)d model.", "Removed %(count)d models.", removed)
                          % {"count": removed}, messages.SUCCESS if removed else messages.WARNING)
        if not removed:
            self.message_user(request, gettext("Only installed (ready) models can be removed."), messages.INFO)
