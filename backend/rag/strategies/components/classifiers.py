"""Classifiers for first-match routing: keywords and regular expressions."""

from __future__ import annotations

import re
import unicodedata
from typing import Annotated, Any, Literal

from pydantic import Field, field_validator

from rag.core import Params as BaseParams
from rag.core import ml, param, register

from ..slots import Classifier

# Scripts written without spaces between words (Thai, Lao, Tibetan, Myanmar, Khmer, Japanese kana,
# CJK ideographs): a keyword in them has no word boundary to respect, and their characters count
# as boundaries for a neighbouring Latin word ("我的iPhone壞了" contains the word "iPhone").
SPACELESS = ("\u0e00-\u0eff\u0f00-\u0fff\u1000-\u109f\u1780-\u17ff\u3005-\u3007\u3040-\u30ff"
             "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff66-\uff9f\U00020000-\U0003134f")
_SPACED_WORD_CHARACTER = f"[^\\W{SPACELESS}]"
_SPACED_WORD_EDGE = re.compile(_SPACED_WORD_CHARACTER)


def keyword_pattern(keyword: str, *, whole_words: bool) -> str:
    """A regular expression for ``keyword``. With ``whole_words``, an end of the keyword that is a
    letter or digit must not touch another letter or digit, except in scripts written without
    spaces (Chinese, Japanese, Thai...), whose keywords match inside a run of text."""
    pattern = re.escape(keyword)
    if not whole_words:
        return pattern
    if _SPACED_WORD_EDGE.match(keyword[0]):
        pattern = f"(?<!{_SPACED_WORD_CHARACTER})" + pattern
    if _SPACED_WORD_EDGE.match(keyword[-1]):
        pattern += f"(?!{_SPACED_WORD_CHARACTER})"
    return pattern


@register
class KeywordClassifier(Classifier["KeywordClassifier.Params"]):
    """Matches a question that contains any (or all) of ``keywords``.

    Matching is Unicode-aware: texts are compared in NFC form, case-insensitively unless
    ``case_sensitive``, and with ``whole_words`` a keyword must stand as a word of its own
    ("art" does not match "article"); keywords in scripts without spaces, such as Chinese,
    match wherever they occur.
    """

    ICON = "tag"
    DISPLAY_NAME = ml("Keyword match", "Coincidencia de palabras clave", "關鍵字比對")
    SHORT_NAME = ml("Keywords", "Palabras clave", "關鍵字")
    DESCRIPTION = ml(
        "Takes the branch when the question contains any (or all) of the given keywords.",
        "Toma la rama cuando la pregunta contiene alguna (o todas) de las palabras clave indicadas.",
        "當問題包含任一（或全部）指定關鍵字時，採用此分支。",
    )
    REPRESENTATION = ml(
        "Keywords ({match}) · {keywords}",
        "Palabras clave ({match}) · {keywords}",
        "關鍵字（{match}）· {keywords}",
    )
    EXAMPLE_PARAMS = {"keywords": ["invoice", "factura", "發票"]}

    class Params(BaseParams):
        keywords: list[Annotated[str, Field(min_length=1, max_length=200)]] = param(
            min_length=1, max_length=500,
            title=ml("Keywords", "Palabras clave", "關鍵字"),
            description=ml(
                "Words or phrases to look for in the question.",
                "Palabras o frases que buscar en la pregunta.",
                "要在問題中尋找的字詞或片語。",
            ),
        )
        match: Literal["any", "all"] = param(
            "any",
            title=ml("Match", "Coincidencia", "比對方式"),
            labels={"any": ml("any", "alguna", "任一"), "all": ml("all", "todas", "全部")},
            description=ml(
                "Any: one keyword is enough; all: every keyword must appear.",
                "Alguna: basta una palabra clave; todas: deben aparecer todas.",
                "任一：出現任一關鍵字即可；全部：所有關鍵字都必須出現。",
            ),
        )
        case_sensitive: bool = param(
            False,
            title=ml("Case-sensitive", "Distinguir mayúsculas", "區分大小寫"),
            description=ml(
                "Tell upper- and lower-case letters apart.",
                "Distinguir entre mayúsculas y minúsculas.",
                "區分大寫與小寫字母。",
            ),
        )
        whole_words: bool = param(
            True,
            title=ml("Whole words", "Palabras completas", "完整字詞"),
            description=ml(
                "A keyword must stand as a word of its own (\"art\" does not match \"article\"); Chinese and "
                "other scripts without spaces always match inside the text.",
                "Una palabra clave debe aparecer como palabra completa (\"art\" no coincide con \"article\"); "
                "el chino y otras escrituras sin espacios coinciden siempre dentro del texto.",
                "關鍵字必須是獨立的字詞（\"art\" 不會比對到 \"article\"）；中文等不以空格分詞的文字一律在文中比對。",
            ),
        )

        @field_validator("keywords")
        @classmethod
        def _not_blank(cls, keywords: list[str]) -> list[str]:
            blank = [index for index, keyword in enumerate(keywords) if not keyword.strip()]
            if blank:
                raise ValueError(f"keywords must not be blank (item(s) {', '.join(map(str, blank))})")
            return keywords

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        flags = 0 if self.params.case_sensitive else re.IGNORECASE
        self._patterns = [
            re.compile(keyword_pattern(unicodedata.normalize("NFC", keyword.strip()),
                                       whole_words=self.params.whole_words), flags)
            for keyword in self.params.keywords
        ]

    def matches(self, question: str) -> bool:
        text = unicodedata.normalize("NFC", question)
        found = (pattern.search(text) is not None for pattern in self._patterns)
        return any(found) if self.params.match == "any" else all(found)


@register
class RegexClassifier(Classifier["RegexClassifier.Params"]):
    """Matches a question in which the regular expression ``pattern`` is found (Python syntax,
    searched anywhere in the question). A pattern that does not compile is a validation error."""

    ICON = "regex"
    DISPLAY_NAME = ml("Regular expression match", "Coincidencia con expresión regular", "規則運算式比對")
    SHORT_NAME = ml("Regex", "Regex", "規則運算式")
    DESCRIPTION = ml(
        "Takes the branch when a regular expression is found in the question.",
        "Toma la rama cuando se encuentra una expresión regular en la pregunta.",
        "當問題中找到符合規則運算式的內容時，採用此分支。",
    )
    REPRESENTATION = ml("Regex · /{pattern}/", "Regex · /{pattern}/", "規則運算式 · /{pattern}/")
    EXAMPLE_PARAMS = {"pattern": r"\b(invoice|receipt)s?\b"}

    class Params(BaseParams):
        pattern: str = param(
            min_length=1, max_length=1000,
            title=ml("Pattern", "Patrón", "模式"),
            description=ml(
                "A Python regular expression, searched anywhere in the question, e.g. \\border\\s+#?\\d+.",
                "Una expresión regular de Python, buscada en cualquier parte de la pregunta, p. ej. "
                "\\border\\s+#?\\d+.",
                "Python 規則運算式，會在問題的任何位置搜尋，例如 \\border\\s+#?\\d+。",
            ),
        )
        ignore_case: bool = param(
            True,
            title=ml("Ignore case", "Ignorar mayúsculas", "忽略大小寫"),
            description=ml(
                "Match upper- and lower-case letters alike.",
                "Tratar igual mayúsculas y minúsculas.",
                "大寫與小寫字母視為相同。",
            ),
        )

        @field_validator("pattern")
        @classmethod
        def _compiles(cls, pattern: str) -> str:
            try:
                re.compile(pattern)
            except re.error as exc:
                where = f" at position {exc.pos}" if exc.pos is not None else ""
                raise ValueError(f"is not a valid regular expression: {exc.msg}{where}") from None
            return pattern

    def __init__(self, **params: Any) -> None:
        super().__init__(**params)
        self._regex = re.compile(self.params.pattern, re.IGNORECASE if self.params.ignore_case else 0)

    def matches(self, question: str) -> bool:
        return self._regex.search(question) is not None
