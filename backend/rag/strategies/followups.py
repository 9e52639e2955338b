"""Each turn of a conversation searches a question that stands on its own.

Searching a follow-up together with the previous question finds the previous question's passages
("When was the lighthouse first lit?" after a question about a bridge found the bridge), and
searching "When did it open?" alone finds nothing. So a question that refers to earlier turns is
rewritten into one that names what it refers to; a question that already stands alone is
searched as it is, with no model call. The model is asked only which words of the conversation
the reference stands for (the packaged models copy the question back when asked to rewrite it);
the words must come from the conversation, a Spanish pronoun must agree with them ("ella" is not
"el CISCE"), and the question is rewritten with them by rule; a name it writes with a word of the
question ("诺曼人的城堡" for "它的城堡") is taken alone. The model is not asked when the follow-up
repeats, beside its reference, a word the previous question joined to one thing ("presidente de él"
after "…presidente del IPCC?", "它的防守" after "黑豹队的防守…"): that thing is taken (asked, the 1.5B
named the previous answer's person). Words it cannot take give way to
the only name in the conversation the reference can stand for, then to the only thing the previous
question names (a follow-up most often goes on about it: "What does it combine?" after "How do I
build a hybrid retriever?"), else to the previous question searched beside this one; the model is
not asked again (asked again, the 1.5B copied a worked
example: it rescued 1 of 37 refused follow-ups of the XQuAD development set).

Choosing from a numbered list of the conversation's names was measured and not kept: the 1.5B took
the first option 19 times in 25, right when the reference stands for the previous question's
subject (as in the development set) and wrong when it stands for the previous answer ("Where did
she study?" after "Ada Morrow designed the Kestrel Bridge": 1 of 8 such conversations, against 6
of 8 asked for the words).

Which questions refer back is decided from their words: a pronoun or demonstrative standing for
something not named in the question ("it", "su", "它"), an opening that continues the
conversation ("And …?", "¿Y …?"), or a question that names at most one thing ("¿Cuándo se
inauguró?").
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag.llms import LLMError
from rag.retrievers.sparse.text import chinese_names, chinese_nouns, chinese_possessors

from .answer_prompts import CITATION_MARK, detect_language
from .grounding import language_family, numbers, terms

HISTORY_TURNS = 2
"""How many previous question–answer pairs the rewrite reads."""
ANSWER_CHARACTERS = 300
"""How much of each previous answer it reads (the subject is named early)."""
FEW_TERMS = 3
"""A question naming more things than this carries its own subject: its possessives and
demonstratives refer within it."""

# What refers back, strongest first: the word the model is asked about is the first found.
_PRONOUNS = {
    "en": [r"\b(it|they|them|he|him|she)\b", r"\b(its|their|his|her)\b",
           r"\b(this|these|those)\b|\b(that|there|then)\s*\?"],
    "es": [r"\b(él|ella|ellos|ellas|ello)\b", r"\b(su|sus)\b",
           r"\b(este|esta|estos|estas|esto|ese|esa|esos|esas|eso|aquel|aquella|dicho|dicha|allí|allá|ahí)\b",
           r"\b(lo|le|les)\b"],
    "zh": [r"它們|它们|他們|他们|她們|她们|(?<!其)[它他她]", r"其(?!他|實|实|中)", r"這|这|那|該|该|(?<![因如])此"],
}
_OPENINGS = {
    "en": re.compile(r"^\s*(and|also|what about|how about|but)\b", re.IGNORECASE),
    "es": re.compile(r"^\s*[¿¡]?\s*(y|también|pero|qué tal)\b", re.IGNORECASE),
    "zh": re.compile(r"^\s*(還有|还有|而)"),
}
_POSSESSIVE = {"en": {"its", "their", "his", "her"}, "es": {"su", "sus"}, "zh": {"其"}}
_SUBSTITUTED = {"en": {"it", "they", "them", "he", "him", "she"}, "es": {"él", "ella", "ellos", "ellas", "ello"},
                "zh": {"它們", "它们", "他們", "他们", "她們", "她们", "它", "他", "她"}}
# A Spanish personal pronoun agrees with what it stands for: "ella" is not "el CISCE".
_AGREEMENT = {"él": ({"el", "del", "al"}, "masculine singular"), "ella": ({"la"}, "feminine singular"),
              "ellos": ({"los"}, "masculine plural"), "ellas": ({"las"}, "feminine plural")}
_ARTICLES = {"es": r"el|la|los|las|del|al", "en": r"the"}
_JOINERS = {"es": r"de|del|de la|de los|de las", "en": r"of|of the"}
# Words written with a capital only because they open a sentence.
_OPENERS = {"es": {"además", "también", "según", "durante", "aunque", "cuando", "donde", "después", "antes",
                   "mientras", "junto", "desde", "hasta", "tras", "entre", "para", "por", "con", "sin", "sobre"},
            "en": {"also", "however", "after", "before", "during", "when", "where", "which", "what", "who", "how",
                   "besides", "since", "while", "apart", "along", "according"}}
INSTRUCTIONS = (
    "Read the conversation and the last question. Say which words of the conversation the marked words of "
    "the last question stand for (when nothing is marked: what the last question is about). Answer with "
    "those words only, copied from the conversation."
)
NOTHING_MARKED = "(none: the question leaves out what it is about)"
# Worked examples in other words than documents are likely to hold, so the model learns the move,
# not a subject.
EXAMPLES = (
    ("Q: How long is the Danube?\nA: The Danube is 2,850 km long.", "Which countries does it flow through?",
     "it", "the Danube"),
    ("Q: ¿Quién pintó Las Meninas?\nA: Las Meninas la pintó Diego Velázquez.", "¿En qué museo está expuesta ella?",
     "ella", "Las Meninas"),
    ("Q: 珠穆朗瑪峰有多高？\nA: 珠穆朗瑪峰高 8,849 公尺。", "它位於哪兩個國家的邊界？", "它", "珠穆朗瑪峰"),
    ("Q: ¿Cuántos goles marcó el Real Madrid en 2010?\nA: Marcó 102 goles.", "¿Quién era su entrenador?", "su",
     "el Real Madrid"),
    ("Q: When was the Sydney Opera House opened?\nA: It opened in 1973.", "And who designed it?", "it",
     "the Sydney Opera House"),
    ("Q: ¿Qué río pasa por Sevilla?\nA: El Guadalquivir.", "¿Dónde nace?", NOTHING_MARKED, "El Guadalquivir"),
)


@dataclass
class SearchQuestion:
    """The question searched for this turn, and how it was decided (for the trace)."""

    question: str
    rewritten: bool
    reason: str
    refers_to: str | None = None
    marked: str | None = None
    attempts: list[dict[str, Any]] = field(default_factory=list)
    answered: str | None = None
    """The question the model answers and its answer is checked against, when it is not the one
    searched: a question searched beside the previous one is answered as asked (reading both, the
    model answered both, and the check judged the answer against both questions' words)."""

    def to_dict(self, original: str) -> dict[str, Any]:
        return {"question": original, "search_question": self.question, "rewritten": self.rewritten,
                "reason": self.reason, "marked": self.marked, "refers_to": self.refers_to,
                "attempts": self.attempts, "answered_question": self.answered or self.question}


def _flags(family: str) -> int:
    return 0 if family == "zh" else re.IGNORECASE


def marked_word(question: str, language: str | None = None) -> re.Match[str] | None:
    """The word of ``question`` that most clearly stands for something named earlier."""
    family = language_family(language or detect_language(question))
    for pattern in _PRONOUNS[family]:
        found = re.search(pattern, question, _flags(family))
        if found:
            return found
    return None


def refers_back(question: str, language: str | None = None) -> bool:
    """Whether ``question`` refers to something earlier turns named: a personal pronoun; a
    possessive, a demonstrative or an opening that continues the conversation in a question that
    names little else ("¿Cuál es su capital?", not "¿Quién, a su llegada, unió a los colonos?");
    or no subject at all (Spanish and Chinese drop it: "¿Cuándo se inauguró?" names one thing)."""
    language = language or detect_language(question)
    family = language_family(language)
    named = len(terms(question, language))
    if named <= 1:
        return True
    marked = marked_word(question, language)
    if marked is not None and re.fullmatch(_PRONOUNS[family][0], marked.group(0), _flags(family)):
        return True
    return (marked is not None or bool(_OPENINGS[family].search(question))) and named <= FEW_TERMS


def _conversation(history: Sequence[dict[str, str]]) -> str:
    lines: list[str] = []
    for turn in list(history)[-2 * HISTORY_TURNS:]:
        content = " ".join(CITATION_MARK.sub("", turn.get("content", "")).split())
        if turn.get("role") == "user":
            lines.append(f"Q: {content}")
        elif turn.get("role") == "assistant":
            lines.append(f"A: {content[:ANSWER_CHARACTERS]}")
    return "\n".join(lines)


def _ask(conversation: str, question: str, marked: str) -> str:
    return f"Conversation:\n{conversation}\n\nLast question: {question}\nMarked words: {marked}"


def _prompt(conversation: str, question: str, marked: str) -> list[dict[str, str]]:
    messages = [{"role": "system", "content": INSTRUCTIONS}]
    for example_conversation, example_question, example_marked, referent in EXAMPLES:
        messages.append({"role": "user", "content": _ask(example_conversation, example_question, example_marked)})
        messages.append({"role": "assistant", "content": referent})
    messages.append({"role": "user", "content": _ask(conversation, question, marked)})
    return messages


def _clean(answer: str) -> str:
    first = answer.strip().splitlines()[0] if answer.strip() else ""
    return first.strip(" \"'“”«»「」。.,;:!?¿¡").strip()


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def referent_problems(referent: str, conversation: str, marked: str, question: str = "",
                      language: str = "en") -> list[str]:
    """Why ``referent`` cannot stand for the marked words: empty, not taken from the
    conversation, words that refer back themselves ("这项"), too long to be a name, the marked
    words themselves, something the question already names (a pronoun stands for what the
    question leaves out: "¿Cuándo amplió Lutero sus ataques a las doctrinas de ella?" is not
    about Lutero twice), a bare number or date, or a name a Spanish pronoun does not agree with."""
    if not referent:
        return ["the answer was empty"]
    if _folded(referent) == _folded(marked):
        return ["the answer repeats the marked words"]
    if len(referent.split()) > 8 or len(referent) > 80:
        return ["the answer is too long: give only the words the marked words stand for"]
    if _folded(referent) not in _folded(conversation):
        return ["those words are not in the conversation: copy them from it"]
    referring = marked_word(referent, language)
    if referring is not None and referring.start() == 0:
        # "这项" (from "颁布了这项公文") refers back itself: it names nothing.
        return ["those words refer to something themselves: give the words that name it"]
    named = terms(referent, language)
    if not named and numbers(referent, language):
        return ["those words name nothing the question could be about (a number or a date is not a subject)"]
    if language_family(language) == "es" and not _SPANISH_NOUN_PHRASE.match(referent):
        # "irracional y atrasado" for the él of "…textos que hacen referencia a él describen a la gente
        # como, ¿qué?": the model answered the question instead.
        return ["those words are not a name or a thing with its article: give the name of what it stands for"]
    if named and question and all(term in terms(question, language) for term in named):
        return ["the question already names that: the marked words stand for something else in the conversation"]
    agreement = _AGREEMENT.get(marked.casefold()) if language_family(language) == "es" else None
    if agreement is not None:
        articles, kind = agreement
        article = _article_before(referent, conversation)
        if article is not None and article not in articles:
            return [f"\"{marked}\" cannot stand for \"{referent}\": one is {kind}, the other not"]
    return []


# What a Spanish pronoun can stand for: a name (a capital, or digits: "la Ley 30") or a thing with
# its article or determiner ("el puente", "una ciudad").
_SPANISH_NOUN_PHRASE = re.compile(r"(?i:(el|la|los|las|lo|un|una|unos|unas|del|al|este|esta|estos|estas|ese|esa|"
                                  r"esos|esas|aquel|aquella|aquellos|aquellas)\s)|.*[A-ZÁÉÍÓÚÑÜ0-9]")


def _article_before(referent: str, conversation: str) -> str | None:
    """The Spanish article ``referent`` opens with, or that stands before it in ``conversation``."""
    own = re.match(rf"(?i:({_ARTICLES['es']}))\s+\S", referent)
    if own:
        return own.group(1).casefold()
    before = re.search(rf"\b(?i:({_ARTICLES['es']}))\s+{re.escape(referent)}", conversation)
    return before.group(1).casefold() if before else None


def rewrite(question: str, referent: str, marked: re.Match[str] | None, language: str) -> str:
    """``question`` with ``referent`` in place of its marked word: a personal pronoun is replaced,
    a possessive becomes "of …" ("su capital" → "capital de …"), anything else (a demonstrative,
    a dropped subject) keeps its words and names the referent after the question."""
    family = language_family(language)
    if marked is not None:
        word = marked.group(0)
        key = word if family == "zh" else word.casefold()
        before, after = question[:marked.start()], question[marked.end():]
        if key in _SUBSTITUTED[family]:
            if family == "es":
                # "de él" → "del IPCC", "a él" → "al IPCC".
                contracted = re.match(r"(?i:el)\s+", referent)
                preposition = re.search(r"\b(?i:(de|a))\s+$", before)
                if contracted and preposition:
                    return f"{before[:preposition.start()]}{preposition.group(1)}l {referent[contracted.end():]}{after}"
            return f"{before}{referent}{after}"
        if key in _POSSESSIVE[family]:
            if family == "zh":
                return f"{before}{referent}的{after}"
            if family == "en":
                return f"{before}{referent}'s{after}"
            noun = re.match(r"\s*(\w+)", after)
            if noun:
                return f"{before}{noun.group(1)} de {referent}{after[noun.end():]}"
    spacer = "" if family == "zh" else " "
    return f"{question.rstrip()}{spacer}({referent})"


def _names(text: str, family: str) -> list[tuple[str, str | None]]:
    """The names ``text`` holds, each with the article before it ("la Iglesia" → ("Iglesia", "la")):
    runs of capitalised words, joined by "de", "of" and the like."""
    capital = r"[A-ZÁÉÍÓÚÑÜ][\w\-.']*"
    name = re.compile(rf"(?:\b(?i:({_ARTICLES[family]}))\s+)?({capital}(?:\s+(?:(?:{_JOINERS[family]})\s+)?{capital})*)")
    found = []
    for match in name.finditer(text):
        article = match.group(1).casefold() if match.group(1) else None
        words = match.group(2).strip(" .'")
        before = text[:match.start()].rstrip()
        opening = not before or before[-1] in ".?!¿¡«\"“(:"
        if article is None and opening and words.casefold() in _OPENERS[family]:
            continue  # "Además de publicar …": a capital because it opens the sentence
        found.append((words, article))
    return found


# A thing named in lower case: an article and up to three words after it, up to a word that joins or asks.
_ARTICLE = {"en": re.compile(r"\b(?i:(a|an|the))(?=\s)"), "es": re.compile(r"\b(?i:(el|la|los|las))(?=\s)")}
_LOWER_WORD = {"en": re.compile(r"\s+([a-z][\w\-]*)"), "es": re.compile(r"\s+([a-záéíóúñü][\w\-]*)")}
# "Which web framework…?", "¿Qué río…?": the question asks which thing of a kind, and its answer names it.
_ASKS_WHICH = {
    "en": re.compile(r"\b(?i:which|what)\s+(?!(?i:is|are|was|were|do|does|did|has|have|had|can|could|will|would|"
                     r"should)\b)[a-z]"),
    "es": re.compile(r"(?i:\b(?:qué|cuál|cuáles)\s+(?!(?:es|son|fue|fueron|era|eran|se|ha|han)\b)[a-záéíóúñü])"),
}
_PHRASE_ENDS = {
    "en": {"of", "in", "on", "for", "to", "with", "and", "or", "that", "which", "who", "is", "are", "was", "were",
           "do", "does", "did", "be", "by", "from", "at", "as", "has", "have", "had"},
    "es": {"de", "del", "en", "con", "por", "para", "que", "y", "o", "a", "al", "es", "son", "fue", "fueron", "se",
           "ha", "han", "tiene", "tienen"},
}


def _noun_phrases(text: str, family: str) -> list[tuple[str, str | None]]:
    """The things ``text`` names in lower case, with their article ("a hybrid retriever";
    ("puente", "el") in Spanish, which shows the article as it agrees)."""
    found = []
    for match in _ARTICLE[family].finditer(text):
        words: list[str] = []
        position = match.end()
        while len(words) < 3:
            word = _LOWER_WORD[family].match(text, position)
            if word is None or word.group(1) in _PHRASE_ENDS[family] or _ARTICLE[family].fullmatch(word.group(1)):
                break
            words.append(word.group(1))
            position = word.end()
        if words:
            # English shows the article with the words ("a hybrid retriever"); Spanish adds its own.
            article = match.group(1).casefold()
            found.append((f"{article} {' '.join(words)}", None) if family == "en" else (" ".join(words), article))
    return found


def candidates(history: Sequence[dict[str, str]], question: str, marked: str, language: str) -> list[str]:
    """The names the marked words of ``question`` may stand for: those of the previous question,
    then of its answer, that ``question`` does not name, that a Spanish personal pronoun agrees
    with ("ella": "la India", not "el CISCE"), and that name something (not a bare number). Names
    are runs of capitalised words; in Chinese, which has no capitals, the words jieba's
    part-of-speech tagger reads as names ("哪一位法国皇帝…" names 法国)."""
    family = language_family(language)
    previous_answer = next((turn.get("content", "") for turn in reversed(history)
                            if turn.get("role") == "assistant"), "")
    found: list[str] = []
    for text in (_previous_question(history), CITATION_MARK.sub("", previous_answer)[:ANSWER_CHARACTERS]):
        named_in_text = ([(name, None) for name in chinese_names(text)] if family == "zh"
                         else _names(text, family))
        for shown in _eligible(named_in_text, question, marked, language):
            if all(_folded(shown) != _folded(other) for other in found):
                found.append(shown)
    return found


def previous_subject(history: Sequence[dict[str, str]], question: str, marked: str, language: str) -> str | None:
    """The one thing the previous question names, when it names only one the marked words of
    ``question`` may stand for ("a hybrid retriever" in "How do I build a hybrid retriever?"):
    names and things in lower case with their article count alike (in Chinese, every noun jieba's
    tagger reads: "阿波罗宇航员穿的太空服…" names three). None when it names several or none, or
    asks which thing of a kind ("Which web framework…?"), whose answer names it."""
    family = language_family(language)
    previous = _previous_question(history)
    if family == "zh":
        things: list[tuple[str, str | None]] = [(noun, None) for noun in chinese_nouns(previous)]
    elif _ASKS_WHICH[family].search(previous):
        return None
    else:
        things = _names(previous, family) + _noun_phrases(previous, family)
    eligible = list(dict.fromkeys(_eligible(things, question, marked, language)))
    return eligible[0] if len(eligible) == 1 else None


# The word a follow-up's pronoun is joined to ("el presidente de él", "its capital", "它的防守"), and
# how the previous question joins that word to a thing ("presidente del IPCC", "capital of France").
_JOINED_BEFORE = {"es": re.compile(r"(?i:\b(\w+)\s+de\s+)$"), "en": re.compile(r"(?i:\b(\w+)\s+of\s+)$")}
_WORD_AFTER = re.compile(r"\s+(\w+)")
_JOINED_IN_PREVIOUS = {"es": r"\b{word}\s+(?:del?\s+)(?:(?:la|los|las)\s+)?", "en": r"\b{word}\s+of\s+"}
LEAST_REPEATED_CHARACTERS = 2
"""How many characters after "它的" must repeat what follows a noun's "的" in the previous question."""


def parallel_referent(history: Sequence[dict[str, str]], question: str, marked: re.Match[str] | None,
                      language: str) -> str | None:
    """What the marked word of ``question`` stands for when the question repeats a word the previous
    question joins to one thing, with the marked word in that thing's place: "¿Quién es el presidente
    de él?" after "¿Cuándo renunció Pachauri como presidente del IPCC?" (él: el IPCC, though the
    answer named a person), "它的防守" after "黑豹队的防守". None when nothing is so repeated, when it
    is joined to several things, or when putting the thing back asks the previous question again
    ("Who is the father of him?" after "Who is the father of the king?" asks about the answer)."""
    if marked is None:
        return None
    family = language_family(language)
    previous = " ".join(CITATION_MARK.sub("", _previous_question(history)).split())
    joined_to = _chinese_joined_to if family == "zh" else _joined_to
    found = joined_to(previous, question, marked, family)
    eligible = list(dict.fromkeys(_eligible(found, question, marked.group(0), language)))
    if len(eligible) != 1:
        return None
    again = rewrite(question, eligible[0], marked, language)
    return None if terms(again, language) == terms(previous, language) else eligible[0]


def _joined_to(previous: str, question: str, marked: re.Match[str], family: str) -> list[tuple[str, str | None]]:
    """The things (with their article) ``previous`` joins to the word the marked pronoun of
    ``question`` is joined to: "presidente del IPCC" for "presidente de él", "the king's speech" for
    "his speech"."""
    word = marked.group(0).casefold()
    joined = _JOINED_BEFORE[family].search(question[:marked.start()]) if word in _SUBSTITUTED[family] else \
        _WORD_AFTER.match(question, marked.end()) if word in _POSSESSIVE[family] else None
    if joined is None:
        return []
    things = _names(previous, family) + _noun_phrases(previous, family)
    pattern = _JOINED_IN_PREVIOUS[family].format(word=re.escape(joined.group(1)))
    followings = [previous[place.end():].casefold() for place in re.finditer(pattern, previous, re.IGNORECASE)]
    found = [(name, article) for following in followings for name, article in things
             if following.startswith(name.casefold())
             or (family == "en" and following.startswith(f"the {name.casefold()}"))]
    if family == "en":  # "the king's father" joins "father" to "the king" too
        found += [(name, article) for name, article in things
                  if re.search(rf"{re.escape(name)}'s?\s+{re.escape(joined.group(1))}\b", previous, re.IGNORECASE)]
    return found


def _chinese_joined_to(previous: str, question: str, marked: re.Match[str], family: str) -> list[tuple[str, str | None]]:
    """The nouns ``previous`` joins with 的 to the most of what follows 它的 (or 其) in ``question``."""
    after = question[marked.end():]
    if marked.group(0) in _SUBSTITUTED[family] and after.startswith("的"):
        after = after[1:]
    elif marked.group(0) not in _POSSESSIVE[family]:
        return []
    shared: dict[str, int] = {}
    for noun, start in chinese_possessors(previous):
        shared[noun] = max(shared.get(noun, 0), len(os.path.commonprefix([previous[start:], after])))
    longest = max(shared.values(), default=0)
    if longest < LEAST_REPEATED_CHARACTERS:
        return []
    return [(noun, None) for noun, length in shared.items() if length == longest]


def _previous_question(history: Sequence[dict[str, str]]) -> str:
    return next((turn.get("content", "") for turn in reversed(history) if turn.get("role") == "user"), "")


def _eligible(named: Sequence[tuple[str, str | None]], question: str, marked: str, language: str) -> list[str]:
    """Of ``named`` (words and the Spanish article before them), those the marked words of
    ``question`` may stand for, as a rewrite shows them: naming something, not all named by the
    question already, agreeing with a Spanish personal pronoun."""
    family = language_family(language)
    agreement = _AGREEMENT.get(marked.casefold()) if family == "es" else None
    agreeing = agreement[0] if agreement else None
    asked = terms(question, language)
    eligible = []
    for name, article in named:
        words = terms(name, language)
        if not words or all(term in asked for term in words):
            continue
        if agreeing is not None and article is not None and article not in agreeing:
            continue
        eligible.append(f"{'el' if article in ('del', 'al') else article} {name}" if article and family == "es" else name)
    return eligible


def standalone(question: str, history: Sequence[dict[str, str]], llm: Any) -> SearchQuestion:
    """The question to search for ``question`` after ``history``: as asked when there is no
    earlier turn or it does not refer back; otherwise with what it refers to named, as ``llm``
    finds it in the conversation (it is asked only which words the reference stands for, which a
    small model does far more reliably than rewriting the question); words it cannot take give way
    to the only name the reference can stand for, then to the only thing the previous question
    names, else to the previous question beside this one."""
    if not any(turn.get("role") == "user" for turn in history):
        return SearchQuestion(question, False, "first question")
    language = detect_language(question)
    if not refers_back(question, language):
        return SearchQuestion(question, False, "stands alone")
    if llm is None:
        return SearchQuestion(question, False, "refers back, but no model rewrites follow-ups")
    marked = marked_word(question, language)
    marked_text = marked.group(0) if marked is not None else NOTHING_MARKED
    conversation = _conversation(history)
    attempts: list[dict[str, Any]] = []

    def named(referent: str, reason: str) -> SearchQuestion:
        return SearchQuestion(rewrite(question, referent, marked, language), True, reason, referent, marked_text,
                              attempts)

    # A word of the previous question repeated beside the marked word says what it stands for more
    # surely than the 1.5B, which names the previous answer's person for the él of "presidente de él".
    parallel = parallel_referent(history, question, marked, language)
    if parallel is not None:
        return named(parallel, "repeats the previous question's words, with the marked words where they named it")
    try:
        answer = llm.generate(_prompt(conversation, question, marked_text), max_tokens=32)
    except LLMError as exc:
        # A follow-up model that fails costs the rewrite, not the answer.
        attempts.append({"raw": "", "problems": [str(exc)]})
        return SearchQuestion(question, False, "the follow-up model failed; searching the question as asked",
                              None, marked_text, attempts)
    referent = _clean(answer)
    problems = referent_problems(referent, conversation, marked_text, question, language)
    attempts.append({"raw": answer[:200], "problems": problems})
    # Written with a word of the question ("诺曼人的城堡" for "它的城堡"), the name alone is taken: the
    # whole would name the word twice ("…发现了瘟疫鼠疫耶氏菌的菌株的什么菌株").
    inside = without_question_words(referent, question, marked, language)
    if inside is not None and not referent_problems(inside, conversation, marked_text, question, language):
        attempts[-1]["taken"] = inside
        return named(inside, "refers to earlier turns (the model wrote them with a word of the question)")
    if not problems:
        return named(referent, "refers to earlier turns")
    names = candidates(history, question, marked_text, language)
    if len(names) == 1:
        return named(names[0], "refers to the only name in the conversation it can stand for")
    # A follow-up most often goes on about what the previous question asked about.
    subject = previous_subject(history, question, marked_text, language)
    if subject is not None:
        return named(subject, "refers to the only thing the previous question names")
    return SearchQuestion(beside_previous(question, history, language), True,
                          "the model found no words in the conversation it refers to; searching it beside the "
                          "previous question, which names what it is about", None, marked_text, attempts,
                          answered=question)


# A name written with a word of the question: "诺曼人的城堡" and "the Normans' castle" for "它的城堡" and
# "their castle", "la capital de Francia" for "su capital", "瘟疫鼠疫耶氏菌的菌株" for "它的什么菌株".
_NAME_WITH_WORD = {
    "zh": re.compile(r"^(?P<name>.+?)的(?P<word>[^的]+)$"),
    "en": re.compile(r"^(?P<name>.+?)'s?\s+(?P<word>.+)$", re.IGNORECASE),
    "es": re.compile(r"^(?:(?:el|la|los|las)\s+)?(?P<word>.+?)\s+(?:de|del|de la|de los|de las)\s+(?P<name>.+)$",
                     re.IGNORECASE),
}
LEAST_QUESTION_WORD = 2
"""How many characters the question's word must have: one character in common is as often chance."""


def without_question_words(referent: str, question: str, marked: re.Match[str] | None,
                           language: str) -> str | None:
    """The name inside ``referent`` when the model wrote it with a word the question holds after
    the marked word ("诺曼人的城堡" for "它的城堡", "la capital de Francia" for "su capital"), rather
    than the name alone; None when ``referent`` is not so written."""
    if marked is None:
        return None
    family = language_family(language)
    written = _NAME_WITH_WORD[family].match(referent.strip())
    if written is None:
        return None
    word, after = written.group("word").strip(), question[marked.end():]
    if len(word) < LEAST_QUESTION_WORD:
        return None
    held = word in after if family == "zh" else re.search(rf"\b{re.escape(word)}\b", after, re.IGNORECASE)
    if not held:
        return None
    return written.group("name").strip() or None


def beside_previous(question: str, history: Sequence[dict[str, str]], language: str) -> str:
    """``question`` with the previous question after it, in parentheses: a question that refers
    back and whose referent could not be named is searched with what it refers to nearby (asked
    alone, "¿Cuántas juntas de examen existen en ella?" finds nothing). Only the search reads
    both: the model answers the question as asked, from the passages the search found."""
    previous = next((turn.get("content", "") for turn in reversed(history) if turn.get("role") == "user"), "")
    previous = " ".join(CITATION_MARK.sub("", previous).split())
    if not previous:
        return question
    spacer = "" if language_family(language) == "zh" else " "
    return f"{question.rstrip()}{spacer}({previous})"
