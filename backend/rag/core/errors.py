"""Errors raised by the component core. Each carries text a user can act on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .i18n import gettext_noop


class TrellisError(Exception):
    """Base class of every engine error."""


class RegistryError(TrellisError):
    """A component declaration or registration is wrong (raised at import time)."""


class UnknownComponentError(TrellisError, KeyError):
    """A name that no registered component carries."""

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        self.name = name
        self.suggestions = suggestions or []
        hint = f"; did you mean {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"unknown component {name!r}{hint}")

    def __str__(self) -> str:
        return self.args[0]


class Problem(str):
    """Why something cannot run here, as text (``str(problem)``) that also keeps its gettext
    ``template`` and ``context``, so an adapter can show it in the user's language.

    ``availability_problem`` may return one where a plain string would do.
    """

    template: str
    context: dict[str, Any]
    action: dict[str, Any] | None
    """What the user can do about it, for an adapter to offer as a control rather than as words
    (``install_model_action``); None when the text says all there is."""

    def __new__(cls, template: str, /, *, action: dict[str, Any] | None = None, **context: Any) -> Problem:
        try:
            text = template.format(**context)
        except (KeyError, IndexError, ValueError):
            text = template
        problem = super().__new__(cls, text)
        problem.template, problem.context, problem.action = template, dict(context), action
        return problem


def install_model_action(kind: str, model: str) -> dict[str, Any]:
    """The action "install ``model`` as a model of ``kind``": a web page offers its install form
    filled in, where a shell command would mean nothing to its user."""
    return {"code": "install_model", "params": {"kind": kind, "model": model}}


class CredentialError(TrellisError):
    """A credential could not be resolved. Never carries the secret itself."""


@dataclass(frozen=True)
class FieldError:
    """One validation problem at a JSON path such as ``params.children[1].params.top_k``.

    ``message`` is ``template`` formatted with ``context``; an adapter translates ``template``
    (collected into the gettext catalogues) and formats it the same way. A message whose wording
    depends on ``context["count"]`` has its ``plural`` form too. A context value may be a text in
    several languages (``{"en": "Fusion", "es": "Fusión"}``); each language takes its own.
    """

    path: str
    template: str
    code: str
    context: dict[str, Any] = field(default_factory=dict)
    plural: str = ""
    action: dict[str, Any] | None = None
    """What the user can do about it (``Problem.action``), or None."""

    @property
    def message(self) -> str:
        template = self.plural if self.plural and self.context.get("count") != 1 else self.template
        values = {key: value.get("en", "") if isinstance(value, dict) else value for key, value in self.context.items()}
        try:
            return template.format(**values)
        except (KeyError, IndexError, ValueError):
            return template

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, Any]:
        data = {"path": self.path, "message": self.message, "code": self.code, "context": self.context}
        if self.action is not None:
            data["action"] = self.action
        return data


class ConfigValidationError(TrellisError, ValueError):
    """A configuration was refused; ``errors`` holds every problem found, each with its path."""

    def __init__(self, errors: list[FieldError]) -> None:
        if not errors:
            raise ValueError("ConfigValidationError needs at least one error")
        self.errors = list(errors)
        lines = "\n".join(f"  {error}" for error in self.errors)
        super().__init__(f"{len(self.errors)} configuration error(s):\n{lines}")


UNEXPECTED = gettext_noop("an unexpected error stopped this ({kind}); the server log has the details")


@dataclass(frozen=True)
class ReadableError:
    """What a user is told about a failure: a translatable ``template`` with its ``context``,
    and a stable ``code`` for clients. ``message`` is the English text."""

    template: str
    code: str
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        try:
            return self.template.format(**self.context)
        except (KeyError, IndexError, ValueError):
            return self.template


def readable_error(exc: BaseException) -> ReadableError:
    """What a user may read of ``exc``, the one place that decides it.

    A ``TrellisError`` is written for users: its own message (its ``template`` and ``context``
    when it has them, so it translates) and its ``code`` (``error`` when it has none). Any other
    exception is a fault whose text may hold paths, queries or secrets: the user gets a sentence
    naming only its kind, code ``internal``; the caller logs the exception with its traceback.
    """
    if isinstance(exc, TrellisError):
        code = getattr(exc, "code", None) or "error"
        template = getattr(exc, "template", None)
        if isinstance(template, str) and template:
            return ReadableError(template, code, dict(getattr(exc, "context", None) or {}))
        return ReadableError("{detail}", code, {"detail": str(exc)})
    return ReadableError(UNEXPECTED, "internal", {"kind": type(exc).__name__})
