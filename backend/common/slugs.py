"""Short names for a user's objects, for clients that name them in a field of their own (the
OpenAI API's ``model``, an MCP tool's name), where an id means little to a person."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from django.utils.text import slugify

SLUG_LENGTH = 48
"""Leaves room for ``ask_``/``search_`` within the 64 characters that clients allow a tool name."""


def owner_slugs(rows: Iterable[tuple[int, str]], *, fallback: str) -> dict[int, str]:
    """``{id: slug}`` for one owner's ``(id, name)`` rows: the name slugified (ASCII, lower case,
    hyphens), followed by ``-<id>`` where two names give the same slug, and ``<fallback>-<id>``
    where a name gives none (a name in Chinese) or the slug would read as an id."""
    rows = list(rows)
    bases = {pk: slugify(name)[:SLUG_LENGTH].strip("-_") for pk, name in rows}
    counts = Counter(bases.values())
    slugs = {}
    for pk, base in bases.items():
        if not base or base.isdigit():
            slugs[pk] = f"{fallback}-{pk}"
        elif counts[base] > 1:
            slugs[pk] = f"{base}-{pk}"
        else:
            slugs[pk] = base
    return slugs
