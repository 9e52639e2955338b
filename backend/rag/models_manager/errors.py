"""The one error of the model manager: a readable, translatable reason."""

from __future__ import annotations

from typing import Any

from rag.core import TrellisError


class ModelInstallError(TrellisError):
    """An install or check was refused or failed.

    ``template`` is a gettext message (collected by ``makemessages``) formatted with
    ``context``; ``code`` is stable for programs (``offline``, ``path_traversal``...).
    """

    def __init__(self, template: str, code: str, **context: Any) -> None:
        self.template, self.code, self.context = template, code, context
        super().__init__(self.message)

    @property
    def message(self) -> str:
        try:
            return self.template.format(**self.context)
        except (KeyError, IndexError, ValueError):
            return self.template
