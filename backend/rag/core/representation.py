"""Rendering a component's representation template against its configuration.

A template is a run of segments joined by separators (`` · `` or `` → ``), e.g.
``"Fusion · {fusion} · {children} · top {top_k}"``. Placeholders are ``{param}`` and
``{nested.param}``; a path through a list maps over its items (``{branches.name}``), a number picks
one (``{children.0.component}``). ``{param|text}`` renders ``text`` when the value is unset.
``{{`` and ``}}`` are literal braces.

A placeholder with nothing to show (an unset or missing value, an empty list or text, a nested
component not chosen yet) takes its whole segment with it, so a node reads well at every stage
of building: ``"Fusion · rrf · · top 10"`` never happens, ``"Fusion · rrf · top 10"`` does.
Nested components render as their names and enumerated values as their labels, both through a
``Vocabulary`` in the reader's language; without one, as stored. Rendering never raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_TOKEN = re.compile(r"\{\{|\}\}|\{([^{}]*)\}|(\s*[·→]\s*)")
# More list items than this read as "a, b, c +2".
LIST_ITEMS_SHOWN = 3


# How list items are joined, by language ("BM25, Dense"; "稠密、BM25").
LIST_SEPARATORS = {"zh-Hant": "、"}


class Vocabulary(Protocol):
    """The words a representation is rendered with, in one language."""

    list_separator: str
    """How list items are joined (``LIST_SEPARATORS``)."""

    def name(self, component: str) -> str:
        """What a nested component of this name is called (its short name)."""

    def label(self, component: str, param: str, value: Any) -> str | None:
        """The label of ``value`` of ``component``'s parameter ``param``, if it has one."""


def value_key(value: Any) -> str:
    """How an enumerated value is keyed in a table of labels: strings as themselves, other JSON
    values as their JSON text (``true``, ``3``)."""
    return value if isinstance(value, str) else json.dumps(value)


def placeholders(template: str) -> list[str]:
    """The placeholder paths of ``template`` in order (``["top_k", "embedding_model.component"]``)."""
    return [match.group(1).split("|", 1)[0].strip() for match in _PLACEHOLDER.finditer(template)
            if match.group(1) is not None]


def _is_ref(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("component"), str)


def _number(value: float) -> str:
    return f"{value:g}"


def _separator(vocabulary: Vocabulary | None) -> str:
    return vocabulary.list_separator if vocabulary is not None else ", "


def _format(value: Any, owner: str | None, param: str | None, vocabulary: Vocabulary | None) -> str | None:
    """``value`` as shown, or None when there is nothing to show."""
    if value is None:
        return None
    if _is_ref(value):
        return vocabulary.name(value["component"]) if vocabulary else value["component"]
    if isinstance(value, (list, tuple)):
        items = [shown for item in value if (shown := _format(item, owner, param, vocabulary)) is not None]
        if not items:
            return None
        hidden = len(items) - LIST_ITEMS_SHOWN
        return _separator(vocabulary).join(items[:LIST_ITEMS_SHOWN]) + (f" +{hidden}" if hidden > 0 else "")
    if isinstance(value, Mapping):
        entries = [f"{key}={shown}" for key, item in value.items()
                   if (shown := _format(item, owner, None, vocabulary)) is not None]
        return _separator(vocabulary).join(entries) or None
    if vocabulary and owner and param:
        label = vocabulary.label(owner, param, value)
        if label:
            return label
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _number(value)
    text = str(value).strip()
    return text or None


def _show(value: Any, path: Sequence[str], owner: str | None, param: str | None,
          vocabulary: Vocabulary | None) -> str | None:
    """What ``path`` shows below ``value``: a component reference's ``component`` is its name,
    other segments read its params (``params`` itself may be spelled out or skipped)."""
    if not path:
        return _format(value, owner, param, vocabulary)
    head, rest = path[0], path[1:]
    if _is_ref(value):
        if head == "component":
            return _format(value, None, None, vocabulary) if not rest else None
        params = value.get("params") or {}
        if head == "params":
            return _show(params, rest, value["component"], None, vocabulary)
        return _show(params[head], rest, value["component"], head, vocabulary) if head in params else None
    if isinstance(value, Mapping):
        return _show(value[head], rest, owner, param or head, vocabulary) if head in value else None
    if isinstance(value, (list, tuple)):
        if head.isdigit():
            index = int(head)
            return _show(value[index], rest, owner, param, vocabulary) if index < len(value) else None
        return _format([_show(item, path, owner, param, vocabulary) for item in value], None, None, _Joiner(vocabulary))
    return None


class _Joiner:
    """Joins already shown items the vocabulary's way, without naming or labelling them again."""

    def __init__(self, vocabulary: Vocabulary | None) -> None:
        self.list_separator = _separator(vocabulary)

    def name(self, component: str) -> str:
        return component

    def label(self, component: str, param: str, value: Any) -> str | None:
        return None


def render(template: str, config: Mapping[str, Any], vocabulary: Vocabulary | None = None) -> str:
    """Render ``template`` against ``config`` (a ``{"component", "params"}`` reference); ``""``
    when nothing in it can be shown yet."""
    # Each segment: [the separator before it, its text so far, whether a placeholder came up empty].
    segments: list[list[Any]] = [["", [], False]]
    start = 0
    for match in _TOKEN.finditer(template):
        segment = segments[-1]
        segment[1].append(template[start:match.start()])
        start = match.end()
        token = match.group(0)
        if token in ("{{", "}}"):
            segment[1].append(token[0])
        elif match.group(2) is not None:
            segments.append([match.group(2), [], False])
        else:
            path, has_fallback, fallback = match.group(1).partition("|")
            path = path.strip()
            shown = _show(config, path.split("."), None, None, vocabulary) if path else None
            if shown is None and has_fallback:
                shown = fallback.strip() or None
            if shown is None:
                segment[2] = True
            else:
                segment[1].append(shown)
    segments[-1][1].append(template[start:])

    parts: list[str] = []
    # A dropped segment's separator joins the segments on either side, so "A · {x} → B" without x
    # reads "A · B".
    pending: str | None = None
    for separator, texts, empty in segments:
        text = "".join(texts)
        if empty or not text.strip():
            if pending is None:
                pending = separator
            continue
        if parts:
            parts.append(pending if pending is not None else separator)
        parts.append(text)
        pending = None
    return "".join(parts).strip()
