"""Answer metrics: exact match and token F1 against reference answers, whether the answer
contains a reference (and does so concisely), whether it copies a passage instead of answering,
citation precision, and an LLM-judged faithfulness score.

Answers are compared after a language-aware normalisation in the manner of the SQuAD and MLQA
evaluation scripts: lower case, punctuation removed, the language's articles removed, spaces
collapsed. Chinese (and any text holding CJK ideographs) is compared character by character:
each ideograph is a token of its own, other runs of letters and digits stay whole words.

One step the SQuAD and MLQA scripts do not take: a number is the same answer in digits and in
words ("4" and "cuatro", "24" and "二十四"), for English and Spanish number words up to twenty
and the tens, and for runs of Chinese numerals. A model that answers "interceptó 4 balones" to
a reference "cuatro" has answered it.
"""

from __future__ import annotations

import re
import string
import unicodedata
from collections import Counter
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

ARTICLES: dict[str, frozenset[str]] = {
    "en": frozenset({"a", "an", "the"}),
    "es": frozenset({"el", "la", "lo", "los", "las", "un", "una", "unos", "unas"}),
    "de": frozenset({"der", "die", "das", "des", "dem", "den", "ein", "eine", "einer", "eines", "einem", "einen"}),
    "fr": frozenset({"le", "la", "les", "l", "un", "une", "des"}),
}
_CJK_CHARACTER = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002fa1f]")
_ASCII_PUNCTUATION = frozenset(string.punctuation)
_CITATION = re.compile(r"\s*\[\d+(?:\s*[,，、]\s*\d+)*\]")

_ENGLISH_NUMBERS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen",
                    "nineteen", "twenty"]
_SPANISH_NUMBERS = ["cero", "uno", "dos", "tres", "cuatro", "cinco", "seis", "siete", "ocho", "nueve", "diez",
                    "once", "doce", "trece", "catorce", "quince", "dieciséis", "diecisiete", "dieciocho",
                    "diecinueve", "veinte"]
_ENGLISH_TENS = ["thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SPANISH_TENS = ["treinta", "cuarenta", "cincuenta", "sesenta", "setenta", "ochenta", "noventa"]
NUMBER_WORDS: dict[str, dict[str, str]] = {
    "en": {**{word: str(value) for value, word in enumerate(_ENGLISH_NUMBERS)},
           **{word: str(value) for value, word in zip(range(30, 100, 10), _ENGLISH_TENS, strict=True)}},
    "es": {**{word: str(value) for value, word in enumerate(_SPANISH_NUMBERS)},
           "dieciseis": "16", "veintiuno": "21",
           **{word: str(value) for value, word in zip(range(30, 100, 10), _SPANISH_TENS, strict=True)}},
}
_CHINESE_DIGITS = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "兩": 2, "三": 3, "四": 4, "五": 5, "六": 6,
                   "七": 7, "八": 8, "九": 9}
_CHINESE_UNITS = {"十": 10, "百": 100, "千": 1000}
_CHINESE_NUMERAL_RUN = re.compile(f"[{''.join(_CHINESE_DIGITS)}{''.join(_CHINESE_UNITS)}]+")


def chinese_number(run: str) -> int | None:
    """The value of a run of Chinese numerals below ten thousand (四 4, 十一 11, 二十四 24,
    一百零五 105, 一九八九 1989), or None when the run is not a well-formed number."""
    if all(character in _CHINESE_DIGITS for character in run):
        return int("".join(str(_CHINESE_DIGITS[character]) for character in run))
    total, digit, last_unit = 0, None, 10_000
    for character in run:
        if character in "零〇":  # a placeholder for an empty place: 一百零五
            continue
        if character in _CHINESE_DIGITS:
            if digit is not None:
                return None
            digit = _CHINESE_DIGITS[character]
        else:
            unit = _CHINESE_UNITS[character]
            if unit >= last_unit:
                return None
            total += (1 if digit is None else digit) * unit
            digit, last_unit = None, unit
    return total + (digit or 0)


def chinese_numerals_as_digits(text: str, shortest: int = 1) -> str:
    """``text`` with each well-formed run of Chinese numerals at least ``shortest`` characters long
    in digits ("三百零八分" → " 308 分")."""
    def digits(match: re.Match[str]) -> str:
        value = chinese_number(match.group()) if len(match.group()) >= shortest else None
        return match.group() if value is None else f" {value} "

    return _CHINESE_NUMERAL_RUN.sub(digits, text)


def _numbers_as_digits(text: str, language: str) -> str:
    if language == "zh":
        text = chinese_numerals_as_digits(text)
    words = NUMBER_WORDS.get(language)
    return " ".join(words.get(word, word) for word in text.split()) if words else text


FAITHFULNESS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "statements": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"statement": {"type": "string"}, "supported": {"type": "boolean"}},
                "required": ["statement", "supported"],
            },
        },
    },
    "required": ["statements"],
}


def number_words_as_digits(text: str, language: str | None) -> str:
    """``text`` with its number words in digits ("cuatro" → 4, "四" → 4), as answers are compared."""
    return _numbers_as_digits(text, primary_language(language))


def primary_language(language: str | None) -> str:
    return (language or "").strip().replace("_", "-").split("-", 1)[0].lower()


def _is_punctuation(character: str) -> bool:
    return character in _ASCII_PUNCTUATION or unicodedata.category(character).startswith("P")


def strip_citations(text: str) -> str:
    """The answer without its ``[1]``, ``[2, 3]`` chunk citations, which no reference holds."""
    return _CITATION.sub("", text or "")


def normalize_answer(text: str, language: str | None = None, *, numbers_as_digits: bool = True) -> str:
    """Lower case, no punctuation, no articles of ``language``, numbers in digits (unless
    ``numbers_as_digits`` is False), single spaces."""
    text = unicodedata.normalize("NFKC", text or "").casefold()
    text = "".join(" " if _is_punctuation(character) else character for character in text)
    primary = primary_language(language)
    articles = ARTICLES.get(primary, frozenset())
    text = " ".join(word for word in text.split() if word not in articles)
    return _numbers_as_digits(text, primary) if numbers_as_digits else text


def answer_tokens(text: str, language: str | None = None, *, numbers_as_digits: bool = True) -> list[str]:
    """The normalised answer's tokens: words, and each CJK ideograph on its own."""
    tokens: list[str] = []
    for word in normalize_answer(text, language, numbers_as_digits=numbers_as_digits).split():
        if _CJK_CHARACTER.search(word) is None:
            tokens.append(word)
            continue
        pending = ""
        for character in word:
            if _CJK_CHARACTER.match(character):
                if pending:
                    tokens.append(pending)
                    pending = ""
                tokens.append(character)
            else:
                pending += character
        if pending:
            tokens.append(pending)
    return tokens


def exact_match(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """1.0 when the normalised prediction equals a normalised reference, else 0.0."""
    predicted = answer_tokens(prediction, language)
    return float(any(predicted == answer_tokens(reference, language) for reference in references))


def token_f1(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """The best token-overlap F1 of the prediction against any reference."""
    predicted = answer_tokens(prediction, language)
    best = 0.0
    for reference in references:
        expected = answer_tokens(reference, language)
        if not predicted or not expected:
            best = max(best, float(predicted == expected))
            continue
        common = sum((Counter(predicted) & Counter(expected)).values())
        if common:
            precision, recall = common / len(predicted), common / len(expected)
            best = max(best, 2 * precision * recall / (precision + recall))
    return best


def answer_contains(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """1.0 when some normalised reference appears, token for token, inside the normalised
    prediction: the fair test for a generated sentence against a short reference answer."""
    predicted = answer_tokens(prediction, language)
    for reference in references:
        expected = answer_tokens(reference, language)
        if expected and any(predicted[start:start + len(expected)] == expected
                            for start in range(len(predicted) - len(expected) + 1)):
            return 1.0
    return 0.0


CONCISE_WORDS = 40
CONCISE_CJK_CHARACTERS = 80
COPIED_SPAN_WORDS = 25
COPIED_SPAN_CJK_CHARACTERS = 50
"""A Chinese answer copies a passage when it repeats more than this many consecutive
ideographs of it: 25 words at the two characters a word that the concise limit (40 words, 80
characters) takes. At one ideograph a word, a one-sentence answer restating its passage's
sentence ("約什·諾曼完成了四次抄截，其中兩次被判達陣", 37 characters) counted as a pasted passage."""


def answer_length(text: str) -> tuple[int, str]:
    """The answer's length without its citations: ``(count, unit)``, in characters (spaces
    excluded) when it holds CJK ideographs, else in words."""
    prose = strip_citations(text).strip()
    if _CJK_CHARACTER.search(prose):
        return sum(1 for character in prose if not character.isspace()), "characters"
    return len(prose.split()), "words"


def concise_contains(prediction: str, references: Sequence[str], language: str | None = None) -> float:
    """1.0 when the answer contains a reference and is short: at most 40 words, or 80
    characters for CJK text, citations not counted. A passage pasted back often contains the
    reference too; this is the measure of an answer."""
    count, unit = answer_length(prediction)
    limit = CONCISE_CJK_CHARACTERS if unit == "characters" else CONCISE_WORDS
    return answer_contains(strip_citations(prediction), references, language) if count <= limit else 0.0


def longest_shared_span(answer: str, passages: Sequence[str], language: str | None = None) -> int:
    """The most consecutive tokens (words; each CJK ideograph one token) the answer shares with
    any one passage, after normalisation and with citations stripped (numbers as written: a
    copy is measured in the passage's own tokens)."""
    tokens = answer_tokens(strip_citations(answer), language, numbers_as_digits=False)
    best = 0
    for passage in passages:
        other = answer_tokens(passage, language, numbers_as_digits=False)
        if tokens and other:
            matcher = SequenceMatcher(None, tokens, other, autojunk=False)
            best = max(best, matcher.find_longest_match(0, len(tokens), 0, len(other)).size)
    return best


def verbatim_copy(answer: str, passages: Sequence[str], language: str | None = None) -> float:
    """1.0 when the answer repeats more than 25 consecutive words of a passage it was given, or,
    for a CJK answer, more than 50 consecutive characters."""
    limit = COPIED_SPAN_CJK_CHARACTERS if answer_length(answer)[1] == "characters" else COPIED_SPAN_WORDS
    return float(longest_shared_span(answer, passages, language) > limit)


def citation_precision(cited_corpus_ids: Sequence[str | None], judgements: Mapping[str, int]) -> float | None:
    """Share of the cited chunks whose document is relevant; None when nothing was cited."""
    if not cited_corpus_ids:
        return None
    return sum(1 for corpus_id in cited_corpus_ids
               if corpus_id is not None and judgements.get(corpus_id, 0) > 0) / len(cited_corpus_ids)


def faithfulness_messages(question: str, answer: str, passages: Sequence[str],
                          passage_characters: int = 1200) -> list[dict[str, str]]:
    numbered = "\n\n".join(f"[{number}] {text[:passage_characters]}" for number, text in enumerate(passages, start=1))
    return [
        {"role": "system", "content": (
            "You check whether an answer is supported by the passages it was written from. Split the answer "
            "into its factual statements. For each statement say whether the passages support it "
            "(supported: true) or not (supported: false). Judge only against the passages, not your own "
            "knowledge.")},
        {"role": "user", "content": f"Question: {question}\n\nPassages:\n{numbered or '(none)'}\n\nAnswer: {answer}"},
    ]


def judge_faithfulness(llm: Any, question: str, answer: str, passages: Sequence[str], *,
                       max_trials: int = 3) -> tuple[float | None, dict[str, Any]]:
    """Share of the answer's statements the judge LLM finds supported by ``passages``.

    Returns ``(score, details)``; the score is None for an empty answer or when the judge gave
    no usable verdict in ``max_trials`` attempts (``details["error"]`` says why).
    """
    if not answer.strip():
        return None, {"error": "the answer is empty"}

    def check(arguments: dict[str, Any]) -> list[str]:
        return [] if arguments["statements"] else ["list at least one statement of the answer"]

    arguments, attempts = llm.call_function_with_retries(
        faithfulness_messages(question, answer, passages), FAITHFULNESS_SCHEMA, check=check,
        max_trials=max_trials, name="judge_statements",
        description="the answer's statements and whether the passages support each",
    )
    if arguments is None:
        problems = "; ".join(attempts[-1].problems) if attempts else "no attempt was made"
        return None, {"error": f"the judge gave no usable verdict after {len(attempts)} attempt(s): {problems}",
                      "attempts": len(attempts)}
    statements = arguments["statements"]
    supported = sum(1 for statement in statements if statement["supported"])
    return supported / len(statements), {"statements": statements, "attempts": len(attempts)}
