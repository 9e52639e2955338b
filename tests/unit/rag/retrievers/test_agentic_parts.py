"""Which questions the agentic ensemble may search whole (those that ask one thing), and the parts of the others."""

import pytest

from rag.retrievers.composite.agentic.parts import asks_several_things, question_parts

pytestmark = pytest.mark.unit


@pytest.mark.parametrize(("question", "language"), [
    ("When did the Lebre Point lighthouse open, and who painted its murals?", "en"),
    ("Who founded the city and when was the harbour built?", "en"),
    ("how far around a cylinder and under what conditions of flow is the velocity linear", "en"),
    ("What is the type of a module? I am interested in its interface.", "en"),
    ("¿En qué año se inauguró el faro y quién pintó sus murales?", "es"),
    ("¿Cuántos habitantes tiene Velm y en qué río está?", "es"),
    ("¿Quién fundó la ciudad? ¿Cuándo?", "es"),
    ("龜嶼燈塔是哪一年啟用的？它的壁畫是誰畫的？", "zh-Hant"),
    ("该地区受干旱影响的面积有多大，以及什么仪器被用来检查蒸汽机的性能？", "zh-Hans"),
    ("元仁宗的儿子是，以及谁被雇用来制作节目？", "zh-Hans"),
    ("托马斯担任何职，以及这座灵柩什么时候回迁？", "zh-Hans"),
])
def test_a_question_joining_clauses_that_each_ask_something_asks_several_things(question, language):
    assert asks_several_things(question, language)


@pytest.mark.parametrize(("question", "language"), [
    ("Autophagy declines in aged organisms.", "en"),  # a claim: no interrogative at all
    ("what are the significant steady and non-steady flow characteristics which affect the flutter mechanism .",
     "en"),  # "which" opens a relative clause, not a second question
    ("Which is larger, the harbour or the lighthouse?", "en"),
    ("Who was mayor when the war started?", "en"),
    ("¿Qué relación hay entre el puerto y el faro?", "es"),
    ("¿Quién era alcalde cuando comenzó la guerra, según el censo?", "es"),  # "cuando" without accent
    ("环保主义者认为，生物多样性的丧失可能是什么的结果？", "zh-Hans"),  # 认为 "thinks", not an open end
    ("這座城市幾乎完全被摧毀，是哪一年？", "zh-Hant"),  # 幾乎 "almost"
    ("bm25 parameters k1 b", "en"),
])
def test_a_question_with_one_asking_clause_asks_one_thing(question, language):
    assert not asks_several_things(question, language)


def test_a_language_without_rules_is_read_by_the_english_ones():
    assert asks_several_things("Who built it, and when was it opened?", "fr")
    assert not asks_several_things("Qui a construit le phare ?", "fr")


@pytest.mark.parametrize(("question", "language", "parts"), [
    # The interrogative opens an English or Spanish clause: a part starts there, and what comes
    # before the first one belongs to the first part.
    ("When did the Lebre Point lighthouse open, and who painted its murals?", "en",
     ["When did the Lebre Point lighthouse open", "who painted its murals"]),
    ("¿Qué fuerza magnética y eléctrica actúan sobre una carga y cuántos cuerpos exhumó el Departamento?", "es",
     ["Qué fuerza magnética y eléctrica actúan sobre una carga", "cuántos cuerpos exhumó el Departamento"]),
    ("En Velm, ¿quién fundó la ciudad y cuándo se construyó el puerto?", "es",
     ["En Velm, ¿quién fundó la ciudad", "cuándo se construyó el puerto"]),
    # It ends a Chinese clause: a part ends there, and a clause after it opens the next part.
    ("免疫系统紊乱会导致什么，以及在蒸汽涡轮中，转子安装在什么东西上？", "zh-Hans",
     ["免疫系统紊乱会导致什么", "在蒸汽涡轮中，转子安装在什么东西上"]),
    ("元仁宗的儿子是，以及谁被雇用来制作节目？", "zh-Hans", ["元仁宗的儿子是", "谁被雇用来制作节目"]),
    # Several sentences: each is a part, with its question mark.
    ("龜嶼燈塔是哪一年啟用的？它的壁畫是誰畫的？", "zh-Hant", ["龜嶼燈塔是哪一年啟用的？", "它的壁畫是誰畫的？"]),
    ("¿Quién fundó la ciudad? ¿Cuándo?", "es", ["¿Quién fundó la ciudad?", "¿Cuándo?"]),
])
def test_a_question_that_asks_several_things_is_cut_between_its_asking_clauses(question, language, parts):
    assert question_parts(question, language) == parts


@pytest.mark.parametrize(("question", "language"), [
    ("Autophagy declines in aged organisms.", "en"),
    ("¿Quién era alcalde cuando comenzó la guerra, según el censo?", "es"),
    ("這座城市幾乎完全被摧毀，是哪一年？", "zh-Hant"),
])
def test_a_question_that_asks_one_thing_is_its_own_only_part(question, language):
    assert question_parts(question, language) == [question]
