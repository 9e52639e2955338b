"""What every app's API shares."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_serializer
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from config.i18n import translate
from rag.core import ConfigValidationError

LANG_PARAMETER = OpenApiParameter(
    "lang", OpenApiTypes.STR,
    description="Language of the texts and error messages (en, es, zh-Hant); overrides Accept-Language.")


@extend_schema_serializer(component_name="FieldError")
class FieldErrorSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="The JSON path of the problem, e.g. params.top_k or presets[1].")
    message = serializers.CharField(help_text="Readable, in the request's language.")
    code = serializers.CharField(help_text="Stable machine code, e.g. required or not_found.")


@extend_schema_serializer(component_name="FieldErrors")
class FieldErrorsSerializer(serializers.Serializer):
    errors = FieldErrorSerializer(many=True)


INVALID = {400: FieldErrorsSerializer}


def one_path(name: str, *operations: type[APIView]):
    """A view serving one URL with several single-operation APIs, each answering its own method.

    The operations define disjoint HTTP methods; drf-spectacular still reads each method's own
    ``extend_schema``.
    """
    methods = [method for operation in operations for method in operation.http_method_names
               if method != "options" and hasattr(operation, method)]
    if len(methods) != len(set(methods)):
        raise RuntimeError(f"{name}: two operations answer the same HTTP method")
    for operation in operations:
        for method in operation.http_method_names:
            handler = operation.__dict__.get(method)
            if handler is not None and not handler.__doc__:
                handler.__doc__ = operation.__doc__  # what the OpenAPI description of the method shows
    return type(name, operations, {"__module__": operations[0].__module__}).as_view()


def errors_response(errors: list[dict[str, str]], code: int = 400) -> Response:
    """The one error shape of every API: ``{"errors": [{"path", "message", "code"}]}``."""
    return Response({"errors": errors}, status=code)


def serializer_errors(detail: Any, prefix: str = "") -> list[dict[str, str]]:
    """DRF's nested error dict flattened to ``[{"path", "message", "code"}]``."""
    if isinstance(detail, dict):
        return [error for key, value in detail.items()
                for error in serializer_errors(value, f"{prefix}.{key}" if prefix else str(key))]
    if isinstance(detail, list):
        if all(isinstance(item, (str, serializers.ErrorDetail)) for item in detail):
            return [{"path": prefix, "message": str(item), "code": getattr(item, "code", "invalid")}
                    for item in detail]
        return [error for index, item in enumerate(detail) for error in serializer_errors(item, f"{prefix}[{index}]")]
    return [{"path": prefix, "message": str(detail), "code": getattr(detail, "code", "invalid")}]


def config_errors(error: ConfigValidationError, language: str | None) -> list[dict[str, str]]:
    """A configuration error's problems, each with its JSON path, in ``language``."""
    return [{"path": field.path,
             "message": translate(field.template, field.context, language, fallback=field.message, plural=field.plural),
             "code": field.code} for field in error.errors]


def message_error(path: str, template: str, code: str, language: str | None, **context: Any) -> dict[str, str]:
    """One error entry from a translatable template."""
    return {"path": path, "message": translate(template, context, language, fallback=template.format(**context)),
            "code": code}
