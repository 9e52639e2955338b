"""Catalog API: the registered components, localised, and tree validation."""

from __future__ import annotations

from django.http import Http404
from drf_spectacular.utils import extend_schema, extend_schema_serializer
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from common.api import LANG_PARAMETER, ErrorActionSerializer, FieldErrorSerializer, validated
from models.selectors import models_visible_to
from rag.core import KINDS

from . import selectors
from .models import Component


@extend_schema_serializer(component_name="Component")
class ComponentOutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    kind = serializers.CharField()
    category = serializers.CharField()
    icon = serializers.CharField()
    display_name = serializers.CharField()
    short_name = serializers.CharField(help_text="What representations call a nested component of this kind.")
    description = serializers.CharField()
    representation = serializers.CharField(allow_null=True)
    value_labels = serializers.DictField(
        child=serializers.DictField(child=serializers.CharField()),
        help_text="{param: {value: label}}: how enumerated values read (\"rrf\" → \"RRF\").",
    )
    composite = serializers.BooleanField()
    child_kind = serializers.CharField(allow_null=True)
    min_children = serializers.IntegerField(allow_null=True)
    max_children = serializers.IntegerField(allow_null=True)
    slots = serializers.DictField(child=serializers.CharField(), help_text="Nested component fields and their kinds.")
    available = serializers.BooleanField()


class ComponentListApi(APIView):
    """Every registered component, texts in the request's language."""

    permission_classes = [AllowAny]

    class FilterSerializer(serializers.Serializer):
        kind = serializers.ChoiceField(choices=KINDS, required=False)
        category = serializers.CharField(required=False)

    @extend_schema(
        operation_id="components_list",
        parameters=[FilterSerializer, LANG_PARAMETER],
        responses=ComponentOutputSerializer(many=True),
    )
    def get(self, request: Request) -> Response:
        filters = self.FilterSerializer(data=request.query_params)
        filters.is_valid(raise_exception=True)
        components = selectors.component_list(language=request.LANGUAGE_CODE, **filters.validated_data)
        return Response(ComponentOutputSerializer(components, many=True).data)


class ComponentDetailApi(APIView):
    """One component with its parameters' JSON Schema, texts in the request's language."""

    permission_classes = [AllowAny]

    @extend_schema_serializer(component_name="ComponentDetail")
    class OutputSerializer(ComponentOutputSerializer):
        schema = serializers.JSONField(help_text="JSON Schema (draft 2020-12) of the component's params.")

    @extend_schema(operation_id="components_retrieve", parameters=[LANG_PARAMETER], responses=OutputSerializer)
    def get(self, request: Request, name: str) -> Response:
        try:
            component = selectors.component_get(name=name, language=request.LANGUAGE_CODE)
        except Component.DoesNotExist:
            raise Http404 from None
        return Response(self.OutputSerializer(component).data)


@extend_schema_serializer(component_name="ComponentTreeNode")
class ComponentTreeNodeSerializer(serializers.Serializer):
    path = serializers.CharField()
    component = serializers.CharField()
    display_name = serializers.CharField()
    representation = serializers.CharField()


class ComponentValidateApi(APIView):
    """Validate a component tree. A validation that ran answers 200: an invalid tree with
    ``valid: false`` and every problem at its JSON path, a valid one normalised (defaults filled)
    with every node's rendered representation. 400 is for a malformed request (no tree).
    Signed-in users only: validation looks at the server (model folders, addresses)."""

    @extend_schema_serializer(component_name="ComponentTreeValidation")
    class InputSerializer(serializers.Serializer):
        tree = serializers.JSONField(help_text='A component reference: {"component": name, "params": {...}}.')
        kind = serializers.ChoiceField(choices=KINDS, required=False, help_text="The kind the root must have.")

    @extend_schema_serializer(component_name="ComponentTreeValidationResult")
    class OutputSerializer(serializers.Serializer):
        valid = serializers.BooleanField()
        config = serializers.JSONField(allow_null=True,
                                       help_text="The tree normalised, every default filled; null when invalid.")
        errors = FieldErrorSerializer(many=True, help_text="Every problem at its JSON path; empty for a valid tree.")
        nodes = ComponentTreeNodeSerializer(many=True, help_text="Every node's representation; empty when invalid.")

    @extend_schema(
        operation_id="components_validate",
        request=InputSerializer,
        parameters=[LANG_PARAMETER],
        responses=OutputSerializer,
    )
    def post(self, request: Request) -> Response:
        payload = validated(self.InputSerializer, request.data)
        result = selectors.component_tree_validate(
            tree=payload["tree"],
            kind=payload.get("kind"),
            language=request.LANGUAGE_CODE,
            owner=request.user,
        )
        return Response(self.OutputSerializer(
            {"valid": result.valid, "config": result.config, "errors": result.errors, "nodes": result.nodes}
        ).data)


class PresetListApi(APIView):
    """Ready-made retriever trees to start from; ``available`` is false (with the reason) when
    a part cannot run here, e.g. a cross-encoder with no local copy."""

    permission_classes = [AllowAny]

    @extend_schema_serializer(component_name="RetrieverPreset")
    class OutputSerializer(serializers.Serializer):
        name = serializers.CharField()
        display_name = serializers.CharField()
        description = serializers.CharField()
        icon = serializers.CharField()
        default = serializers.BooleanField()
        tree = serializers.JSONField()
        available = serializers.BooleanField()
        unavailable_reason = serializers.CharField(allow_null=True)
        unavailable_action = ErrorActionSerializer(
            allow_null=True, help_text="What the user can do about it in the application (install_model), or null.")

    @extend_schema(operation_id="components_presets", parameters=[LANG_PARAMETER], responses=OutputSerializer(many=True))
    def get(self, request: Request) -> Response:
        # A preset may point at an installed cross-encoder: one this user may use.
        with models_visible_to(request.user):
            presets = selectors.preset_list(language=request.LANGUAGE_CODE)
        return Response(self.OutputSerializer(presets, many=True).data)
