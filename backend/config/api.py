"""What every app's API shares."""

from __future__ import annotations

from rest_framework.views import APIView


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
