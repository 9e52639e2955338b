"""The two-fact development set (bench/_twofacts.py): two questions joined into one sentence in
Spanish and Chinese, the same set for the same seed, and the questions only a child other than
the agentic tree's first can complete, on a small made-up corpus (no model is loaded)."""

import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[3] / "bench"
if str(BENCH) not in sys.path:
    sys.path.insert(0, str(BENCH))

import _twofacts as twofacts  # noqa: E402

pytestmark = pytest.mark.unit

ARTICLES = ("00", "01", "02", "03")


def dataset():
    """Four articles of two paragraphs; six short-answer questions each, plus one with a long
    answer, one with a lead-in clause and one holding its own answer, which no two-fact question
    may use."""
    corpus, queries, qrels = [], [], {}
    for article in ARTICLES:
        for paragraph in ("00", "01"):
            corpus.append({"_id": f"xquad-{article}-{paragraph}", "text": f"Texto {article}-{paragraph}."})
        for number in range(6):
            query_id = f"q{article}{number}"
            queries.append({"_id": query_id, "text": f"¿Quién escribió el libro {article}{number}?",
                            "answers": [f"Autor {article}{number}"]})
            qrels[query_id] = {f"xquad-{article}-00": 1}
    queries.append({"_id": "long", "text": "¿Qué dijo el autor?", "answers": ["una frase larga de más de cinco palabras"]})
    queries.append({"_id": "lead", "text": "En 1990, ¿quién ganó?", "answers": ["Ana"]})
    queries.append({"_id": "given", "text": "¿Ganó Ana o Eva?", "answers": ["Eva"]})
    qrels.update(long={"xquad-00-00": 1}, lead={"xquad-01-00": 1}, given={"xquad-02-00": 1})
    return corpus, queries, qrels


def test_two_spanish_questions_become_one_question_with_the_second_lower_cased():
    joined = twofacts.join("¿Cuántos puntos cedieron los Panthers? ", "¿Quién diseñó el puente Golden Gate?", "es")
    assert joined == "¿Cuántos puntos cedieron los Panthers y quién diseñó el puente Golden Gate?"


def test_a_spanish_second_question_starting_with_a_name_keeps_its_capital():
    vocabulary = twofacts.lowercase_words(["¿Dónde trabajó Tesla?", "¿Cuál es el nombre del río?"])
    assert "nombre" in vocabulary and "tesla" not in vocabulary
    assert twofacts.join("¿En qué año nació?", "¿Tesla trabajó dónde?", "es", vocabulary) == \
        "¿En qué año nació y Tesla trabajó dónde?"
    assert twofacts.join("¿Dónde trabajó Tesla?", "¿Nombre del río?", "es", vocabulary) == \
        "¿Dónde trabajó Tesla y nombre del río?"
    assert twofacts.join("¿Dónde trabajó Tesla?", "¿En qué año nació?", "es") == \
        "¿Dónde trabajó Tesla y en qué año nació?"


def test_spanish_y_becomes_e_before_an_i_sound_only():
    vocabulary = frozenset({"hicieron", "hielo", "iglesias"})
    assert twofacts.join("¿Qué ganaron?", "¿Hicieron algo?", "es", vocabulary) == "¿Qué ganaron e hicieron algo?"
    assert twofacts.join("¿Qué ganaron?", "¿Iglesias hay?", "es", vocabulary) == "¿Qué ganaron e iglesias hay?"
    assert twofacts.join("¿Qué ganaron?", "¿Hielo hay?", "es", vocabulary) == "¿Qué ganaron y hielo hay?"


def test_two_chinese_questions_become_one_joined_by_yiji():
    joined = twofacts.join("黑豹队的防守丢了多少分？", "谁设计了这座桥? ", "zh-Hant")
    assert joined == "黑豹队的防守丢了多少分，以及谁设计了这座桥？"


def test_only_one_plain_question_can_be_half_of_a_joined_one():
    assert twofacts.joinable("¿Quién ganó? ", "es")
    assert not twofacts.joinable("En 1990, ¿quién ganó?", "es")
    assert not twofacts.joinable("¿Quién ganó? ¿Y cuándo?", "es")
    assert twofacts.joinable("谁赢了？", "zh-Hant")
    assert not twofacts.joinable("谁赢了？什么时候？", "zh-Hant")
    with pytest.raises(ValueError, match="no rule joins"):
        twofacts.join("Who won?", "When?", "en")


def test_every_article_is_one_document_and_every_question_needs_two_articles():
    corpus, queries, qrels = dataset()
    dev = twofacts.build(corpus, queries, qrels, "es", two_fact=6)
    assert sorted(dev.documents) == [f"article-{article}" for article in ARTICLES]
    assert dev.documents["article-02"] == "Texto 02-00.\n\nTexto 02-01."
    assert len(dev.of_kind("two_fact")) == 6
    used = [fact["id"] for question in dev.questions for fact in question["facts"]]
    assert len(used) == len(set(used)), "a fact was used twice"
    assert not {"long", "lead", "given"} & set(used), "a long answer, a lead-in or an answered question was used"
    for question in dev.questions:
        first, second = question["facts"]
        assert first["article"] != second["article"]
        assert question["question"] == twofacts.join(first["question"], second["question"], "es",
                                                     twofacts.lowercase_words(query["text"] for query in queries))
        assert question["question"].count("?") == 1


def test_the_same_seed_gives_the_same_set_and_the_seed_decides_it():
    corpus, queries, qrels = dataset()

    def ids(seed):
        return [question["id"] for question in twofacts.build(corpus, queries, qrels, "es", two_fact=4,
                                                              seed=seed).questions]

    assert ids(3) == ids(3)
    assert len({tuple(ids(seed)) for seed in range(5)}) > 1, "the seed changed nothing"


def test_other_child_questions_are_those_whose_one_article_only_a_later_child_finds():
    corpus, queries, qrels = dataset()
    everything = {f"article-{article}" for article in ARTICLES}
    asked = []

    def first(question):
        asked.append(question)
        return everything - {"article-02"}

    def second(question):
        return {"article-02"}

    dev = twofacts.build(corpus, queries, qrels, "es", two_fact=2, other_child=3, seed=1, children=[first, second])
    others = dev.of_kind("other_child")
    assert len(others) == 3
    for question in others:
        assert "article-02" in [fact["article"] for fact in question["facts"]]
        assert question["found_by"]["article"] == "article-02" and question["found_by"]["children"] == [1]
        assert question["facts"][question["found_by"]["fact"]]["article"] == "article-02"
    assert set(asked) > {question["question"] for question in others}, "pairs the first child completes were kept"
    two_fact = {fact["id"] for question in dev.of_kind("two_fact") for fact in question["facts"]}
    assert not two_fact & {fact["id"] for question in others for fact in question["facts"]}


def test_no_other_child_question_when_the_first_child_finds_every_article():
    corpus, queries, qrels = dataset()

    def everything(question):
        return {f"article-{article}" for article in ARTICLES}

    dev = twofacts.build(corpus, queries, qrels, "es", two_fact=0, other_child=3, children=[everything, everything])
    assert dev.questions == []
    with pytest.raises(ValueError, match="children"):
        twofacts.build(corpus, queries, qrels, "es", two_fact=0, other_child=3, children=[everything])
