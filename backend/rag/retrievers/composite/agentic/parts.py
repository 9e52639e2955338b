"""Whether a question asks several things, read from its clauses rather than asked of a model.

A question that asks one thing is searched whole by the first child, without a planning call:
the packaged 0.5B planner split every SciFact claim into "two parts" (copying the shape of its
worked examples) and searched shortened rewordings of it, which ranked below one search of the
claim (nDCG@10 0.791 against the Hybrid preset's 0.830 on the first 50); a worked example of a
one-part plan made it plan two-part questions as one part too. What tells the two apart is
written in the question: several question marks, or several clauses each holding an
interrogative word ("When did it open, and who painted it?", "¿Cuándo se fundó y quién la
dirige?", "它是哪一年啟用的，以及誰畫了壁畫？").
"""

from __future__ import annotations

import re

# Interrogative words by language. Spanish needs the accent: "que", "cuando" and "donde" without
# it are conjunctions and relatives ("la ciudad donde nació").
_INTERROGATIVES = {
    "en": re.compile(r"\b(?:what|which|who|whom|whose|when|where|why|how)\b", re.IGNORECASE),
    "es": re.compile(r"(?<!\w)(?:qué|quién|quiénes|cuál|cuáles|cuánto|cuánta|cuántos|cuántas|cuán|dónde|adónde|"
                     r"cuándo|cómo)(?!\w)", re.IGNORECASE),
    # 幾/几 but not 幾乎 ("almost"); bare 何 is also "any" (任何) and 幾何 "geometry", and 多 before
    # most characters is "many".
    "zh": re.compile(r"什麼|什么|哪|誰|谁|幾(?!乎)|几(?!乎)|何(?:時|时|年|地|處|处|人|種|种|者|職|职|物|事|國|国|名)|為何|为何|"
                     r"如何|怎麼|怎么|怎樣|怎样|是否|嗎|吗|多(?:少|大|久|長|长|高|遠|远|深|重|老|古老|快|寬|宽|早|晚)"),
}
# Where one clause may end and another begin. Chinese "和", "及" and "與" join nouns more often
# than clauses ("X和Y的關係是什麼"), and they sit inside words (共和國), so only the clause joiners count.
_CLAUSE_BREAKS = {
    "en": re.compile(r"[,;:]|\b(?:and|or|also|but)\b", re.IGNORECASE),
    "es": re.compile(r"[,;:]|(?<!\w)(?:y|e|o|u|además|pero)(?!\w)", re.IGNORECASE),
    "zh": re.compile(r"[，,；;：:、]|以及|還有|还有|並且|并且|另外|此外|同時|同时|而且"),
}
_QUESTION_MARK = re.compile(r"[?？]")
# A Chinese question may end where its answer would go ("…的名稱是？", "…意為？"); 認為 is "thinks".
_ZH_OPEN_END = re.compile(r"(?<![認认以成作])(?:是|為|为)$")
_ENDS = "?？。.!！ \t\n"


def question_parts(question: str, language: str) -> list[str]:
    """The things ``question`` (in ``language``: en, es, zh-Hant, zh-Hans) asks, each as the words
    that ask it; ``[question]`` when it asks one thing.

    It asks several things when it holds a question mark before its end (each sentence is a part)
    or when two of its clauses each hold an interrogative word. A part runs from one asking clause
    to the next: in English and Spanish the interrogative opens its clause, so a part starts there
    ("¿Qué fuerza actúa sobre una carga | y cuántos cuerpos exhumó…?"); in Chinese it ends the
    clause, so a part ends there ("…會導致什麼，| 以及在蒸汽渦輪中，轉子安裝在什麼東西上？"). The
    joining words and marks between two parts belong to neither. A language without rules is read
    by the English ones; a question with no interrogative word (a claim, a keyword query) asks one
    thing.
    """
    family = "zh" if language.startswith("zh") else language if language in _INTERROGATIVES else "en"
    body = question.strip().rstrip(_ENDS)
    if _QUESTION_MARK.search(body):
        sentences = [match.group(0).strip() for match in re.finditer(r"[^?？]+[?？]?", question.strip())]
        return [sentence for sentence in sentences if sentence.strip(_ENDS + "¿")] or [question]
    breaks = list(_CLAUSE_BREAKS[family].finditer(body))
    starts = [0, *(found.end() for found in breaks)]
    ends = [*(found.start() for found in breaks), len(body)]
    clauses = [body[start:end].strip() for start, end in zip(starts, ends, strict=True)]
    asking = [_asks(clause, family) for clause in clauses]
    if sum(asking) < 2:
        return [question]
    asking_at = [index for index, asks in enumerate(asking) if asks]
    if family == "zh":
        # A part ends with its asking clause; clauses after the last one belong to it.
        cuts = [(asking_at[0] if number == 0 else asking_at[number - 1] + 1,
                 len(clauses) - 1 if number == len(asking_at) - 1 else index)
                for number, index in enumerate(asking_at)]
    else:
        # A part opens with its asking clause; clauses before the first one belong to it.
        cuts = [(0 if number == 0 else index,
                 asking_at[number + 1] - 1 if number + 1 < len(asking_at) else len(clauses) - 1)
                for number, index in enumerate(asking_at)]
    if family == "zh":
        cuts[0] = (0, cuts[0][1])
    parts = [_trimmed(body[starts[first]:ends[last]], family) for first, last in cuts]
    return parts if all(parts) else [question]


def asks_several_things(question: str, language: str) -> bool:
    """Whether ``question`` asks more than one thing (``question_parts`` finds two or more)."""
    return len(question_parts(question, language)) >= 2


def _trimmed(part: str, family: str) -> str:
    """``part`` without the joining words and marks at its edges ("以及", "y", "¿")."""
    joiner = _CLAUSE_BREAKS[family].pattern
    part = re.sub(rf"^(?:\s|¿|{joiner})+", "", part, flags=_CLAUSE_BREAKS[family].flags)
    return re.sub(rf"(?:\s|{joiner})+$", "", part, flags=_CLAUSE_BREAKS[family].flags)


def _asks(clause: str, family: str) -> bool:
    if family == "en":
        # English relatives are the interrogatives ("the forces which affect flutter"): a clause
        # asks when one opens it, after at most a preposition and an article ("and in which year").
        clause = " ".join(clause.split()[:3])
    if _INTERROGATIVES[family].search(clause):
        return True
    return family == "zh" and bool(_ZH_OPEN_END.search(clause))
