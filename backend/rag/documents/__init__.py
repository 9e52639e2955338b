"""Documents and chunks: records, parsers and chunkers."""

from .errors import DocumentError, DocumentParseError
from .models import Chunk, ChunksByDocument, SourceDocument
from .parsers import ParsedDocument, ParseLimits, Section, parse_document, parse_document_isolated

__all__ = [
    "Chunk",
    "ChunksByDocument",
    "DocumentError",
    "DocumentParseError",
    "ParseLimits",
    "ParsedDocument",
    "Section",
    "SourceDocument",
    "parse_document",
    "parse_document_isolated",
]
