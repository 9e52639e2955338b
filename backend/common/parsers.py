"""Request parsers of the API."""

from __future__ import annotations

from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, answering 400 instead of 500 when a body nests arrays or objects
    deeper than Python's decoder can follow (``[[[[…`` a hundred thousand times)."""

    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body nests arrays or objects too deeply") from None
