"""Recursive character splitting, after LangChain's ``RecursiveCharacterTextSplitter``."""

from __future__ import annotations

import re
from collections import deque
from itertools import pairwise

from pydantic import model_validator

from rag.core import Params as BaseParams
from rag.core import ml, param, register

from .base import Chunker

# After . ! ? (and any closing quote or bracket) followed by white space; after the CJK full
# stops with or without it, since CJK text has no spaces between sentences.
SENTENCE_END = r"[.!?]['\"’”»)\]]*\s+|[。！？][」』”’）]*\s*"
DEFAULT_SEPARATORS = ["\n\n", "\n", SENTENCE_END, " ", ""]

Span = tuple[int, int]


@register
class RecursiveCharacterChunker(Chunker["RecursiveCharacterChunker.Params"]):
    """Cut text at the coarsest boundary that works, then merge the pieces into chunks.

    The first separator that occurs in a text splits it; pieces still longer than
    ``chunk_size`` are split again with the finer separators that follow; short neighbouring
    pieces are merged into chunks of at most ``chunk_size`` characters, each chunk starting
    with up to ``chunk_overlap`` characters of whole pieces from the end of the previous one.
    Text is cut right after a separator's match, so nothing is lost; a piece with no separator
    left is cut into fixed windows of characters, so no chunk exceeds ``chunk_size``. Unlike
    LangChain's splitter, a piece ending with a colon ("In the builder:") does not end a chunk when
    what follows does not fit after it: what follows is cut into its finer pieces, which are merged
    with it.
    """

    ICON = "scissors"
    DISPLAY_NAME = ml("Recursive character splitter", "Divisor recursivo por caracteres", "遞迴字元分割器")
    SHORT_NAME = ml("Recursive", "Recursivo", "遞迴")
    DESCRIPTION = ml(
        "Splits text at the coarsest boundary that fits — paragraphs, then lines, sentences, words and "
        "finally characters — and merges the pieces into chunks of at most a given number of characters, "
        "slightly overlapping their neighbours.",
        "Divide el texto por el límite más amplio que quepa —párrafos, luego líneas, oraciones, palabras y, "
        "por último, caracteres— y une los trozos en fragmentos de un número máximo de caracteres, con un "
        "pequeño solapamiento entre fragmentos vecinos.",
        "在能容納的最大邊界切分文字——先是段落，再來是行、句子、詞，最後是字元——並將片段合併為不超過指定字元數的"
        "區塊，相鄰區塊略有重疊。",
    )
    REPRESENTATION = ml(
        "Recursive · {chunk_size} chars · overlap {chunk_overlap}",
        "Recursivo · {chunk_size} caracteres · solapamiento {chunk_overlap}",
        "遞迴 · {chunk_size} 字元 · 重疊 {chunk_overlap}",
    )

    class Params(BaseParams):
        chunk_size: int = param(
            1000,
            title=ml("Chunk size (characters)", "Tamaño del fragmento (caracteres)", "區塊大小（字元）"),
            description=ml(
                "The most characters a chunk may hold.",
                "Número máximo de caracteres de un fragmento.",
                "每個區塊最多可容納的字元數。",
            ),
            ge=50,
            le=100_000,
        )
        chunk_overlap: int = param(
            100,
            title=ml("Overlap (characters)", "Solapamiento (caracteres)", "重疊（字元）"),
            description=ml(
                "How many characters from the end of a chunk are repeated at the start of the next, so that "
                "a passage cut in two is still found whole. Must be smaller than the chunk size.",
                "Cuántos caracteres del final de un fragmento se repiten al comienzo del siguiente, para que "
                "un pasaje cortado en dos se encuentre entero. Debe ser menor que el tamaño del fragmento.",
                "每個區塊結尾有多少字元會在下一個區塊開頭重複，使被切成兩半的段落仍能完整找到。必須小於區塊大小。",
            ),
            ge=0,
            le=99_999,
        )
        separators: list[str] = param(
            DEFAULT_SEPARATORS,
            title=ml("Separators", "Separadores", "分隔符"),
            description=ml(
                "Regular expressions tried in order, from the coarsest boundary to the finest; text is cut "
                "right after a match. An empty string stands for single characters.",
                "Expresiones regulares que se prueban en orden, del límite más amplio al más fino; el texto "
                "se corta justo después de cada coincidencia. Una cadena vacía representa caracteres sueltos.",
                "依序嘗試的正規表示式，從最大的邊界到最小的邊界；文字會在每個符合處之後切開。空字串代表逐字元切分。",
            ),
            max_length=20,
        )

        @model_validator(mode="after")
        def _check(self) -> RecursiveCharacterChunker.Params:
            if self.chunk_overlap >= self.chunk_size:
                raise ValueError(
                    f"chunk_overlap ({self.chunk_overlap}) must be smaller than chunk_size ({self.chunk_size})"
                )
            for index, separator in enumerate(self.separators):
                try:
                    re.compile(separator)
                except re.error as error:
                    raise ValueError(
                        f"separators[{index}] ({separator!r}) is not a valid regular expression: {error}"
                    ) from None
            return self

    def __init__(self, **params: object) -> None:
        super().__init__(**params)
        self._separators = [re.compile(separator) if separator else None for separator in self.params.separators]

    def spans(self, text: str) -> list[Span]:
        return self._split(text, 0, len(text), self._separators)

    def _split(self, text: str, start: int, end: int, separators: list[re.Pattern[str] | None]) -> list[Span]:
        size = self.params.chunk_size
        pieces = self._cut(text, start, end, separators)
        if pieces is None:
            return self._windows(start, end)
        chunks: list[Span] = []
        short: list[Span] = []
        queue = deque(pieces)
        while queue:
            piece, finer = queue.popleft()
            if short and _leads_in(text, short[-1]) and self._overflows(short, piece):
                # "In the builder:" introduces the list after it, which does not fit in its chunk:
                # cut the list into its finer pieces and merge them with the lead-in, so the steps
                # are not a chunk apart from what says what they are steps of.
                finer_pieces = self._cut(text, piece[0], piece[1], finer)
                if finer_pieces is not None:
                    queue.extendleft(reversed(finer_pieces))
                    continue
            if piece[1] - piece[0] < size:
                short.append(piece)
                continue
            if short:
                chunks.extend(self._merge(short))
                short = []
            chunks.extend(self._split(text, piece[0], piece[1], finer))
        if short:
            chunks.extend(self._merge(short))
        return chunks

    def _overflows(self, pieces: list[Span], piece: Span) -> bool:
        """Whether ``piece`` does not fit in the chunk that merging ``pieces`` ends with."""
        last = self._merge(pieces)[-1]
        return (last[1] - last[0]) + (piece[1] - piece[0]) > self.params.chunk_size

    @staticmethod
    def _cut(text: str, start: int, end: int, separators: list[re.Pattern[str] | None]
             ) -> list[tuple[Span, list[re.Pattern[str] | None]]] | None:
        """``text[start:end]`` cut after every match of the first separator that occurs in it,
        each piece with the finer separators left for it; None when none occurs."""
        for index, separator in enumerate(separators):
            if separator is None:
                return None
            cuts = sorted({match.end() for match in separator.finditer(text, start, end) if start < match.end() < end})
            if cuts:
                return [(piece, separators[index + 1:]) for piece in pairwise([start, *cuts, end])]
        return None

    def _merge(self, pieces: list[Span]) -> list[Span]:
        """Join contiguous pieces (each shorter than chunk_size) into chunks with overlap."""
        size, overlap = self.params.chunk_size, self.params.chunk_overlap
        chunks: list[Span] = []
        current: deque[Span] = deque()
        total = 0
        for piece in pieces:
            length = piece[1] - piece[0]
            if current and total + length > size:
                chunks.append((current[0][0], current[-1][1]))
                while current and (total > overlap or total + length > size):
                    dropped = current.popleft()
                    total -= dropped[1] - dropped[0]
            current.append(piece)
            total += length
        if current:
            chunks.append((current[0][0], current[-1][1]))
        return chunks

    def _windows(self, start: int, end: int) -> list[Span]:
        size, step = self.params.chunk_size, self.params.chunk_size - self.params.chunk_overlap
        windows = []
        for low in range(start, end, step):
            windows.append((low, min(low + size, end)))
            if low + size >= end:
                break
        return windows


def _leads_in(text: str, piece: Span) -> bool:
    """Whether ``piece`` introduces what follows it: it ends with a colon."""
    return text[piece[0]:piece[1]].rstrip().endswith((":", "：", "︰"))
