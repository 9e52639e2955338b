"""Recursive character splitting, after LangChain's ``RecursiveCharacterTextSplitter``."""

from __future__ import annotations

import bisect
import re
from collections import deque
from itertools import accumulate, pairwise

from pydantic import model_validator

from rag.core import Params as BaseParams
from rag.core import ml, param, register

from .base import Chunker

# After . ! ? (and any closing quote or bracket) followed by white space; after the CJK full
# stops with or without it, since CJK text has no spaces between sentences.
SENTENCE_END = r"[.!?]['\"’”»)\]]*\s+|[。！？][」』”’）]*\s*"
DEFAULT_SEPARATORS = ["\n\n", "\n", SENTENCE_END, " ", ""]
# The blocks of characters Unicode calls wide (East Asian Width W or F) that text is written in:
# Han ideographs, kana, Hangul, CJK punctuation and full-width forms. Why they weigh more is in
# the chunker's docstring.
WIDE = re.compile(
    "[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3"
    "\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\U00020000-\U0003fffd]"
)

Span = tuple[int, int]


class _Measure:
    """Lengths of spans of one text, each wide character counting ``weight`` characters."""

    def __init__(self, text: str, weight: int) -> None:
        wide = [match.start() for match in WIDE.finditer(text)] if weight > 1 else []
        self._prefix: list[int] | None = None
        if wide:
            weights = [1] * len(text)
            for index in wide:
                weights[index] = weight
            self._prefix = [0, *accumulate(weights)]

    def length(self, span: Span) -> int:
        if self._prefix is None:
            return span[1] - span[0]
        return self._prefix[span[1]] - self._prefix[span[0]]

    def reach(self, start: int, size: int) -> int:
        """The furthest end after ``start`` whose span measures at most ``size``, one character
        at least."""
        if self._prefix is None:
            return start + size
        return max(start + 1, bisect.bisect_right(self._prefix, self._prefix[start] + size) - 1)


@register
class RecursiveCharacterChunker(Chunker["RecursiveCharacterChunker.Params"]):
    """Cut text at the coarsest boundary that works, then merge the pieces into chunks.

    The first separator that occurs in a text splits it; pieces still longer than
    ``chunk_size`` are split again with the finer separators that follow; short neighbouring
    pieces are merged into chunks of at most ``chunk_size`` characters, each chunk starting
    with up to ``chunk_overlap`` characters of whole pieces from the end of the previous one.
    A wide character (Chinese, Japanese, Korean) counts ``wide_character_weight`` characters, so
    a Chinese chunk holds about as much text, and as many tokens, as a Spanish one of the same
    size: counted plainly, 1000 Chinese characters are ~730 multilingual-e5 tokens, past the
    512 the embedding reads, against ~270 for 1000 Spanish characters.
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
        wide_character_weight: int = param(
            3,
            title=ml("Weight of a wide character", "Peso de un carácter ancho", "全形字元的權重"),
            description=ml(
                "How many characters each Chinese, Japanese or Korean character counts as in the chunk size "
                "and overlap. Such a character carries about as much text as three Latin letters, so 3 keeps "
                "chunks in every language about equally long in words and tokens; 1 counts every character "
                "alike.",
                "Cuántos caracteres cuenta cada carácter chino, japonés o coreano en el tamaño del fragmento y "
                "en el solapamiento. Uno de ellos lleva tanto texto como unas tres letras latinas, así que 3 "
                "mantiene los fragmentos de todos los idiomas de una longitud parecida en palabras y tokens; 1 "
                "cuenta todos los caracteres por igual.",
                "每個中文、日文或韓文字元在區塊大小與重疊中算作幾個字元。這樣一個字元承載的文字約等於三個拉丁字母，"
                "因此 3 能讓各種語言的區塊在詞數與詞元數上長度相近；1 則所有字元一視同仁。",
            ),
            ge=1,
            le=4,
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
        return self._split(text, 0, len(text), self._separators, _Measure(text, self.params.wide_character_weight))

    def _split(self, text: str, start: int, end: int, separators: list[re.Pattern[str] | None],
               measure: _Measure) -> list[Span]:
        size = self.params.chunk_size
        pieces = self._cut(text, start, end, separators)
        if pieces is None:
            return self._windows(start, end, measure)
        chunks: list[Span] = []
        short: list[Span] = []
        queue = deque(pieces)
        while queue:
            piece, finer = queue.popleft()
            if short and _leads_in(text, short[-1]) and self._overflows(short, piece, measure):
                # "In the builder:" introduces the list after it, which does not fit in its chunk:
                # cut the list into its finer pieces and merge them with the lead-in, so the steps
                # are not a chunk apart from what says what they are steps of.
                finer_pieces = self._cut(text, piece[0], piece[1], finer)
                if finer_pieces is not None:
                    queue.extendleft(reversed(finer_pieces))
                    continue
            if measure.length(piece) < size:
                short.append(piece)
                continue
            if short:
                chunks.extend(self._merge(short, measure))
                short = []
            chunks.extend(self._split(text, piece[0], piece[1], finer, measure))
        if short:
            chunks.extend(self._merge(short, measure))
        return chunks

    def _overflows(self, pieces: list[Span], piece: Span, measure: _Measure) -> bool:
        """Whether ``piece`` does not fit in the chunk that merging ``pieces`` ends with."""
        last = self._merge(pieces, measure)[-1]
        return measure.length(last) + measure.length(piece) > self.params.chunk_size

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

    def _merge(self, pieces: list[Span], measure: _Measure) -> list[Span]:
        """Join contiguous pieces (each shorter than chunk_size) into chunks with overlap."""
        size, overlap = self.params.chunk_size, self.params.chunk_overlap
        chunks: list[Span] = []
        current: deque[Span] = deque()
        total = 0
        for piece in pieces:
            length = measure.length(piece)
            if current and total + length > size:
                chunks.append((current[0][0], current[-1][1]))
                while current and (total > overlap or total + length > size):
                    dropped = current.popleft()
                    total -= measure.length(dropped)
            current.append(piece)
            total += length
        if current:
            chunks.append((current[0][0], current[-1][1]))
        return chunks

    def _windows(self, start: int, end: int, measure: _Measure) -> list[Span]:
        size, step = self.params.chunk_size, self.params.chunk_size - self.params.chunk_overlap
        windows = []
        low = start
        while low < end:
            high = measure.reach(low, size)
            windows.append((low, min(high, end)))
            if high >= end:
                break
            low = min(measure.reach(low, step), high)
        return windows


def _leads_in(text: str, piece: Span) -> bool:
    """Whether ``piece`` introduces what follows it: it ends with a colon."""
    return text[piece[0]:piece[1]].rstrip().endswith((":", "：", "︰"))
