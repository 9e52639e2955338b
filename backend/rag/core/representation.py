"""Rendering a component's representation template against its configuration.

Templates use ``{param}`` and ``{nested.param}`` placeholders; ``{param|text}`` renders ``text``
when the value is unset (None). ``{{`` and ``}}`` are literal braces. A value that cannot be
found renders visibly as ``⟨name?⟩`` so a user sees what is missing; rendering never raises.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_MISSING = object()


def placeholders(template: str) -> list[str]:
    """The placeholder paths of ``template`` in order (``["top_k", "embedding_model.component"]``)."""
    return [match.group(1).split("|", 1)[0].strip() for match in _PLACEHOLDER.finditer(template)
            if match.group(1) is not None]


def _is_ref(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("component"), str)


def resolve(config: Mapping[str, Any], path: str) -> Any:
    """Look ``path`` up in a component reference; ``component`` names a reference's class and
    other segments read its params (``params`` itself may be spelled out or skipped)."""
    value: Any = config
    for segment in path.split("."):
        if _is_ref(value):
            if segment == "component":
                value = value["component"]
                continue
            value = value.get("params") or {}
            if segment == "params":
                continue
        if isinstance(value, Mapping) and segment in value:
            value = value[segment]
        elif isinstance(value, list) and segment.isdigit() and int(segment) < len(value):
            value = value[int(segment)]
        else:
            return _MISSING
    return value


def _unset_ref(config: Mapping[str, Any], path: str) -> bool:
    """Whether some segment of ``path`` is an unset (None) nested component."""
    head = path.split(".")
    return any(resolve(config, ".".join(head[:length])) is None for length in range(1, len(head)))


def format_value(value: Any) -> str:
    if _is_ref(value):
        return value["component"]
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "—"
    if isinstance(value, float):
        return f"{value:g}"
    if isinstance(value, list):
        return ", ".join(format_value(item) for item in value)
    if isinstance(value, Mapping):
        return ", ".join(f"{key}={format_value(item)}" for key, item in value.items())
    return str(value)


def render(template: str, config: Mapping[str, Any]) -> str:
    """Render ``template`` against ``config`` (a ``{"component", "params"}`` reference)."""

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        path, has_fallback, fallback = match.group(1).partition("|")
        path = path.strip()
        if not path:
            return "⟨?⟩"
        value = resolve(config, path)
        if has_fallback and (value is None or value is _MISSING or _unset_ref(config, path)):
            return fallback.strip()
        return f"⟨{path}?⟩" if value is _MISSING else format_value(value)

    return _PLACEHOLDER.sub(substitute, template)
