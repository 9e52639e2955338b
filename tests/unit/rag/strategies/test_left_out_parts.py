"""A part of a two-part question the answer leaves out (or only repeats) is asked again on its own
over the same passages, and its supported answer completes the reply; every model call answered
by the scripted OpenAI-compatible server through the real ``openai`` client."""

import pytest

from rag.documents.models import Chunk
from rag.llms import OpenAICompatibleLLM
from rag.retrievers.sparse import BM25Retriever
from rag.strategies import NaiveRAG, ResponseSynthesizer, grounding
from rag.strategies.left_out_parts import left_out_parts, supported_answer, with_part_answered
from tests.support.scripted_openai import chat_response, chat_stream

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
DENMARK = "Tras dos intentos fallidos, Dinamarca entró en la Comunidad Europea en 1972, junto con Irlanda y el Reino Unido."
POLIGNAC = ("La conjetura de Polignac sostiene que para cualquier número entero positivo n hay infinitos pares de primos "
            "consecutivos que difieren en 2n.")
TWO_PART = ("¿Cuándo se incorporó Dinamarca a la UE y qué conjetura sostiene que para cualquier número entero positivo "
            "n, hay una cantidad infinita de pares de primos consecutivos que difieren en 2n?")
SECOND_PART = ("qué conjetura sostiene que para cualquier número entero positivo n, hay una cantidad infinita de pares "
               "de primos consecutivos que difieren en 2n")
# BM25 ranks the Polignac passage first: it is [1], the Denmark passage [2].
DENMARK_ANSWER = "Dinamarca se incorporó a la UE en 1972 [2]."
POLIGNAC_ANSWER = "La conjetura de Polignac sostiene que hay infinitos pares de primos consecutivos que difieren en 2n [1]."


def pipeline(server, **synthesizer):
    retriever = BM25Retriever(top_k=2)
    retriever.inject_infra(chunks={1: {0: Chunk(id=100, document_id=1, position=0, text=DENMARK)},
                                   2: {0: Chunk(id=200, document_id=2, position=0, text=POLIGNAC)}})
    llm = OpenAICompatibleLLM(base_url=server.base_url, model="m")
    return NaiveRAG(retriever=retriever, response_synthesizer=ResponseSynthesizer(llm=llm, **synthesizer),
                    followup_llm=llm)


def generate(state):
    return next(entry for entry in state["trace"]["steps"] if entry["step"] == "generate")


def run(rag, question):
    events = list(rag.stream(question))
    return events, events[-1]["state"]


def test_a_part_the_answer_leaves_out_is_asked_on_its_own_and_its_answer_completes_the_reply(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream([DENMARK_ANSWER]))
    scripted_openai.enqueue(CHAT, chat_response(POLIGNAC_ANSWER))
    events, state = run(pipeline(scripted_openai), TWO_PART)

    first, again = (request.body for request in scripted_openai.requests_to(CHAT))
    # The part is asked alone over the same passages, under the same numbers.
    assert again["messages"][-1]["content"].endswith(f"Pregunta: {SECOND_PART}")
    passages = first["messages"][-1]["content"].rsplit("\n\nPregunta:", 1)[0]
    assert again["messages"][-1]["content"].startswith(passages)
    assert again["messages"][:-1] == first["messages"][:-1]
    assert state["response"] == f"{DENMARK_ANSWER} {POLIGNAC_ANSWER}"
    # The reader sees the added sentence come after the draft, and both citations hold.
    streamed = "".join(event["text"] for event in events if event["type"] == "generation.delta")
    assert streamed.replace("  ", " ") == state["response"]
    assert sorted((citation["n"], citation["supported"]) for citation in state["citations"]) == [(1, True), (2, True)]
    entry = generate(state)
    assert entry["draft"] == DENMARK_ANSWER
    assert [(asked["part"], asked["added"], asked["replaced"]) for asked in entry["parts_asked_again"]] == \
        [(SECOND_PART, POLIGNAC_ANSWER, [])]
    assert state["trace"]["llm_calls"] == 2


def test_a_sentence_that_only_repeats_its_part_gives_way_to_that_parts_answer(scripted_openai):
    # From the two-fact development set: "La fuerza magnética y eléctrica actúan sobre una carga [1]."
    # repeated the question's first part and answered nothing.
    scripted_openai.enqueue(CHAT, chat_stream(["Dinamarca se incorporó a la UE [2]. ", POLIGNAC_ANSWER]))
    scripted_openai.enqueue(CHAT, chat_response(DENMARK_ANSWER))
    _, state = run(pipeline(scripted_openai), TWO_PART)

    assert scripted_openai.requests_to(CHAT)[1].body["messages"][-1]["content"].endswith(
        "Pregunta: Cuándo se incorporó Dinamarca a la UE")
    assert state["response"] == f"{DENMARK_ANSWER} {POLIGNAC_ANSWER}"
    assert state["unsupported"] == []
    asked = generate(state)["parts_asked_again"]
    assert asked[0]["replaced"] == ["Dinamarca se incorporó a la UE [2]."]


def test_a_part_whose_answer_is_not_supported_adds_nothing_and_the_trace_says_so(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream([DENMARK_ANSWER]))
    scripted_openai.enqueue(CHAT, chat_response("La conjetura de Goldbach lo sostiene desde 1742 [1]."))
    _, state = run(pipeline(scripted_openai), TWO_PART)

    assert state["response"] == DENMARK_ANSWER
    asked = generate(state)["parts_asked_again"][0]
    assert asked["added"] is None and asked["supported"] == []
    assert asked["answer"] == "La conjetura de Goldbach lo sostiene desde 1742 [1]."
    assert "draft" not in generate(state)


def test_no_part_is_asked_again_when_each_is_answered_when_the_question_asks_one_thing_or_when_turned_off(
        scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream([f"{DENMARK_ANSWER} {POLIGNAC_ANSWER}"]))
    _, state = run(pipeline(scripted_openai), TWO_PART)
    assert "parts_asked_again" not in generate(state)

    scripted_openai.enqueue(CHAT, chat_stream([DENMARK_ANSWER]))
    _, state = run(pipeline(scripted_openai), "¿Cuándo se incorporó Dinamarca a la Unión Europea?")
    assert "parts_asked_again" not in generate(state)

    scripted_openai.enqueue(CHAT, chat_stream([DENMARK_ANSWER]))
    _, state = run(pipeline(scripted_openai, ask_left_out_parts=False), TWO_PART)
    assert "parts_asked_again" not in generate(state) and state["response"] == DENMARK_ANSWER
    assert len(scripted_openai.requests_to(CHAT)) == 3


def test_a_run_out_of_model_calls_keeps_the_answer_it_has(scripted_openai):
    from rag.tracing import RunLimits, configure_run_limits

    scripted_openai.enqueue(CHAT, chat_stream([DENMARK_ANSWER]))
    configure_run_limits(RunLimits(max_llm_calls=1))
    try:
        _, state = run(pipeline(scripted_openai), TWO_PART)
    finally:
        configure_run_limits(None)
    assert state["response"] == DENMARK_ANSWER and len(scripted_openai.requests_to(CHAT)) == 1
    assert generate(state)["parts_asked_again"][0]["error"]


@pytest.mark.parametrize(("question", "language", "answer", "left_out"), [
    # A sentence speaking to each part, in Chinese: nothing is left out.
    ("什么限制了朗肯循环的效率，以及6600万年前发生了什么事件？", "zh-Hant",
     "朗肯循环的效率受工作流体的限制 [1]。6600万年前发生了白垩纪-第三纪灭绝事件 [2]。", []),
    # From the development set: the second part never spoken to.
    ("什么限制了朗肯循环的效率，以及6600万年前发生了什么事件？", "zh-Hant",
     "朗肯循环的效率通常受工作流体的限制 [1]。这使得理论卡诺效率达到约63% [1]。", ["6600万年前发生了什么事件"]),
    # A part too light to say what it asks is never asked again.
    ("Cómo y cuándo entró en Europa la primera variante de y. pestis", "es",
     "La primera variante de Y. pestis entró en Europa en 1347 [1].", []),
])
def test_which_parts_an_answer_leaves_out(question, language, answer, left_out):
    passages = ["朗肯循环的效率受工作流体的限制。这使得理论卡诺效率达到约63%。",
                "6600万年前发生了白垩纪-第三纪灭绝事件。"] if language != "es" else \
        ["La primera variante de Y. pestis entró en Europa en 1347 por Caffa."]
    checked = grounding.check(answer, question, passages, language)
    assert [part.part for part in left_out_parts(checked, question, language)] == left_out


GANDHI = "甘地的行为被描述为革命性的公民不服从。"
MOMENTUM = "物体动量变化的导数叫作力，即牛顿第二定律。"
TWO_PART_ZH = "从谁的例子中看出革命性公民不服从行为，以及物体动量变化的导数叫什么？"


def test_a_part_answered_after_marks_behind_the_last_full_stop_leaves_those_marks_to_the_sentences_before_them():
    # From the development set: the draft ended "…公民不服从。 [1]" and the part's answer
    # "物体动量变化的导数叫力。 [2]" ran on after it, so the [1] was read as the new sentence's mark.
    part = "物体动量变化的导数叫什么"
    part_answer = "物体动量变化的导数叫作力。 [2]"
    added = supported_answer(part_answer, grounding.check(part_answer, part, [GANDHI, MOMENTUM], "zh-Hant"), part,
                             "zh-Hant")
    assert added == "物体动量变化的导数叫作力 [2]。"
    draft = "甘地的行为被描述为革命性的公民不服从。 [1]"
    checked = grounding.check(draft, TWO_PART_ZH, [GANDHI, MOMENTUM], "zh-Hant")
    (left_out,) = left_out_parts(checked, TWO_PART_ZH, "zh-Hant")
    merged = with_part_answered(draft, left_out, added)
    assert grounding.sentences(merged) == [(draft, [1]), (added, [2])]
    final = grounding.check(merged, TWO_PART_ZH, [GANDHI, MOMENTUM], "zh-Hant")
    assert [(sentence.cites, sentence.supported) for sentence in final.sentences] == [([1], True), ([2], True)]


def test_a_word_in_passing_does_not_speak_to_a_part():
    # "这个" of "为什么要创建这个短期组织" in a sentence about cells is no answer to that part, and the
    # sentence is not replaced by the part's answer.
    question = "叶绿体被什么包裹着，以及为什么要创建这个短期组织？"
    answer = "叶绿体被包裹在两层双层脂膜中 [1]。这个细胞的新居民很快成为了优势 [1]。"
    passages = ["包裹所有叶绿体的最内的两层双层脂膜。这个细胞的新居民很快成为了优势。"]
    checked = grounding.check(answer, question, passages, "zh-Hant")
    (left_out,) = left_out_parts(checked, question, "zh-Hant")
    assert left_out.part == "为什么要创建这个短期组织" and left_out.unsupported == []


def test_a_parts_answer_that_repeats_nothing_of_the_part_adds_nothing():
    # From the development set: asked "为什么要创建这个短期组织", the model copied a sentence about the
    # immune system from a passage; the passage holds it, but it answers something else.
    part = "为什么要创建这个短期组织"
    passage = "这个短期组织是为协调禁运而创建的。适应性免疫系统的进化发生在有颌脊椎动物的祖先身上。"
    answer = "适应性免疫系统的进化发生在有颌脊椎动物的祖先身上 [1]。"
    checked = grounding.check(answer, part, [passage], "zh-Hant")
    assert checked.sentences[0].supported
    assert supported_answer(answer, checked, part, "zh-Hant") == ""
    right = "这个短期组织是为协调禁运而创建的 [1]。"
    assert supported_answer(right, grounding.check(right, part, [passage], "zh-Hant"), part, "zh-Hant") == right
