"""Texts shipped in every supported language, with English as the fallback."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

LANGUAGES: tuple[str, ...] = ("en", "es", "zh-Hant")
DEFAULT_LANGUAGE = "en"

# Traditional-script regions; a bare "zh" or a Simplified tag has no shipped catalogue and
# falls back to English rather than pretending Traditional is Simplified.
_TRADITIONAL_CHINESE = {"zh-hant", "zh-tw", "zh-hk", "zh-mo"}


def normalize_language(tag: str | None) -> str:
    """Map a BCP 47 tag (``es-CL``, ``zh-TW``, ``zh_Hant``, ``EN``) to a supported language.

    Unknown or empty tags map to English.
    """
    if not tag:
        return DEFAULT_LANGUAGE
    lowered = tag.strip().replace("_", "-").lower()
    if lowered in _TRADITIONAL_CHINESE or lowered.startswith("zh-hant-"):
        return "zh-Hant"
    primary = lowered.split("-", 1)[0]
    if primary in ("en", "es"):
        return primary
    return DEFAULT_LANGUAGE


class MultilingualString:
    """An immutable text in several languages; English is required.

    Parameters
    ----------
    en, es, zh_hant : str
        The text in each language. ``es`` and ``zh_hant`` may be omitted; lookups then fall
        back to English.

    Examples
    --------
    >>> name = MultilingualString(en="Dense retriever", es="Recuperador denso")
    >>> name.get("es-CL")
    'Recuperador denso'
    >>> name.get("zh-TW")
    'Dense retriever'
    """

    __slots__ = ("_texts",)
    _texts: dict[str, str]

    def __init__(self, en: str, es: str | None = None, zh_hant: str | None = None) -> None:
        if not isinstance(en, str) or not en.strip():
            raise ValueError("MultilingualString needs a non-empty English text")
        texts = {"en": en}
        for language, text in (("es", es), ("zh-Hant", zh_hant)):
            if text is not None:
                if not isinstance(text, str):
                    raise TypeError(f"{language} text must be a string, got {type(text).__name__}")
                texts[language] = text
        object.__setattr__(self, "_texts", texts)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("MultilingualString is immutable")

    @classmethod
    def from_dict(cls, texts: Mapping[str, str]) -> MultilingualString:
        """Build from ``{"en": ..., "es": ..., "zh-Hant": ...}`` (tags are normalised)."""
        by_language: dict[str, str] = {}
        for tag, text in texts.items():
            by_language[normalize_language(tag)] = text
        if "en" not in by_language:
            raise ValueError("MultilingualString needs an 'en' text")
        return cls(en=by_language["en"], es=by_language.get("es"), zh_hant=by_language.get("zh-Hant"))

    def get(self, language: str | None = None) -> str:
        """The text in ``language`` (any BCP 47 tag), or English when it is missing."""
        return self._texts.get(normalize_language(language), self._texts["en"])

    def has(self, language: str) -> bool:
        """Whether a text was shipped for ``language`` itself (no fallback)."""
        return normalize_language(language) in self._texts

    def to_dict(self) -> dict[str, str]:
        return dict(self._texts)

    def __str__(self) -> str:
        return self._texts["en"]

    def __repr__(self) -> str:
        return f"MultilingualString({self._texts!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, MultilingualString) and other._texts == self._texts

    def __hash__(self) -> int:
        return hash(tuple(sorted(self._texts.items())))


def ml(en: str, es: str | None = None, zh_hant: str | None = None) -> MultilingualString:
    """Shorthand used in component declarations."""
    return MultilingualString(en=en, es=es, zh_hant=zh_hant)
