"""OpenAPI post-processing: the error responses every operation can give, documented once.

drf-spectacular documents what each view declares, but Django REST framework answers some
requests before a view runs: ``403`` when the caller is not signed in or the CSRF token is
missing, ``404`` when a path names no object of the caller's, ``400`` when the body is not
JSON at all, ``415`` for a body in a media type the view does not parse, ``429`` when a caller
is throttled. Each of these has DRF's shape, ``{"detail": "..."}``. A body past a request limit
is ``413`` (or ``400`` for too many files or fields) in the API's own ``{"errors": [...]}``. This hook adds them where
an operation can meet them, and widens an operation's own ``400`` to accept that shape, so the
schema describes every answer the API gives (the fuzzing test holds it to that).
"""

from __future__ import annotations

from typing import Any

METHODS = ("get", "post", "put", "patch", "delete")
DETAIL_REF = {"$ref": "#/components/schemas/ErrorDetail"}
DETAIL = {
    "type": "object",
    "description": "A request refused before or outside the operation's own validation.",
    "properties": {"detail": {"type": "string"}, "code": {"type": "string"}},
    "required": ["detail"],
}
# What a view's input serializer answers with ``is_valid(raise_exception=True)``.
VALIDATION_ERRORS = {
    "type": "object",
    "description": "Django REST framework's validation errors: messages by field name.",
    "additionalProperties": {"anyOf": [{"type": "array", "items": {"type": "string"}}, {"type": "object"}]},
}
FIELD_ERRORS = {
    "type": "object",
    "description": "Problems with the request's parameters, each at its path.",
    "properties": {"errors": {"type": "array", "items": {"type": "object"}}},
    "required": ["errors"],
}
WHY = {
    "400": "The request is malformed (not JSON, or invalid parameters).",
    "403": "Not signed in, the CSRF token is missing, or the operation is not allowed.",
    "404": "No such object among the caller's.",
    "413": "The body, or a file in it, is larger than the limit the error names.",
    "415": "The body is in a media type this operation does not read.",
    "429": "Too many failed attempts; the Retry-After header says when to try again.",
}
# Operations behind the sign-in throttle (accounts.middleware.SignInThrottleMiddleware).
THROTTLED = frozenset({"auth_session_create"})


def _json(schema: dict[str, Any]) -> dict[str, Any]:
    return {"application/json": {"schema": schema}}


def _widen(responses: dict[str, Any], status: str, extra: list[dict[str, Any]]) -> None:
    """Make ``status`` accept the ``extra`` shapes besides whatever it documents already."""
    response = responses.get(status)
    if response is None:
        schema = {"anyOf": extra} if len(extra) > 1 else extra[0]
        responses[status] = {"description": WHY[status], "content": _json(schema)}
        return
    content = response.setdefault("content", {})
    current = content.get("application/json", {}).get("schema")
    if current is None:
        content["application/json"] = {"schema": {"anyOf": extra} if len(extra) > 1 else extra[0]}
    else:
        options = current["anyOf"] if isinstance(current, dict) and set(current) == {"anyOf"} else [current]
        added = [shape for shape in extra if shape not in options]
        content["application/json"] = {"schema": {"anyOf": options + added}}


def document_error_responses(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular ``POSTPROCESSING_HOOKS`` entry: see the module docstring."""
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    schemas.setdefault("ErrorDetail", DETAIL)
    schemas.setdefault("FieldErrors", FIELD_ERRORS)
    schemas.setdefault("ValidationErrors", VALIDATION_ERRORS)
    field_errors = {"$ref": "#/components/schemas/FieldErrors"}
    validation_errors = {"$ref": "#/components/schemas/ValidationErrors"}
    for operations in result.get("paths", {}).values():
        for method, operation in operations.items():
            if method not in METHODS:
                continue
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            has_body = "requestBody" in operation
            _widen(responses, "403", [DETAIL_REF])
            if any(parameter.get("in") == "path" for parameter in parameters):
                _widen(responses, "404", [DETAIL_REF])
            if has_body or any(parameter.get("in") == "query" for parameter in parameters):
                _widen(responses, "400", [DETAIL_REF, field_errors, validation_errors])
            if has_body:
                _widen(responses, "413", [field_errors])
                _widen(responses, "415", [DETAIL_REF])
            if operation.get("operationId") in THROTTLED:
                _widen(responses, "429", [DETAIL_REF])
    return result
