"""What every app's API shares: the one error shape, refusing invalid input in it, looking up
the caller's own objects, and serving several single-operation APIs on one path.

Views raise; ``exception_handler`` (DRF's ``EXCEPTION_HANDLER``) answers. ``Invalid``, a
``ConfigValidationError`` from a service and a body past a request limit become ``400`` (or
``413``) ``{"errors": [{"path", "message", "code"}]}`` in the request's language; everything
else keeps DRF's ``{"detail": ...}``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from django.core.exceptions import ObjectDoesNotExist
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from common.i18n import field_error_data, seeded_text, translate
from common.limits import limit_refusal
from rag.core import ConfigValidationError
from rag.core.i18n import gettext_noop

T = TypeVar("T")

LANG_PARAMETER = OpenApiParameter(
    "lang", OpenApiTypes.STR,
    description="Language of the texts and error messages (en, es, zh-Hant); overrides Accept-Language.")


@extend_schema_serializer(component_name="ErrorAction")
class ErrorActionSerializer(serializers.Serializer):
    code = serializers.CharField(help_text='What to do, e.g. install_model.')
    params = serializers.DictField(help_text='Its details, e.g. {"kind": "cross-encoder", "model": "cross-encoder/'
                                             'ms-marco-MiniLM-L-6-v2"}.')


@extend_schema_serializer(component_name="FieldError")
class FieldErrorSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="The JSON path of the problem, e.g. params.top_k or presets[1].")
    message = serializers.CharField(help_text="Readable, in the request's language.")
    code = serializers.CharField(help_text="Stable machine code, e.g. required or not_found.")
    action = ErrorActionSerializer(required=False, help_text=(
        "Present when the user can fix it in the application: install_model, with the model's kind and id, "
        "is offered as a link to the Models page's install form."))


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


def config_errors(error: ConfigValidationError, language: str | None) -> list[dict[str, Any]]:
    """A configuration error's problems, each with its JSON path, in ``language``."""
    return [field_error_data(field, language) for field in error.errors]


CONSENT_MESSAGE = gettext_noop(
    "This retriever calls a language model ({components}), which takes time and may cost money; "
    "confirm to run it.")


def consent_response(models: list[dict[str, str]], language: str | None) -> Response:
    """The 409 for a run that would call language models the caller has not agreed to:
    ``language_models`` lists each one's ``path`` and ``component``; run again with ``allow_llm``."""
    names = ", ".join(dict.fromkeys(model["component"] for model in models))
    response = errors_response([message_error("allow_llm", CONSENT_MESSAGE, "llm_consent", language,
                                              components=names)], 409)
    response.data["language_models"] = models
    return response


def message_error(path: str, template: str, code: str, language: str | None, **context: Any) -> dict[str, str]:
    """One error entry from a translatable template."""
    return {"path": path, "message": translate(template, context, language, fallback=template.format(**context)),
            "code": code}


class Invalid(Exception):
    """A request refused with ``errors`` in the API's error shape (400 unless ``status`` says)."""

    def __init__(self, errors: list[dict[str, str]], status: int = 400) -> None:
        super().__init__(errors)
        self.errors, self.status = errors, status


def validated(serializer_class: type[serializers.Serializer], data: Any, **kwargs: Any) -> dict[str, Any]:
    """``data`` validated by ``serializer_class``; ``Invalid`` with each problem at its path."""
    serializer = serializer_class(data=data, **kwargs)
    if not serializer.is_valid():
        raise Invalid(serializer_errors(serializer.errors))
    return dict(serializer.validated_data)


def get_for_owner(selector: Callable[..., T], /, *, missing: Exception | None = None, **lookup: Any) -> T:
    """``selector(**lookup)``, a selector that sees only the acting user's rows (``user=`` is
    among ``lookup``). When it finds nothing the request fails with ``missing``: a 404 by
    default, the same for another user's object as for none, so ids do not leak."""
    try:
        return selector(**lookup)
    except ObjectDoesNotExist:
        raise (missing if missing is not None else NotFound()) from None


def no_such(path: str, template: str, language: str | None) -> Invalid:
    """The 400 for a request body naming an object the caller does not have."""
    return Invalid([message_error(path, template, "not_found", language)])


def exception_handler(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """DRF's ``EXCEPTION_HANDLER``: the one error shape for ``Invalid``, configuration errors
    (``413`` when every problem is a size past its limit) and Django's request-size refusals,
    DRF's own answer for everything else."""
    request = context.get("request")
    if isinstance(exc, Invalid):
        return errors_response(exc.errors, exc.status)
    if isinstance(exc, ConfigValidationError):
        too_large = all(error.code == "too_large" for error in exc.errors)
        return errors_response(config_errors(exc, getattr(request, "LANGUAGE_CODE", None)), 413 if too_large else 400)
    refusal = limit_refusal(exc, request) if request is not None else None
    if refusal is not None:
        status, error = refusal
        return errors_response([error], status)
    return drf_exception_handler(exc, context)


class SeededTextField(serializers.CharField):
    """A name or description in the reader's language when Trellis wrote it in every language
    (``common.i18n.seeded_text``); needs ``context={"language": ...}``. ``source`` is the
    object that holds the field (``"*"``, or ``"knowledge_base"``)."""

    def __init__(self, field: str, **kwargs: Any) -> None:
        self.text_field = field
        kwargs.setdefault("source", "*")
        kwargs.setdefault("read_only", True)
        super().__init__(**kwargs)

    def to_representation(self, value: Any) -> str:
        return seeded_text(value, self.text_field, self.context.get("language"))
