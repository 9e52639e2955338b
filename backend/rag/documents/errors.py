"""Errors raised while reading documents. Each carries a reason a user can act on."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any

from rag.core.errors import TrellisError


def reason_text(template: str, context: Mapping[str, Any]) -> str:
    """A reason in English: ``template`` formatted with ``context``, then the library's own words
    (``context["detail"]``, never translated) after a colon."""
    try:
        text = template.format(**context)
    except (KeyError, IndexError, ValueError):
        text = template
    detail = context.get("detail")
    return f"{text}: {detail}" if detail and "{detail}" not in template else text


class DocumentError(TrellisError):
    """Base class of every error about a document or its chunks."""


class DocumentParseError(DocumentError):
    """A file could not be turned into text; ``reason`` says why in plain words.

    The reason is ``template`` formatted with ``context``, as for ``FieldError``: an adapter can
    translate ``template`` (marked with ``gettext_noop``) and format it the same way, or branch
    on ``code``. What a library said about the file goes in ``context["detail"]``, outside the
    template: it stays in the library's words, shown apart from the translated reason.

    Parameters
    ----------
    template : str
        The reason with ``{placeholders}``, e.g. ``"unsupported file type {extension!r} ..."``.
    code : str
        A stable machine-readable cause: ``empty``, ``too_large``, ``too_many_pages``,
        ``too_many_characters``, ``unsupported_type``, ``type_mismatch``, ``encrypted``,
        ``damaged``, ``no_text``, ``binary``, ``encoding``.
    context : mapping, optional
        Values for the placeholders.
    filename : str, optional
        The file concerned, when known.
    """

    def __init__(
        self,
        template: str,
        *,
        code: str,
        context: Mapping[str, Any] | None = None,
        filename: str | None = None,
    ) -> None:
        self.template = template
        self.code = code
        self.context = dict(context or {})
        self.filename = filename
        super().__init__(self.reason)

    @property
    def reason(self) -> str:
        """The human-readable reason in English, the library's detail after it; never a stack trace."""
        return reason_text(self.template, self.context)

    @property
    def detail(self) -> str | None:
        """What the parsing library said, in its own words, when it said something."""
        return self.context.get("detail") or None

    def __str__(self) -> str:
        return self.reason

    def __reduce__(self) -> tuple[Any, ...]:
        # Exceptions pickle through their positional args; the keywords must travel too, so the
        # error survives a trip through a task queue.
        rebuild = functools.partial(type(self), code=self.code, context=self.context, filename=self.filename)
        return rebuild, (self.template,)

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason, "code": self.code, "context": self.context, "filename": self.filename}
