"""Turning uploaded files (PDF, DOCX, HTML, Markdown, plain text) into sections of text."""

from .base import ParsedDocument, ParseLimits, Section, normalize_text
from .detect import SUPPORTED_NAMES, SUPPORTED_TYPES, detect_type
from .isolated import parse_document_isolated
from .parse import parse_document
from .text import decode_text

__all__ = [
    "SUPPORTED_NAMES",
    "SUPPORTED_TYPES",
    "ParseLimits",
    "ParsedDocument",
    "Section",
    "decode_text",
    "detect_type",
    "normalize_text",
    "parse_document",
    "parse_document_isolated",
]
