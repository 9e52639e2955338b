"""The credentials admin: a masked list, and forms whose secret inputs are password fields that
never show the stored value (left empty, the stored secret stays). Saving goes through the
services, so the admin validates and encrypts exactly as the API does."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import translation
from django.utils.text import capfirst
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from rag.clients.outbound import origin
from rag.components import load_components
from rag.core import ConfigValidationError, CredentialError, localize_schema
from rag.credentials import CredentialComponent

from . import services
from .models import Credential

SEPARATOR = "__"  # form field names are "<kind>__<param>"
BASE_FIELDS = ("name", "owner", "shared", "kind")
ACCESS_FIELDS = ("granted_users", "granted_groups", "destinations")


def credential_kinds() -> list[type[CredentialComponent]]:
    return sorted((component for component in load_components().of_kind("credential")
                   if issubclass(component, CredentialComponent)), key=lambda component: component.NAME)


def _component(kind: str) -> type[CredentialComponent] | None:
    return next((component for component in credential_kinds() if kind == component.NAME), None)


def _param_field(prop: dict[str, Any], *, secret: bool, editing: bool, initial: Any) -> forms.Field:
    label = prop.get("title")
    help_text = prop.get("description", "")
    if secret:
        if editing:
            help_text = f"{help_text} {gettext('Leave empty to keep the stored value.')}".strip()
        return forms.CharField(
            label=label, help_text=help_text, required=False, strip=True,
            widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}),
        )
    initial = prop.get("default") if initial is None else initial
    if "enum" in prop:
        return forms.ChoiceField(label=label, help_text=help_text, required=False, initial=initial,
                                 choices=[(value, value) for value in prop["enum"]])
    if prop.get("type") == "boolean":
        return forms.BooleanField(label=label, help_text=help_text, required=False, initial=initial)
    if prop.get("type") == "integer":
        return forms.IntegerField(label=label, help_text=help_text, required=False, initial=initial)
    if prop.get("type") == "number":
        return forms.FloatField(label=label, help_text=help_text, required=False, initial=initial)
    return forms.CharField(label=label, help_text=help_text, required=False, initial=initial)


def param_fields(component: type[CredentialComponent], credential: Credential | None) -> dict[str, forms.Field]:
    """Form fields for ``component``'s params, named ``<kind>__<param>``; secrets never get an initial value."""
    schema = localize_schema(component.get_schema(), translation.get_language())
    stored = credential.public_params if credential is not None else {}
    return {
        f"{component.NAME}{SEPARATOR}{name}": _param_field(
            prop, secret=name in component.SECRET_PARAMS, editing=credential is not None, initial=stored.get(name)
        )
        for name, prop in schema.get("properties", {}).items()
    }


class DestinationsField(forms.CharField):
    """One server URL per line, as the list the model keeps."""

    widget = forms.Textarea(attrs={"rows": 3})

    def prepare_value(self, value: Any) -> Any:
        return "\n".join(value) if isinstance(value, list) else value

    def to_python(self, value: Any) -> list[str]:
        return [line.strip() for line in str(value or "").splitlines() if line.strip()]

    def validate(self, value: list[str]) -> None:
        problems = [url for url in value if origin(url) is None]
        if problems:
            raise forms.ValidationError(gettext("Not an http:// or https:// server address: %(urls)s"),
                                        params={"urls": ", ".join(problems)})


class CredentialAdminForm(forms.ModelForm):
    """Name, owner and sharing of a credential plus the params of its kind (of every kind when
    adding; only the chosen kind's section counts), who may use it and where else it may go."""

    destinations = DestinationsField(
        label=_("other servers"), required=False,
        help_text=_("One URL per line: servers besides its own (its base URL or provider) that this credential "
                    "may be sent to."),
    )

    class Meta:
        model = Credential
        fields = (*BASE_FIELDS, *ACCESS_FIELDS)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.credential_values: dict[str, Any] = {}
        if "kind" in self.fields:
            self.fields["kind"] = forms.ChoiceField(
                label=capfirst(_("kind")), choices=[(component.NAME, str(component.DISPLAY_NAME.get(translation.get_language())))
                                          for component in credential_kinds()],
                help_text=_("Fill in the section of this kind below."),
            )

    @property
    def editing(self) -> bool:
        return self.instance.pk is not None

    def clean(self) -> dict[str, Any]:
        cleaned = super().clean()
        kind = self.instance.kind if self.editing else cleaned.get("kind")
        if not kind:
            return cleaned
        owner = cleaned.get("owner", self.instance.owner if self.editing else None)
        if cleaned.get("shared") and owner is not None and not owner.is_staff:
            self.add_error("shared", gettext("Only a staff user can own a shared credential."))
        prefix = f"{kind}{SEPARATOR}"
        values = {
            name.removeprefix(prefix): value for name, value in cleaned.items()
            if name.startswith(prefix) and value not in ("", None)
        }
        try:
            _, normalised = services.credential_values_validate(
                kind=kind, values=values, keep_secrets_of=self.instance if self.editing else None)
            if owner is not None:
                services.credential_reach_check(owner=owner, kind=kind, values=normalised)
        except ConfigValidationError as exc:
            for error in exc.errors:
                field = prefix + error.path.removeprefix("values.") if error.path.startswith("values.") else ""
                if field in self.fields:
                    self.add_error(field, error.message)
                else:
                    self.add_error(None, str(error))
        except CredentialError as exc:
            self.add_error(None, str(exc))
        self.credential_values = values
        return cleaned


@admin.register(Credential)
class CredentialAdmin(admin.ModelAdmin):
    form = CredentialAdminForm
    list_display = ("name", "owner", "kind", "mask", "shared", "updated_at", "last_used_at")
    list_filter = ("kind", "shared")
    search_fields = ("name", "owner__username")
    list_select_related = ("owner",)
    filter_horizontal = ("granted_users", "granted_groups")

    def get_readonly_fields(self, request: HttpRequest, obj: Credential | None = None) -> tuple[str, ...]:
        if obj is None:
            return ()
        return ("owner", "kind", "shared", "mask", "created_at", "updated_at", "rotated_at", "last_used_at")

    def _kinds_for(self, obj: Credential | None) -> list[type[CredentialComponent]]:
        if obj is None:
            return credential_kinds()
        component = _component(obj.kind)
        return [component] if component is not None else []

    def get_fieldsets(self, request: HttpRequest, obj: Credential | None = None) -> list[tuple[Any, dict[str, Any]]]:
        language = translation.get_language()
        if obj is None:
            head: list[tuple[Any, dict[str, Any]]] = [(None, {"fields": BASE_FIELDS})]
        else:
            head = [(None, {"fields": ("name", "owner", "kind", "shared", "mask")})]
        head.append((_("Who may use it, and where it may go"), {"fields": ACCESS_FIELDS}))
        sections = [
            (component.DISPLAY_NAME.get(language),
             {"fields": tuple(param_fields(component, None)), "description": component.DESCRIPTION.get(language)})
            for component in self._kinds_for(obj)
        ]
        tail = [(_("Use"), {"fields": ("created_at", "updated_at", "rotated_at", "last_used_at")})] if obj is not None else []
        return head + sections + tail

    def get_form(self, request: HttpRequest, obj: Credential | None = None, change: bool = False, **kwargs: Any):
        declared: dict[str, Any] = {}
        for component in self._kinds_for(obj):
            declared.update(param_fields(component, obj))
        kwargs["form"] = type("CredentialAdminForm", (CredentialAdminForm,), declared)
        return super().get_form(request, obj, change=change, **kwargs)

    def get_changeform_initial_data(self, request: HttpRequest) -> dict[str, Any]:
        return {"owner": request.user.pk, **super().get_changeform_initial_data(request)}

    def save_model(self, request: HttpRequest, obj: Credential, form: CredentialAdminForm, change: bool) -> None:
        destinations = form.cleaned_data.get("destinations") or []
        if change:
            services.credential_update(credential=obj, values=form.credential_values, name=obj.name)
            services.credential_destinations_set(credential=obj, destinations=destinations)
            return
        created = services.credential_create(owner=obj.owner, name=obj.name, kind=form.cleaned_data["kind"],
                                             values=form.credential_values, shared=obj.shared)
        services.credential_destinations_set(credential=created, destinations=destinations)
        # The admin goes on with `obj` (history, redirect, the grants); make it the stored row.
        obj.pk = created.pk
        obj._state.adding = False
        obj.refresh_from_db()

    # The admin's confirmation page is where an administrator decides; pipelines that name a
    # deleted credential fail at their next run with a message saying which credential is missing.
    def delete_model(self, request: HttpRequest, obj: Credential) -> None:
        services.credential_delete(credential=obj, force=True)

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Credential]) -> None:
        for credential in queryset:
            services.credential_delete(credential=credential, force=True)
