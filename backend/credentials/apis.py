"""Credentials API: list, create, read, replace, rotate and delete credentials. Values are
write-only: no response ever carries a secret, only its mask. Each credential says which of the
acting user's pipelines and knowledge bases use it.

Another user's private credential is a 404 (never a 403 that would confirm it exists); a shared
credential is visible to everyone and changeable only by its owner.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import PermissionDenied
from django.db import IntegrityError
from django.utils.translation import gettext
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_field, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import (
    INVALID,
    LANG_PARAMETER,
    FieldErrorsSerializer,
    Invalid,
    get_for_owner,
    message_error,
    validated,
)
from rag.core.i18n import gettext_noop

from . import selectors, services
from .models import NAME_PATTERN, Credential


@extend_schema_field({
    "type": "object",
    "additionalProperties": True,
    "writeOnly": True,
    "description": "The credential component's params, secrets included (schema: "
                   "/api/v1/components/<kind>/). Never returned.",
})
class ValuesField(serializers.JSONField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(write_only=True, **kwargs)

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, dict):
            raise serializers.ValidationError(gettext("must be an object"), code="dict_type")
        return super().to_internal_value(data)


@extend_schema_serializer(component_name="CredentialUse")
class CredentialUseSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["pipeline", "knowledge_base"])
    id = serializers.IntegerField()
    name = serializers.CharField()


@extend_schema_serializer(component_name="Credential")
class CredentialOutputSerializer(serializers.Serializer):
    # Needs context={"user": ..., "uses": selectors.credential_uses(...)} for `owned` and `used_by`.
    id = serializers.IntegerField()
    name = serializers.CharField()
    kind = serializers.CharField(help_text="The credential component, e.g. OpenAIAPIKey.")
    mask = serializers.CharField(help_text='The secret masked, e.g. "sk-…a1b2".')
    shared = serializers.BooleanField()
    owned = serializers.SerializerMethodField(help_text="Whether the acting user owns it (and may change it).")
    public_params = serializers.JSONField(help_text="The params that are not secret, e.g. base_url.")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    rotated_at = serializers.DateTimeField(allow_null=True, help_text="When its secret was last replaced.")
    last_used_at = serializers.DateTimeField(allow_null=True)
    used_by = serializers.SerializerMethodField(
        help_text="The acting user's pipelines and knowledge bases that name it (and resolve the name to it).")

    def get_owned(self, credential: Credential) -> bool:
        return credential.owner_id == getattr(self.context.get("user"), "pk", None)

    @extend_schema_field(CredentialUseSerializer(many=True))
    def get_used_by(self, credential: Credential) -> list[dict[str, Any]]:
        uses = self.context["uses"].get(credential.pk, [])
        return [{"type": use.type, "id": use.id, "name": use.name} for use in uses]


def _context(user: AbstractBaseUser) -> dict[str, Any]:
    return {"user": user, "uses": selectors.credential_uses(user=user)}


def _output(credential: Credential, request: Request) -> dict[str, Any]:
    return CredentialOutputSerializer(credential, context=_context(request.user)).data


def _duplicate_name(name: str, shared: bool, language: str) -> Invalid:
    text = (gettext_noop("a shared credential named {name!r} already exists") if shared
            else gettext_noop("you already have a credential named {name!r}"))
    return Invalid([message_error("name", text, "duplicate_name", language, name=name)])


def _visible_credential(request: Request, credential_id: int) -> Credential:
    return get_for_owner(selectors.credential_get, user=request.user, credential_id=credential_id)


def _own_credential(request: Request, credential_id: int) -> Credential:
    credential = _visible_credential(request, credential_id)
    if credential.owner_id != request.user.pk:
        raise PermissionDenied("only its owner can change a shared credential")
    return credential


class CredentialListApi(APIView):
    """The user's credentials and the shared ones, masked."""

    @extend_schema(operation_id="credentials_list", responses=CredentialOutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        credentials = selectors.credential_list(user=request.user)
        return Response(CredentialOutputSerializer(credentials, many=True, context=_context(request.user)).data)


class CredentialCreateApi(APIView):
    """Store a credential. Its values are encrypted at rest and never returned; only staff can
    create a shared credential."""

    @extend_schema_serializer(component_name="CredentialCreate")
    class InputSerializer(serializers.Serializer):
        name = serializers.RegexField(NAME_PATTERN, max_length=100,
                                      help_text="What pipelines refer to it by, e.g. openai-main.")
        kind = serializers.CharField(max_length=64, help_text="A credential component's name, e.g. OpenAIAPIKey.")
        values = ValuesField()
        shared = serializers.BooleanField(default=False, help_text="Let every user resolve it (staff only).")

    @extend_schema(
        operation_id="credentials_create",
        request=InputSerializer,
        parameters=[LANG_PARAMETER],
        responses={201: CredentialOutputSerializer, **INVALID, 403: None},
    )
    def post(self, request: Request) -> Response:
        data = validated(self.InputSerializer, request.data)
        try:
            credential = services.credential_create(owner=request.user, **data)
        except IntegrityError:
            raise _duplicate_name(data["name"], data["shared"], request.LANGUAGE_CODE) from None
        return Response(_output(credential, request), status=status.HTTP_201_CREATED)


class CredentialDetailApi(APIView):
    """One credential, masked."""

    @extend_schema(operation_id="credentials_retrieve", responses=CredentialOutputSerializer)
    def get(self, request: Request, credential_id: int) -> Response:
        return Response(_output(_visible_credential(request, credential_id), request))


class CredentialUpdateApi(APIView):
    """Rename a credential or replace its values. ``values`` replaces every param; a secret left
    out keeps its stored value."""

    @extend_schema_serializer(component_name="CredentialUpdate")
    class InputSerializer(serializers.Serializer):
        name = serializers.RegexField(NAME_PATTERN, max_length=100, required=False)
        values = ValuesField(required=False)

    @extend_schema(
        operation_id="credentials_partial_update",
        request=InputSerializer,
        parameters=[LANG_PARAMETER],
        responses={200: CredentialOutputSerializer, **INVALID, 403: None},
    )
    def patch(self, request: Request, credential_id: int) -> Response:
        credential = _own_credential(request, credential_id)
        data = validated(self.InputSerializer, request.data)
        try:
            credential = services.credential_update(credential=credential, **data)
        except IntegrityError:
            raise _duplicate_name(data["name"], credential.shared, request.LANGUAGE_CODE) from None
        return Response(_output(credential, request))


class CredentialRotateApi(APIView):
    """Replace a credential's secret values; its name, kind and other values stay, so every
    pipeline that names it uses the new secret from its next run."""

    @extend_schema_serializer(component_name="CredentialRotate")
    class InputSerializer(serializers.Serializer):
        values = ValuesField(help_text="The new secret values only, e.g. {\"api_key\": \"sk-...\"}. Never returned.")

    @extend_schema(
        operation_id="credentials_rotate",
        request=InputSerializer,
        parameters=[LANG_PARAMETER],
        responses={200: CredentialOutputSerializer, **INVALID, 403: None},
    )
    def post(self, request: Request, credential_id: int) -> Response:
        credential = _own_credential(request, credential_id)
        data = validated(self.InputSerializer, request.data)
        credential = services.credential_rotate(credential=credential, secrets=data["values"])
        return Response(_output(credential, request))


IN_USE = gettext_noop("{name!r} is used by {uses}, which would stop working; remove it from them first, "
                      "or delete it anyway with force=true")


class CredentialDeleteApi(APIView):
    """Delete a credential. While the user's pipelines or knowledge bases name it, the answer is
    409 with them listed, unless ``force=true``: they would fail until another one of that name exists."""

    @extend_schema(
        operation_id="credentials_destroy",
        parameters=[LANG_PARAMETER, OpenApiParameter(
            "force", bool, description="Delete even while pipelines or knowledge bases use it.")],
        responses={204: None, 403: None, 409: FieldErrorsSerializer},
    )
    def delete(self, request: Request, credential_id: int) -> Response:
        credential = _own_credential(request, credential_id)
        force = request.query_params.get("force", "").lower() in ("1", "true", "yes")
        try:
            services.credential_delete(credential=credential, force=force)
        except services.CredentialInUse as exc:
            names = ", ".join(repr(use.name) for use in exc.uses)
            raise Invalid([message_error("", IN_USE, "in_use", request.LANGUAGE_CODE, name=credential.name,
                                         uses=names)], status=status.HTTP_409_CONFLICT) from None
        return Response(status=status.HTTP_204_NO_CONTENT)
