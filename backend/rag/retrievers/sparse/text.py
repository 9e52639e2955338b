"""Text normalisation and tokenisation for keyword search.

Pure functions and one lazily initialised jieba tokenizer; the ``BagOfWordsConverter``
component composes them.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
import threading
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any

# CJK ideographs: the unified blocks (BMP, extension A, extensions B-H) and the compatibility
# ideographs. Kana, Hangul and CJK punctuation are not ideographs and are left to the word
# pattern (Hangul and kana are ``\w``; punctuation is not).
CJK_IDEOGRAPHS = (
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uf900-\ufaff"
    "\U00020000-\U0002fa1f"
    "\U00030000-\U000323af"
)

# A token is a run of CJK ideographs (segmented further below), a run of two or more other
# word characters, or a lone digit. Like scikit-learn's ``\b\w\w+\b`` it drops one-letter
# words ("a", "x"), which carry little meaning in alphabetic scripts; unlike it, it keeps a
# lone digit ("type 2 diabetes", "vitamin B 12" - numbers often are the point of a query)
# and every Chinese word, many of which are one character long (水, 茶, 山).
TOKEN_PATTERN = re.compile(rf"([{CJK_IDEOGRAPHS}]+)|[^\W{CJK_IDEOGRAPHS}]{{2,}}|\d")
_CJK = re.compile(rf"[{CJK_IDEOGRAPHS}]")
_WHITE_SPACES = re.compile(r"\s\s+")

# Latin letters with no Unicode decomposition, folded the way Lucene's ASCIIFoldingFilter does.
_ASCII_FOLDS = {
    "ß": "ss", "ẞ": "SS", "æ": "ae", "Æ": "AE", "œ": "oe", "Œ": "OE", "ø": "o", "Ø": "O",
    "đ": "d", "Đ": "D", "ð": "d", "Ð": "D", "þ": "th", "Þ": "TH", "ł": "l", "Ł": "L",
    "ı": "i", "ħ": "h", "Ħ": "H", "ŧ": "t", "Ŧ": "T", "ŋ": "n", "Ŋ": "N", "ĸ": "q", "ſ": "s",
}


@functools.cache
def _combining_marks() -> dict[int, None]:
    # str.translate with a deletion table runs in C; building the table scans the code space
    # once per process (~0.06 s), only when accent stripping is used.
    return {code: None for code in range(sys.maxunicode + 1) if unicodedata.combining(chr(code))}


@functools.cache
def _ascii_table() -> dict[int, Any]:
    table: dict[int, Any] = dict(_combining_marks())
    table.update({ord(letter): folded for letter, folded in _ASCII_FOLDS.items()})
    return table


def strip_accents_unicode(text: str) -> str:
    """Remove combining accents from any script: ``"Canción"`` → ``"Cancion"``.

    The text is NFKD-decomposed, combining marks are dropped and the rest is recomposed (NFC),
    so scripts whose letters merely decompose (Hangul) come back unchanged. Letters without a
    decomposition (``ß``, ``ø``) are kept.
    """
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", decomposed.translate(_combining_marks()))


def strip_accents_ascii(text: str) -> str:
    """Like :func:`strip_accents_unicode`, and also fold Latin letters to ASCII (``ß`` → ``ss``,
    ``ø`` → ``o``, ``æ`` → ``ae``).

    Characters with no ASCII form, such as Chinese, are kept: unlike scikit-learn's ``ascii``
    option, which deletes them, this must be safe on multilingual text.
    """
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return unicodedata.normalize("NFC", decomposed.translate(_ascii_table()))


ACCENT_STRIPPERS: dict[str, Callable[[str], str]] = {
    "unicode": strip_accents_unicode,
    "ascii": strip_accents_ascii,
}


def has_cjk(text: str) -> bool:
    """Whether ``text`` contains at least one CJK ideograph."""
    return _CJK.search(text) is not None


def word_tokens(text: str, segment: Callable[[str], list[str]]) -> Iterator[str]:
    """Word tokens of ``text`` in order; each run of CJK ideographs is split by ``segment``."""
    for match in TOKEN_PATTERN.finditer(text):
        cjk_run = match.group(1)
        if cjk_run is None:
            yield match.group(0)
        else:
            yield from segment(cjk_run)


def segment_characters(run: str) -> list[str]:
    """Every ideograph is a token."""
    return list(run)


class _Jieba:
    # One private jieba.Tokenizer per process: private so that words another module adds to
    # jieba's global dictionary cannot change how an existing index was segmented.
    _lock = threading.Lock()
    _tokenizer: Any = None

    @classmethod
    def tokenizer(cls) -> Any:
        if cls._tokenizer is None:
            with cls._lock:
                if cls._tokenizer is None:
                    import jieba

                    logger = logging.getLogger("jieba")
                    level = logger.level
                    # jieba announces dictionary loading at DEBUG on its own stderr handler.
                    logger.setLevel(logging.WARNING)
                    try:
                        tokenizer = jieba.Tokenizer()
                        tokenizer.initialize()
                    finally:
                        logger.setLevel(level)
                    cls._tokenizer = tokenizer
        return cls._tokenizer

    _tagger: Any = None

    @classmethod
    def tagger(cls) -> Any:
        """A part-of-speech tagger over the same tokenizer (built once: it reads the whole dictionary)."""
        if cls._tagger is None:
            tokenizer = cls.tokenizer()
            with cls._lock:
                if cls._tagger is None:
                    from jieba.posseg import POSTokenizer

                    cls._tagger = POSTokenizer(tokenizer)
        return cls._tagger


def segment_jieba(run: str) -> list[str]:
    """Segment a run of ideographs with jieba's search-engine mode (``cut_for_search``).

    Search mode emits the words of jieba's precise segmentation plus the dictionary words
    inside long ones (``中国科学院`` also yields ``中国``, ``科学``, ``学院``, ``科学院``). Precise
    segmentation depends on context, so a compound in a document and the same words typed
    alone in a query can be cut differently; the extra sub-words let them still meet.
    """
    return _Jieba.tokenizer().lcut_for_search(run)


# jieba's part-of-speech tags for names: people (nr, nrt: transliterated, nrfg), places (ns),
# organisations (nt), other proper nouns (nz), and words in Latin letters (eng: "BSkyB").
_NAME_TAGS = frozenset({"nr", "nrt", "nrfg", "ns", "nt", "nz", "eng"})


def chinese_names(text: str) -> list[str]:
    """The words of ``text`` jieba's part-of-speech tagger reads as names, in order, each once.
    Chinese writes names without capitals; the tagger knows many from its dictionary and guesses
    others (it also takes some common words for names: "雨林", "王朝")."""
    return _tagged_words(text, lambda flag: flag in _NAME_TAGS)


def chinese_nouns(text: str) -> list[str]:
    """The words of ``text`` jieba's part-of-speech tagger reads as nouns (names among them:
    "阿波罗", "宇航员", "太空服"), in order, each once."""
    return _tagged_words(text, lambda flag: flag.startswith("n") or flag == "eng")


def chinese_possessors(text: str) -> list[tuple[str, int]]:
    """Each run of nouns ``text`` joins to what follows it with 的 ("黑豹队" in "黑豹队的防守", where
    the tagger reads 黑豹 and 队), with where what follows begins."""
    found: list[tuple[str, int]] = []
    run: list[str] = []
    position = 0
    for word, flag in _Jieba.tagger().lcut(text):
        position += len(word)
        if word == "的" and len("".join(run)) >= 2:
            found.append(("".join(run), position))
        run = [*run, word] if flag.startswith("n") or flag == "eng" else []
    return found


def _tagged_words(text: str, keep: Callable[[str], bool]) -> list[str]:
    """The words of two characters or more whose part-of-speech tag ``keep`` accepts, in order, each once."""
    return list(dict.fromkeys(word for word, flag in _Jieba.tagger().lcut(text) if keep(flag) and len(word) >= 2))


SEGMENTERS: dict[str, Callable[[str], list[str]]] = {
    "jieba": segment_jieba,
    "characters": segment_characters,
}


def word_ngrams(tokens: list[str], ngram_min: int, ngram_max: int) -> list[str]:
    """The n-grams of ``tokens`` for n in [ngram_min, ngram_max], joined by one space, in
    scikit-learn's order (all n-grams of one length, shortest first)."""
    if ngram_max == 1:
        return tokens
    grams = list(tokens) if ngram_min == 1 else []
    count = len(tokens)
    for n in range(max(ngram_min, 2), min(ngram_max, count) + 1):
        grams.extend(" ".join(tokens[i : i + n]) for i in range(count - n + 1))
    return grams


def char_ngrams(text: str, ngram_min: int, ngram_max: int) -> list[str]:
    """Character n-grams over the whole text (runs of whitespace count as one space), as
    scikit-learn's ``analyzer="char"``."""
    text = _WHITE_SPACES.sub(" ", text)
    length = len(text)
    grams: list[str] = []
    for n in range(ngram_min, min(ngram_max, length) + 1):
        grams.extend(text[i : i + n] for i in range(length - n + 1))
    return grams


def char_wb_ngrams(text: str, ngram_min: int, ngram_max: int) -> list[str]:
    """Character n-grams inside words, each word padded with one space on both sides, as
    scikit-learn's ``analyzer="char_wb"``."""
    text = _WHITE_SPACES.sub(" ", text)
    grams: list[str] = []
    for word in text.split():
        padded = f" {word} "
        length = len(padded)
        for n in range(ngram_min, ngram_max + 1):
            offset = 0
            grams.append(padded[offset : offset + n])
            while offset + n < length:
                offset += 1
                grams.append(padded[offset : offset + n])
            if offset == 0:
                break
    return grams
