"""Errors raised by the component core. Each carries text a user can act on."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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

    def __new__(cls, template: str, **context: Any) -> Problem:
        try:
            text = template.format(**context)
        except (KeyError, IndexError, ValueError):
            text = template
        problem = super().__new__(cls, text)
        problem.template, problem.context = template, dict(context)
        return problem


class CredentialError(TrellisError):
    """A credential could not be resolved. Never carries the secret itself."""


@dataclass(frozen=True)
class FieldError:
    """One validation problem at a JSON path such as ``params.children[1].params.top_k``.

    ``message`` is ``template`` formatted with ``context``; an adapter translates ``template``
    (collected into the gettext catalogues) and formats it the same way.
    """

    path: str
    template: str
    code: str
    context: dict[str, Any] = field(default_factory=dict)

    @property
    def message(self) -> str:
        try:
            return self.template.format(**self.context)
        except (KeyError, IndexError, ValueError):
            return self.template

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "message": self.message, "code": self.code, "context": self.context}


class ConfigValidationError(TrellisError, ValueError):
    """A configuration was refused; ``errors`` holds every problem found, each with its path."""

    def __init__(self, errors: list[FieldError]) -> None:
        if not errors:
            raise ValueError("ConfigValidationError needs at least one error")
        self.errors = list(errors)
        lines = "\n".join(f"  {error}" for error in self.errors)
        super().__init__(f"{len(self.errors)} configuration error(s):\n{lines}")
