"""Answer normalisation per language, exact match, token F1, citation precision, and the
faithfulness judge."""

import pytest

from rag.evaluation import (
    answer_contains,
    answer_tokens,
    citation_precision,
    concise_contains,
    exact_match,
    judge_faithfulness,
    longest_shared_span,
    normalize_answer,
    strip_citations,
    token_f1,
    verbatim_copy,
)
from rag.llms.base import Attempt

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("language", "text", "expected"), [
    ("en", "The Denver Broncos!", "denver broncos"),
    ("en", "  an  apple,  a day ", "apple day"),
    ("es", "¿El año de la victoria?", "año de victoria"),
    ("es", "Los Broncos de Denver", "broncos de denver"),
    ("zh", "“黑豹队”。", "黑豹队"),
    ("en", "Ｆｕｌｌ-width ＡＢＣ", "full width abc"),
])
def test_normalisation_lowercases_and_drops_punctuation_and_the_languages_articles(language, text, expected):
    assert normalize_answer(text, language) == expected


def test_spanish_articles_stay_in_english_text():
    assert normalize_answer("la", "en") == "la"
    assert normalize_answer("the", "es") == "the"


def test_chinese_is_compared_by_characters_and_other_runs_stay_words():
    assert answer_tokens("308分，第6名", "zh") == ["308", "分", "第", "6", "名"]
    assert answer_tokens("卡万·肖特 Kawann Short", "zh") == ["卡", "万", "肖", "特", "kawann", "short"]


def test_exact_match_ignores_spacing_between_chinese_characters_and_numbers():
    assert exact_match("308 分", ["308分"], "zh") == 1.0
    assert exact_match("309分", ["308分"], "zh") == 0.0


def test_exact_match_takes_the_best_reference():
    assert exact_match("the Broncos", ["Denver", "Broncos"], "en") == 1.0
    assert exact_match("Denver Broncos", ["Broncos"], "en") == 0.0


def test_token_f1_by_hand():
    # [cat, sat] against [cat, sat, down]: precision 1, recall 2/3, F1 0.8.
    assert token_f1("The cat sat.", ["cat sat down"], "en") == pytest.approx(0.8)
    # 黑豹队 against 黑豹: 2 common characters, precision 2/3, recall 1, F1 0.8.
    assert token_f1("黑豹队", ["黑豹"], "zh") == pytest.approx(0.8)
    assert token_f1("nothing alike", ["cat"], "en") == 0.0
    assert token_f1("cat cat", ["cat"], "en") == pytest.approx(2 * 0.5 * 1 / 1.5)


def test_a_generated_sentence_contains_the_short_reference():
    assert answer_contains("They should be pruned in late winter [1].", ["late winter"], "en") == 1.0
    assert answer_contains("In spring.", ["late winter"], "en") == 0.0
    assert answer_contains("防守丢了308分。", ["308 分"], "zh") == 1.0


@pytest.mark.parametrize(("language", "answer", "reference"), [
    ("es", "Josh Norman interceptó 4 balones [1].", "cuatro"),
    ("es", "Fueron veinte jugadores.", "20"),
    ("en", "Four players made the Pro Bowl.", "4"),
    ("zh", "黑豹队有4名球员入选 [1]。", "四名"),
    ("zh", "他们拦截了二十四次。", "24"),
    ("zh", "这座桥建于一九八九年。", "1989年"),
    ("zh", "共有一百零五人。", "105人"),
])
def test_a_number_in_digits_is_the_same_answer_as_the_number_in_words(language, answer, reference):
    assert answer_contains(strip_citations(answer), [reference], language) == 1.0
    assert concise_contains(answer, [reference], language) == 1.0


@pytest.mark.parametrize(("language", "answer", "reference"), [
    ("es", "Josh Norman interceptó 3 balones.", "cuatro"),
    ("es", "Fueron 14 jugadores.", "cuatro"),  # "catorce", not "cuatro"
    ("zh", "他们拦截了二十次。", "24"),
    ("zh", "黑豹队有4名球员。", "四十名"),
    ("en", "Once more, the Broncos won.", "11"),  # Spanish "once" is eleven; English "once" is not a number
])
def test_a_different_number_or_a_word_of_another_language_is_not(language, answer, reference):
    assert answer_contains(answer, [reference], language) == 0.0


def test_citation_precision_is_the_share_of_cited_chunks_from_relevant_documents():
    assert citation_precision(["a", "b", None], {"a": 1, "b": 0}) == pytest.approx(1 / 3)
    assert citation_precision(["a", "a"], {"a": 2}) == 1.0
    assert citation_precision([], {"a": 1}) is None


class ScriptedJudge:
    """Answers each function call with the next scripted arguments, as call_function_with_retries does."""

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = []

    def call_function_with_retries(self, messages, schema, *, check=None, max_trials=3, name="", description=""):
        self.calls.append(messages)
        attempts = []
        for _ in range(max_trials):
            arguments = self.answers.pop(0)
            problems = check(arguments) if check else []
            attempts.append(Attempt(str(arguments), problems))
            if not problems:
                return arguments, attempts
        return None, attempts


def test_faithfulness_is_the_share_of_statements_the_judge_finds_supported():
    judge = ScriptedJudge({"statements": [{"statement": "Prune in late winter", "supported": True},
                                          {"statement": "Roses are blue", "supported": False},
                                          {"statement": "Before new growth", "supported": True}]})
    score, details = judge_faithfulness(judge, "When to prune?", "In late winter; roses are blue.",
                                        ["Prune climbing roses in late winter."])
    assert score == pytest.approx(2 / 3)
    assert len(details["statements"]) == 3
    assert "Prune climbing roses in late winter." in judge.calls[0][1]["content"]


def test_a_judge_that_never_lists_a_statement_gives_no_score_and_says_why():
    judge = ScriptedJudge(*[{"statements": []}] * 3)
    score, details = judge_faithfulness(judge, "q", "an answer", ["p"])
    assert score is None
    assert "after 3 attempt(s)" in details["error"]
    assert judge_faithfulness(judge, "q", "   ", ["p"])[0] is None


def test_chunk_citations_are_not_part_of_the_answer():
    assert strip_citations("In late winter [1], before growth [2, 3].") == "In late winter, before growth."
    assert strip_citations("晚冬[1]。") == "晚冬。"


PASSAGE = ("The Panthers defense gave up just 308 points, ranking sixth in the league, while also leading the "
           "NFL in interceptions with 24 and boasting four Pro Bowl selections. Carolina won fifteen games "
           "during its regular season and reached Super Bowl fifty after beating Arizona.")


def test_a_short_answer_with_the_reference_is_concise_and_correct():
    assert concise_contains("They gave up 308 points [1].", ["308"], "en") == 1.0
    assert concise_contains("They gave up 310 points [1].", ["308"], "en") == 0.0


def test_a_passage_pasted_back_contains_the_reference_but_is_not_concise():
    pasted = f"[1] {PASSAGE} {PASSAGE}"
    assert answer_contains(strip_citations(pasted), ["308"], "en") == 1.0
    assert concise_contains(pasted, ["308"], "en") == 0.0


def test_the_forty_word_limit_does_not_count_citations():
    forty = " ".join(["word"] * 39 + ["308"])
    assert concise_contains(forty + " [1] [2, 3]", ["308"], "en") == 1.0
    assert concise_contains(forty + " more", ["308"], "en") == 0.0


def test_chinese_answers_are_measured_in_characters():
    assert concise_contains("黑豹隊防守只失了308分[1]。", ["308"], "zh-Hant") == 1.0
    assert concise_contains("黑" * 80 + "308", ["308"], "zh-Hant") == 0.0


def test_an_answer_that_repeats_more_than_25_words_of_a_passage_copies_it():
    # Compared as normalised tokens: the passage's first 29 words hold 3 articles.
    copied = "As passage says, " + " ".join(PASSAGE.split()[:29]) + " [1]."
    assert longest_shared_span(copied, [PASSAGE], "en") == 26
    assert verbatim_copy(copied, ["unrelated text", PASSAGE], "en") == 1.0
    quoted = " ".join(PASSAGE.split()[:28])
    assert longest_shared_span(quoted, [PASSAGE], "en") == 25
    assert verbatim_copy(quoted, [PASSAGE], "en") == 0.0
    assert verbatim_copy("They gave up 308 points, sixth in the league [1].", [PASSAGE], "en") == 0.0


def test_a_chinese_copy_is_counted_by_characters_two_to_a_word():
    passage = ("黑豹隊的防守只失了三百零八分，在聯盟中排名第六，同時以二十四次抄截領先全聯盟，並有四名球員入選職業盃。"
               "防守截鋒卡萬·肖特以十一次擒殺領先全隊，另有三次迫使掉球。")
    assert longest_shared_span(passage[:55], [passage], "zh-Hant") == 51  # 51 ideographs, 4 marks
    assert verbatim_copy(passage[:55], [passage], "zh-Hant") == 1.0
    assert verbatim_copy(passage[:54], [passage], "zh-Hant") == 0.0  # 50
    # One sentence restating its passage's sentence is an answer, not a pasted passage.
    assert longest_shared_span(passage[:30], [passage], "zh-Hant") == 28
    assert verbatim_copy(passage[:30] + "[1]", [passage], "zh-Hant") == 0.0
    assert verbatim_copy("防守只失了三百零八分。", [passage], "zh-Hant") == 0.0
