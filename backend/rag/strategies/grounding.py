"""Whether an answer stands on the passages it cites.

A small model asked about something its passages do not hold often answers anyway, citing a
passage that says nothing of the kind ("The hairs on ctenophores are called cnidocytes [1]"). The
answer is checked sentence by sentence against the passage each sentence cites (a sentence
without a number takes the previous sentence's, and an answer with no number at all is checked
against every passage):

- every number it states appears in the passage;
- most of what it adds to the question (its terms that are not the question's) is in the
  passage, and so is a fair share of what the question is about (its terms, or those of them
  the sentence repeats: an answer to one part of a two-part question repeats that part), and
  never less than a floor of all of them: an invented answer takes its words from the question
  or from elsewhere, not from a passage on the same subject.

A question that asks for a number ("How many…", "¿Cuántos…?", "多少人", "in what year") and only that
is not answered by a draft stating none: the model wrote around a passage that does not hold it
(``declined_by`` "number").

A question asking two things is often answered from two passages: a sentence repeating one part
of it (``rag.retrievers.composite.agentic.parts``) is judged by its passage's share of that part,
since the other part's answer is in another passage; a sentence that needs two passages to hold
what it says is supported by the two together (``_drawn_from_two``); and sentences answering one
part each from their own passages meet the floor over the passages they cite together
(``_parts_answered``).

Terms are the words of three letters or more, stop words left out, English and Spanish stemmed
(Snowball; an English plural it leaves whole, "children", reads as its singular), Chinese cut into
words (ordinals such as 第一场 left out, numbers such as 三百零八 read as digits: a number is judged
as a number); each counts by its length, so a name weighs more than "año". A word the sentence
quotes is a term however short ("点"), and a long word is found where the passage spells it one
letter otherwise ("Shelly", "Shelley").
The shares were calibrated on XQuAD-es and -zh questions whose article is in the knowledge base
and questions whose article is not (``bench/answers.py --absent``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rag.documents.sentences import ends_a_sentence
from rag.retrievers.composite.agentic.parts import question_parts

from .answer_prompts import CITATION_MARK, cited_numbers, is_declined

NEW_TERMS_SUPPORTED = 0.5
"""The least share (by weight) of a sentence's own terms the cited passage must hold."""
LIGHTEST_CLAIM = 8
"""A sentence adding less than this weight of terms to the question and a number is judged by the
number; one adding neither terms nor numbers answers nothing."""
QUESTION_TERMS_SUPPORTED = 0.4
"""The least share (by weight) of the question's terms the cited passage must hold (of those the
sentence repeats, when it repeats enough of them)."""
WHOLE_QUESTION_SUPPORTED = 0.3
"""The least share (by weight) of all the question's terms the cited passage must hold, whatever
the sentence repeats: a passage holding less is about something else ("the second largest soybean
producer" for a question about oil)."""

REPOINTED_QUESTION_MARGIN = 0.1
"""How much less of the question (by weight) a passage may hold than the one a sentence cites and
still become its citation. The model cites the passage about the question; a claim whose words
only a passage about something else holds was borrowed from it ("罗马人害怕…的部落叫“北方匪徒” [1]":
[1] on Hadrian's Wall holds 0.8 of the question, the "northern bandits" of a passage on the Trần
dynasty 0.4), and is not moved there."""

# A sentence ends after a full stop, and at a line break after a citation mark ("… 不服从。 [1]\n物体…").
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=\S)|(?<=[。！？])|(?<=\])[ \t]*\n+(?=\S)")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
# Letters then digits ("DVB-S2", "MPEG-2", "A380", "COVID-19") name a thing: the digits are part of
# its name, not an amount a passage must state.
_NAME_WITH_DIGITS = re.compile(r"(?<![A-Za-z])[A-Za-z]+-?\d+[A-Za-z\d]*")
_IDEOGRAPH = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
# An ordinal ("第一场", "the first (battle)") says nothing of the subject, as "first" does not in English.
_ORDINAL = re.compile(r"第[一二三四五六七八九十百千两兩几幾]+[个個种種场場次项項名位届屆件条條只隻本部座所家]?")
# A word the answer quotes is a claim however short ("点" in 标志的昵称是“点”).
_QUOTED = re.compile(r"[“\"«「『]([^”\"»」』]{1,40})[”\"»」』]")
MISSPELLED_NAME = 6
"""A word this long or longer is found where the passage holds it with one letter more, fewer or
different ("Shelly" for "Shelley"): people misspell names in questions."""
# A question asking for a count, a share or a year is answered by a number (or an amount in words:
# "la mitad", "一半"). How much of something ("How much sun do tomatoes need?", "¿Cuánta agua…?",
# "需要多少阳光") or how long may rightly be answered without one ("full sun").
_COUNTED = "个個次人名位年岁歲天种種座所家件条條只隻本部场場分元美元公里米倍届屆项項首篇份"
_ASKS_FOR_NUMBER = {
    "en": re.compile(r"\bhow many\b|\b(?:what|which) (?:year|percentage|percent|share)\b", re.I),
    "es": re.compile(r"\bcuánt[oa]s\b|\bqu[eé] (?:año|porcentaje|proporción)\b", re.I),
    "zh": re.compile(rf"多少[{_COUNTED}]|[几幾][{_COUNTED}]|哪一?年|何年|百分之[几幾]|百分比"),
}
# The other question words: a question holding one of these besides asks a second thing too.
_QUESTION_WORDS = {
    "en": re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.I),
    "es": re.compile(r"\b(?:qué|cuál|cuáles|quién|quiénes|cuándo|dónde|cómo|cuánt[oa]s?)\b", re.I),
    "zh": re.compile(r"什么|什麼|甚麼|哪|谁|誰|何|怎|为什么|為什麼|多少|[几幾](?![乎何])|以及|還有|还有"),
}
_AMOUNT_WORDS = {
    "en": re.compile(r"\b(?:half|third|thirds|quarter|quarters|dozens?|hundreds|thousands|millions|billions|none)\b", re.I),
    "es": re.compile(r"\b(?:mitad|tercio|tercios|cuarto|cuartos|docenas?|centenares|cientos|miles|millones|ninguno|ninguna)\b",
                     re.I),
    "zh": re.compile(r"一半|半数|半數|分之|[百千万萬亿億]"),
}
# Words a question or an answer uses whatever it is about: they say nothing of the subject.
_GENERIC = {
    "en": {"name", "call", "year", "mani", "much", "first", "type", "kind", "use", "make", "part", "main",
           "also", "other", "one", "two", "three", "number", "time", "percent", "approxim", "around", "about",
           "accord", "passag", "document", "doe"},
    "es": {"nombr", "llam", "llamab", "año", "cuant", "cuál", "cual", "tip", "part", "principal", "tambien",
           "otro", "otra", "uno", "dos", "tres", "numer", "vez", "porcentaj", "aproxim", "alrededor", "segun",
           "pasaj", "document", "hac", "hizo", "tien", "fue", "fuer", "ser", "estab", "esta"},
    "zh": {"什麼", "什么", "多少", "哪個", "哪个", "哪裡", "哪里", "甚麼", "名稱", "名称", "稱為", "称为", "叫做",
           "是否", "一個", "一个", "哪些", "為何", "为何", "如何", "怎樣", "怎样", "幾個", "几个", "哪一",
           "什麼樣", "什么样", "何為", "何为", "一種", "一种", "一項", "一项", "第一", "第一種", "第一种", "認為",
           "认为"},
}


@dataclass
class SentenceSupport:
    """One sentence of the answer and whether the passage it cites holds it."""

    text: str
    cites: list[int]
    supported: bool
    new_terms: float
    """The share (by weight) of its own terms found in the passage."""
    question_terms: float
    """The share (by weight) of the question's terms it repeats (or of all of them) found in the passage."""
    missing_numbers: list[str] = field(default_factory=list)
    whole_question: float = 1.0
    """The share (by weight) of all the question's terms found in the passage (or of the one part
    of a two-part question the sentence repeats, when that is more)."""
    cited_instead: list[int] | None = None
    """The numbers the answer wrote, when ``cites`` names others: a mark named a passage that does
    not hold the sentence, or one holding part of what it says while another holds all of it."""
    parts_cited: list[int] | None = None
    """When the sentence answers one part of the question: the passages the answer's sentences
    cite together, over which ``whole_question`` was taken."""


@dataclass
class Grounding:
    """The sentences of an answer checked against their passages, and whether the answer is
    declined: by the model itself (``"answer"``: it said the passages do not say) or by the check
    (``"support"``: no sentence is supported by the passage it cites; ``"number"``: the question
    asks only for a number and the answer states none)."""

    sentences: list[SentenceSupport]
    declined_by: str | None = None

    @property
    def unsupported(self) -> list[SentenceSupport]:
        return [sentence for sentence in self.sentences if not sentence.supported]

    def to_dict(self) -> dict[str, Any]:
        cited = [sentence for sentence in self.sentences if sentence.cites]
        return {
            "declined_by": self.declined_by,
            "sentences": [asdict(sentence) for sentence in self.sentences],
            "supported_citations": sum(sentence.supported for sentence in cited),
            "citations_checked": len(cited),
            "thresholds": {"new_terms": NEW_TERMS_SUPPORTED, "question_terms": QUESTION_TERMS_SUPPORTED,
                           "whole_question": WHOLE_QUESTION_SUPPORTED},
        }


def language_family(language: str) -> str:
    """"en", "es" or "zh": the languages whose words the checks know (others read as English)."""
    return "zh" if language.startswith("zh") else language if language in ("en", "es") else "en"


@functools.lru_cache(maxsize=4)
def _converter(family: str) -> Any:
    from rag.retrievers.sparse.bag_of_words import BagOfWordsConverter

    if family == "zh":
        return BagOfWordsConverter()
    language = {"en": "english", "es": "spanish"}[family]
    return BagOfWordsConverter(stop_words=language, stemmer=language)


# English plurals the stemmer leaves whole: "its children's scores" is about "each child's scores".
_IRREGULAR_PLURALS = {"children": "child", "peopl": "person", "men": "man", "women": "woman", "mice": "mous",
                      "feet": "foot", "teeth": "tooth", "gees": "goos", "criteria": "criterion", "phenomena": "phenomenon",
                      "analys": "analysi"}


def terms(text: str, language: str) -> dict[str, int]:
    """The terms of ``text`` with their weights (their length; two for a Chinese character)."""
    family = language_family(language)
    text = CITATION_MARK.sub(" ", text)
    if family == "zh":
        text = _numerals_as_digits(text)
    found: dict[str, int] = {}
    for token in _converter(family).analyze(text):
        if family == "en":
            token = _IRREGULAR_PLURALS.get(token, token)
        if token in _GENERIC[family] or token.isdigit() or (family == "zh" and _ORDINAL.fullmatch(token)):
            continue
        ideographs = len(_IDEOGRAPH.findall(token))
        if ideographs:
            if ideographs < 2:
                continue
            found[token] = 2 * ideographs
        elif len(token) >= 3:
            found[token] = len(token)
    return found


def _numerals_as_digits(text: str) -> str:
    """``text`` with its Chinese numbers in digits, so a number is judged as a number (``numbers``),
    not as words the segmenter cuts anyhow ("三百零八分" → "三百", "八分"). Two numerals or more in a
    row are a number ("三百零八"); one alone is as often part of a word ("统一")."""
    from rag.evaluation.answers import chinese_numerals_as_digits

    return chinese_numerals_as_digits(text, shortest=2)


def numbers(text: str, language: str = "en") -> set[str]:
    """The numbers ``text`` states, in digits (number words too: "cuatro", "四"), without their
    thousands separators; the digits of a name ("DVB-S2") are not a number it states."""
    from rag.evaluation.answers import number_words_as_digits

    named = _NAME_WITH_DIGITS.sub(" ", CITATION_MARK.sub(" ", text))
    spaced = re.sub(r"(?<!\d)([^\w\s])|([^\w\s])(?!\d)", r" \1\2 ", named)
    written = number_words_as_digits(spaced.casefold(), language)
    return {re.sub(r"[.,](?=\d{3}\b)", "", number) for number in _NUMBER.findall(written)}


def shares_a_term_with(text: str, language: str) -> Callable[[str], bool]:
    """A test of whether another text shares a term with ``text`` (a Chinese word, or a pair of
    its characters); a text with no term to compare (numbers, stop words) passes. ``text``'s
    terms are found once, however many texts are tested."""
    held = terms(text, language)
    return lambda other: _share(terms(other, language), held, text) > 0


def _share(wanted: dict[str, int], held: dict[str, int], passage_text: str) -> float:
    total = sum(wanted.values())
    if not total:
        return 1.0
    return sum(weight * _found(term, held, passage_text) for term, weight in wanted.items()) / total


def repeated_weight(wanted: dict[str, int], text: str, language: str) -> float:
    """How much of ``wanted`` (terms with their weights) ``text`` repeats, found as a passage's
    terms are ("secuenció" in "secuenciaron", a Chinese word by its pairs of characters)."""
    held = terms(text, language)
    return sum(weight * _found(term, held, text) for term, weight in wanted.items())


def _found(term: str, held: dict[str, int], passage_text: str) -> float:
    """1 when the passage holds ``term``; for a Chinese word the segmenter may cut otherwise
    ("叫卓戈" for "卓戈"), the share of its pairs of characters the passage holds."""
    if term in held:
        return 1.0
    if not _IDEOGRAPH.search(term):
        if any(_one_edit_apart(term, other) for other in held):
            return 1.0
        # A quoted word too short to be a term ("X") is found as a word of the passage.
        return float(len(term) < 3 and re.search(rf"\b{re.escape(term)}\b", passage_text.casefold()) is not None)
    if term in passage_text:
        return 1.0
    pairs = [term[index:index + 2] for index in range(len(term) - 1)]
    return sum(pair in passage_text for pair in pairs) / len(pairs) if pairs else 0.0


def _one_edit_apart(term: str, other: str) -> bool:
    """Whether ``other`` is ``term`` with one letter added, left out or changed, one of them at
    least ``MISSPELLED_NAME`` letters long (in a short word one letter makes another word)."""
    if (abs(len(term) - len(other)) > 1 or max(len(term), len(other)) < MISSPELLED_NAME
            or min(len(term), len(other)) < MISSPELLED_NAME - 1 or term[0] != other[0]):
        return False
    if len(term) == len(other):
        return sum(a != b for a, b in zip(term, other, strict=True)) == 1
    shorter, longer = sorted((term, other), key=len)
    index = next((i for i, (a, b) in enumerate(zip(shorter, longer, strict=False)) if a != b), len(shorter))
    return shorter[index:] == longer[index + 1:]


def quoted_terms(text: str, language: str) -> dict[str, int]:
    """What ``text`` quotes that its terms leave out for being short ("点"), weighted as terms are."""
    found: dict[str, int] = {}
    for quote in _QUOTED.findall(text):
        quote = quote.strip().casefold()
        if quote and not terms(quote, language) and not quote.isdigit():
            found[quote] = 2 * len(_IDEOGRAPH.findall(quote)) or len(quote)
    return found


def sentences(answer: str) -> list[tuple[str, list[int]]]:
    """The answer's sentences with the passage numbers each cites (a sentence without a number
    takes the previous sentence's). Marks standing after a full stop ("… to spanish. [2]") are
    not a sentence: they end the sentence before them, and cite it (beside its own numbers, if it
    has any) and, when it has none, the sentences before it back to the last one with a number of
    its own."""
    text = answer.strip()
    bounds = [0, *(match.end() for match in _SENTENCE.finditer(text) if ends_a_sentence(text, match)), len(text)]
    found: list[tuple[str, list[int]]] = []
    starts: list[int] = []
    own: list[bool] = []
    previous: list[int] = []
    for start, end in zip(bounds, bounds[1:], strict=False):
        sentence = text[start:end]
        if not sentence.strip():
            continue
        cites = cited_numbers(sentence)
        if not CITATION_MARK.sub("", sentence).strip(" \t\r\n.。"):
            if cites and found:
                found[-1] = (text[starts[-1]:end].strip(), found[-1][1])
                if own[-1]:
                    # "… in 1912 [1]. [2]": the sentence cites both, and the ones before it keep theirs.
                    cites = [*found[-1][1], *(number for number in cites if number not in found[-1][1])]
                    found[-1] = (found[-1][0], cites)
                else:
                    index = len(found) - 1
                    while index >= 0 and not own[index]:
                        found[index] = (found[index][0], cites)
                        index -= 1
                own[-1], previous = True, cites
            continue
        starts.append(start)
        own.append(bool(cites))
        cites = cites or previous
        found.append((sentence.strip(), cites))
        previous = cites
    return found


def check(answer: str, question: str, passages: Sequence[str], language: str) -> Grounding:
    """Each sentence of ``answer`` against the passages it cites (numbered from 1)."""
    if is_declined(CITATION_MARK.sub("", answer)):
        return Grounding([], declined_by="answer")
    question_terms = terms(question, language)
    question_numbers = numbers(question, language)
    parts = question_parts(question, language)
    part_terms = [terms(part, language) for part in parts] if len(parts) > 1 else []
    passage_terms = [terms(passage, language) for passage in passages]
    passage_numbers = [numbers(passage, language) for passage in passages]
    checked = []
    for text, cites in sentences(answer):
        part = _part_repeated(text, part_terms, language)

        def held_by(numbers_cited: list[int], text: str = text, part: dict[str, int] = part) -> SentenceSupport:
            """The sentence against one passage, or several read as one."""
            if len(numbers_cited) == 1:
                index = numbers_cited[0] - 1
                return _support(text, numbers_cited, question_terms, part, question_numbers, passages[index],
                                passage_terms[index], passage_numbers[index], language)
            joined = "\n".join(passages[number - 1] for number in numbers_cited)
            return _support(text, numbers_cited, question_terms, part, question_numbers, joined,
                            terms(joined, language), numbers(joined, language), language)

        valid = [number for number in cites if 1 <= number <= len(passages)]
        best: SentenceSupport | None = None
        cited_question = 0.0  # the most of the question a passage the sentence cites holds
        for number in valid or range(1, len(passages) + 1):
            support = held_by([number])
            cited_question = max(cited_question, support.whole_question)
            if best is None or (support.supported, support.new_terms) > (best.supported, best.new_terms):
                best = support
        if valid and len(valid) > 1 and not (best and best.supported):
            # Several numbers: the sentence stands if the passages together hold it.
            together = held_by(valid)
            best = together if together.supported else best
        if valid and best is not None and best.supported and len(valid) > 1 and len(best.cites) == 1:
            # One of its passages holds it alone: each mark names a passage that holds it, so a
            # mark naming one that does not is dropped.
            holding = [number for number in valid
                       if number == best.cites[0] or held_by([number]).supported]
            best.cites = holding
            if holding != valid:
                best.cited_instead = valid
        if valid and not (best and best.supported and best.new_terms == 1.0):
            # A small model sometimes cites the wrong number: another passage that holds the
            # sentence (or more of what it says than the one cited) becomes its citation, and the
            # trace says so; not a passage about something else (``REPOINTED_QUESTION_MARGIN``).
            for number in range(1, len(passages) + 1):
                if number in valid:
                    continue
                other = held_by([number])
                if other.whole_question < cited_question - REPOINTED_QUESTION_MARGIN:
                    continue
                if other.supported and (best is None or not best.supported or other.new_terms > best.new_terms):
                    other.cited_instead = valid
                    best = other
                    if other.new_terms == 1.0:
                        break
        if best is None:  # no passage at all: nothing supports it
            best = SentenceSupport(text, valid, False, 0.0, 0.0, whole_question=0.0)
        if not best.supported and len(passages) > 1:
            best = _drawn_from_two(best, valid, len(passages), held_by)
        checked.append(best)
    _parts_answered(checked, question_terms, passages, language)
    grounding = Grounding(checked)
    if not any(sentence.supported for sentence in checked):
        grounding.declined_by = "support"
    elif asks_only_for_a_number(question, language) and not states_an_amount(answer, question, language):
        grounding.declined_by = "number"
    return grounding


def asks_only_for_a_number(question: str, language: str) -> bool:
    """Whether ``question`` asks for a number (a count, a share or a year) and nothing else."""
    family = language_family(language)
    if _ASKS_FOR_NUMBER[family].search(question) is None:
        return False
    rest = _ASKS_FOR_NUMBER[family].sub(" ", question)
    return _QUESTION_WORDS[family].search(rest) is None


def states_an_amount(answer: str, question: str, language: str) -> bool:
    """Whether ``answer`` states a number the question does not, or an amount in words ("la mitad")."""
    text = CITATION_MARK.sub(" ", answer)
    return bool(numbers(text, language) - numbers(question, language)) \
        or _AMOUNT_WORDS[language_family(language)].search(text) is not None


def _part_repeated(sentence: str, part_terms: list[dict[str, int]], language: str) -> dict[str, int]:
    """The terms of the part of a two-part question ``sentence`` repeats the most of (by weight);
    {} for a question asking one thing, a sentence repeating none, or one repeating a fair weight
    of another part too ("结构应力是由于栉水母的…身体导致的，…栉水母的化石有多古老…": it is about the
    whole question)."""
    said = terms(sentence, language)
    weights = [sum(weight for term, weight in part.items() if term in said) for part in part_terms]
    if not weights or max(weights) == 0:
        return {}
    best = weights.index(max(weights))
    if any(weight >= LIGHTEST_CLAIM for index, weight in enumerate(weights) if index != best):
        return {}
    return part_terms[best]


def _drawn_from_two(best: SentenceSupport, valid: list[int], passage_count: int,
                    held_by: Callable[[list[int]], SentenceSupport]) -> SentenceSupport:
    """``best``, or the support of two passages together when one sentence answers a two-part
    question from both ("转子安装在驱动轴上，…论文是于1999年发表的 [1]。", the second fact in
    passage 2) and neither holds it alone. Each of the two must hold a part of what the sentence
    says that the other lacks: a passage adding nothing does not become a citation."""
    alone = {number: held_by([number]) for number in range(1, passage_count + 1)}
    most_missing = max(len(support.missing_numbers) for support in alone.values())
    # Only a passage holding some of what the sentence says can be one of the two.
    holding = [number for number, support in alone.items()
               if support.new_terms > 0 or len(support.missing_numbers) < most_missing]
    found = best
    for index, first in enumerate(holding):
        for second in holding[index + 1:]:
            together = held_by([first, second])
            both_needed = all(together.new_terms > alone[number].new_terms
                              or len(together.missing_numbers) < len(alone[number].missing_numbers)
                              for number in (first, second))
            if together.supported and both_needed and (not found.supported or together.new_terms > found.new_terms):
                found = together
    if found is not best and valid and found.cites != valid:
        found.cited_instead = valid
    return found


def _parts_answered(checked: list[SentenceSupport], question_terms: dict[str, int], passages: Sequence[str],
                    language: str) -> None:
    """Sentences that answer one part each of a two-part question, each from its own passage
    ("Dinamarca se incorporó a la UE en 1972 [1]. La conjetura de Polignac… [2]."): a passage
    holding one part holds little of the whole question, so the whole-question share is taken over
    the passages such sentences cite together. Only where two or more sentences hold their own
    words, each in the passage it cites, and those passages together hold the question's words as
    one passage must."""
    answering = [sentence for sentence in checked if sentence.cites and not sentence.missing_numbers
                 and sentence.new_terms >= NEW_TERMS_SUPPORTED]
    cited = sorted({number for sentence in answering for number in sentence.cites})
    short = [sentence for sentence in answering if not sentence.supported]
    if len(answering) < 2 or len(cited) < 2 or not short:
        return
    joined = "\n".join(passages[number - 1] for number in cited)
    share = _share(question_terms, terms(joined, language), joined)
    if share >= max(WHOLE_QUESTION_SUPPORTED, QUESTION_TERMS_SUPPORTED):
        for sentence in short:
            sentence.supported = True
            sentence.question_terms = max(sentence.question_terms, round(share, 3))
            sentence.whole_question = round(share, 3)
            sentence.parts_cited = cited


def repointed(answer: str, grounding: Grounding) -> str:
    """``answer`` with each re-pointed sentence citing the passages that hold it: the reader
    follows the mark to the passage, so the mark must name that one (the trace keeps what the
    model wrote, ``cited_instead``). A sentence that only inherits the previous sentence's mark
    has none of its own to change, but one that read the mark of a sentence re-pointed (the mark
    stood after the re-pointed sentence's full stop, "… . [1]") gets its own: otherwise changing
    that mark would take the passage holding them away from the sentences before it."""
    for index, sentence in enumerate(grounding.sentences):
        first = CITATION_MARK.search(sentence.text)
        if not sentence.cited_instead or first is None:
            continue
        if _closing_stop(sentence.text[:first.start()].rstrip()):
            answer = _marked_borrowers(answer, grounding.sentences[:index], sentence.cites)
        # The sentence's several marks become one, naming the passages that hold it.
        rest = re.sub(r"\s*" + CITATION_MARK.pattern, "", sentence.text[first.end():])
        answer = _rewritten(answer, sentence, sentence.text[:first.start()] + _mark(sentence.cites) + rest)
    return answer


_CLOSING = re.compile(r"[.!?。！？]*$")


def _closing_stop(text: str) -> str:
    """The full stops ``text`` ends with ("" when none)."""
    match = _CLOSING.search(text)
    return match.group() if match else ""


def _mark(cites: Sequence[int]) -> str:
    return "[" + ", ".join(str(number) for number in cites) + "]"


def _marked_borrowers(answer: str, before: Sequence[SentenceSupport], new_cites: list[int]) -> str:
    """``answer`` with the sentences at the end of ``before`` that have no mark (they read the next
    sentence's, written after its full stop, which now names ``new_cites``) each citing what the
    check found holds them. Each gets a mark of its own: a mark after a full stop is read back to the
    last sentence with one, so a mark on the first of them alone would leave the rest reading the
    changed one."""
    start = len(before)
    while start > 0 and CITATION_MARK.search(before[start - 1].text) is None:
        start -= 1
    borrowers = before[start:]
    if all(sentence.cites == new_cites for sentence in borrowers):
        return answer
    for sentence in borrowers:
        if sentence.cites:
            answer = with_mark(answer, sentence)
    return answer


def with_mark(answer: str, sentence: SentenceSupport) -> str:
    """``answer`` with ``sentence`` citing its passages before its closing stop ("… and summing [2].")."""
    end = len(sentence.text) - len(_closing_stop(sentence.text))
    return _rewritten(answer, sentence,
                      f"{sentence.text[:end].rstrip()} {_mark(sentence.cites)}{sentence.text[end:]}")


def _rewritten(answer: str, sentence: SentenceSupport, text: str) -> str:
    """``answer`` with ``sentence`` written as ``text`` (and the sentence's record with it)."""
    answer = answer.replace(sentence.text, text, 1)
    sentence.text = text
    return answer


def marked(answer: str, grounding: Grounding) -> tuple[str, list[int]]:
    """``answer`` (which cites no passage) with each supported sentence citing the passage that
    holds it, before its closing stop ("… and summing [2]."), and the numbers added in order."""
    added: list[int] = []
    for sentence in grounding.sentences:
        if not sentence.supported or not sentence.cites or CITATION_MARK.search(sentence.text):
            continue
        answer = with_mark(answer, sentence)
        added.extend(number for number in sentence.cites if number not in added)
    return answer, added


def _support(text: str, cites: list[int], question_terms: dict[str, int], part: dict[str, int],
             question_numbers: set[str], passage: str, held: dict[str, int], held_numbers: set[str],
             language: str) -> SentenceSupport:
    said = terms(text, language)
    own = {term: weight for term, weight in said.items() if term not in question_terms}
    own.update({quote: weight for quote, weight in quoted_terms(text, language).items() if quote not in question_terms})
    # What the sentence says the question is about: the question's terms it repeats (a sentence
    # answering one part of a two-part question repeats that part), else the whole question.
    echoed = {term: weight for term, weight in said.items() if term in question_terms}
    stated = numbers(text, language) - question_numbers
    missing = sorted(stated - held_numbers)
    if not own and not stated:
        # It only repeats the question ("Two treaties gave the EU more formal institutions"):
        # it answers nothing, whatever the passage says.
        new_share = 0.0
    elif sum(own.values()) < LIGHTEST_CLAIM and stated:
        # A word of its own beside a number ("4 pases") is wording: the number is the claim.
        new_share = 1.0
    else:
        new_share = _share(own, held, passage)
    # A sentence answering one part of a two-part question is about that part, whose answer is in
    # its own passage: the passage must hold the whole question or that part.
    whole_question_share = max(_share(question_terms, held, passage), _share(part, held, passage) if part else 0.0)
    question_share = max(whole_question_share,
                         _share(echoed, held, passage) if sum(echoed.values()) >= LIGHTEST_CLAIM else 0.0)
    supported = (not missing and new_share >= NEW_TERMS_SUPPORTED and question_share >= QUESTION_TERMS_SUPPORTED
                 and whole_question_share >= WHOLE_QUESTION_SUPPORTED)
    return SentenceSupport(text, list(cites), supported, round(new_share, 3), round(question_share, 3), missing,
                           round(whole_question_share, 3))
