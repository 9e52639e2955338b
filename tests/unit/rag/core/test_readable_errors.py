"""``readable_error``: the one place that decides what a user may read of a failure."""

from __future__ import annotations

import pytest

from rag.core import ConfigValidationError, FieldError, TrellisError, readable_error
from rag.core.errors import UNEXPECTED

pytestmark = pytest.mark.unit


class TemplatedError(TrellisError):
    code = "too_long"

    def __init__(self, template: str, **context: object) -> None:
        self.template, self.context = template, context
        super().__init__(template.format(**context))


def test_an_engine_error_reads_as_its_own_message_with_code_error():
    error = readable_error(TrellisError("the index of 'Notes' is being built"))
    assert (error.message, error.code) == ("the index of 'Notes' is being built", "error")


def test_an_engine_error_with_braces_in_its_text_is_shown_verbatim():
    error = readable_error(TrellisError('the model answered {"order": [2, 0]} without id 1'))
    assert error.message == 'the model answered {"order": [2, 0]} without id 1'


def test_an_engine_error_with_a_template_keeps_it_for_translation_and_its_code():
    error = readable_error(TemplatedError("the question is longer than {limit} characters", limit=10))
    assert (error.template, error.context, error.code) == (
        "the question is longer than {limit} characters", {"limit": 10}, "too_long")
    assert error.message == "the question is longer than 10 characters"


def test_a_configuration_error_reads_as_every_problem():
    exc = ConfigValidationError([FieldError("params.top_k", "must be ≥ 1", "minimum")])
    assert "params.top_k: must be ≥ 1" in readable_error(exc).message


@pytest.mark.parametrize("exc", [
    RuntimeError("connection to postgres://trellis:s3cret@db.internal failed"),
    KeyError("/var/lib/trellis/secret_key"),
    ZeroDivisionError("division by zero"),
])
def test_any_other_exception_names_only_its_kind_never_its_text(exc):
    error = readable_error(exc)
    assert error.code == "internal" and error.template == UNEXPECTED
    assert type(exc).__name__ in error.message
    assert str(exc).strip("'") not in error.message and "s3cret" not in error.message
