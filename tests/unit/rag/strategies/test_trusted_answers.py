"""Answers a user can trust (issue 37): follow-ups searched on their own, declining when the
passages are silent, flagged citations, and what the model reads decided by settings only; every
model call answered by the scripted OpenAI-compatible server through the real ``openai`` client."""

import pytest

from rag.llms import OpenAICompatibleLLM
from rag.retrievers.sparse import BM25Retriever
from rag.strategies import MapReduceRAG, NaiveRAG, ResponseSynthesizer, grounding
from rag.strategies.answer_prompts import EXAMPLES, NOT_FOUND, copied_example
from rag.strategies.followups import refers_back, rewrite
from tests.support.scripted_openai import chat_response, chat_stream

from ..retrievers.corpus import corpus_chunks
from .doubles import Variants

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
HISTORY = [{"role": "user", "content": "Which web framework ships an admin panel?"},
           {"role": "assistant", "content": "The Django web framework ships an admin panel [1]."}]


def llm(server):
    return OpenAICompatibleLLM(base_url=server.base_url, model="m")


def naive(server, top_k=3, **synthesizer):
    retriever = BM25Retriever(top_k=top_k)
    retriever.inject_infra(chunks=corpus_chunks())
    return NaiveRAG(retriever=retriever, response_synthesizer=ResponseSynthesizer(llm=llm(server), **synthesizer),
                    followup_llm=llm(server))


def step(state, name):
    return next(entry for entry in state["trace"]["steps"] if entry["step"] == name)


def test_a_follow_up_is_searched_with_what_it_refers_to_named(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_response("The Django web framework"))
    scripted_openai.enqueue(CHAT, chat_stream(["The Django web framework ships an ORM [1]."]))
    state = naive(scripted_openai).run("What else does it ship?", history=HISTORY)

    searched = step(state, "search_question")
    assert searched["rewritten"] and searched["refers_to"] == "The Django web framework"
    assert state["search_question"] == "What else does The Django web framework ship?"
    assert step(state, "retrieve")["query"] == state["search_question"]
    assert state["chunks"][0]["chunk_id"] == 202  # the Django chunk, not the previous question's words
    # The rewriting model was asked which words of the conversation "it" stands for.
    ask = scripted_openai.requests_to(CHAT)[0].body["messages"][-1]["content"]
    assert "Marked words: it" in ask and "Which web framework ships an admin panel?" in ask
    # The answer model reads the question that stands alone, not the conversation.
    prompt = scripted_openai.requests_to(CHAT)[1].body["messages"]
    assert prompt[-1]["content"].endswith("Question: What else does The Django web framework ship?")
    assert all(turn["content"] != HISTORY[0]["content"] for turn in prompt)


def test_a_question_that_stands_alone_is_searched_as_asked_with_no_model_call(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Machu Picchu is an Inca citadel in the Andes of Peru [1]."]))
    state = naive(scripted_openai).run("Where is the Inca citadel of Machu Picchu?", history=HISTORY)

    searched = step(state, "search_question")
    assert not searched["rewritten"] and searched["reason"] == "stands alone"
    assert step(state, "retrieve")["query"] == "Where is the Inca citadel of Machu Picchu?"
    assert len(scripted_openai.requests_to(CHAT)) == 1, "only the answer was asked for"
    assert state["response"].startswith("Machu Picchu")


def test_words_the_conversation_does_not_hold_are_refused_and_the_question_searched_beside_the_previous_one(
        scripted_openai):
    nameless = [{"role": "user", "content": "Which web framework ships an admin panel?"},
                {"role": "assistant", "content": "The one in the first passage does [1]."}]
    scripted_openai.enqueue(CHAT, chat_response("the Ruby on Rails framework"))
    scripted_openai.enqueue(CHAT, chat_stream(["The Django web framework ships an ORM [1]."]))
    state = naive(scripted_openai).run("What else does it ship?", history=nameless)

    searched = step(state, "search_question")
    assert searched["rewritten"] and searched["refers_to"] is None
    assert state["search_question"] == "What else does it ship? (Which web framework ships an admin panel?)"
    assert step(state, "retrieve")["query"] == state["search_question"]
    assert [attempt["problems"] for attempt in searched["attempts"]] == [
        ["those words are not in the conversation: copy them from it"]]
    # Asked again, a small model copies the worked examples: it is not asked again.
    assert state["trace"]["llm_calls"] == 2
    # Only the search reads the previous question: the model answers the question as asked (reading
    # both, it answered both), and the answer is checked against that question's words.
    assert searched["answered_question"] == "What else does it ship?"
    prompt = scripted_openai.requests_to(CHAT)[1].body["messages"]
    assert prompt[-1]["content"].endswith("Question: What else does it ship?")
    assert state["declined"] is None and state["response"].startswith("The Django web framework ships an ORM")


def test_refused_words_give_way_to_the_only_name_the_conversation_holds(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_response("the Ruby on Rails framework"))
    scripted_openai.enqueue(CHAT, chat_stream(["The Django web framework ships an ORM [1]."]))
    state = naive(scripted_openai).run("What else does it ship?", history=HISTORY)

    searched = step(state, "search_question")
    assert state["search_question"] == "What else does Django ship?"
    assert searched["refers_to"] == "Django" and searched["reason"].startswith("refers to the only name")
    assert state["trace"]["llm_calls"] == 2 and state["chunks"][0]["chunk_id"] == 202


def followed_up(server, first_question, referent, question, first_answer="文件中没有提到。", reply="文件中没有提到。"):
    """A follow-up after ``first_question`` and ``first_answer`` (by default a Chinese decline), the
    follow-up model naming ``referent`` and the answer model replying ``reply``: the run's state and
    its search-question step."""
    history = [{"role": "user", "content": first_question}, {"role": "assistant", "content": first_answer}]
    server.enqueue(CHAT, chat_response(referent))
    server.enqueue(CHAT, chat_stream([reply]))
    state = naive(server).run(question, history=history)
    return state, step(state, "search_question")


def test_a_name_written_with_the_question_s_own_words_is_taken_from_them(scripted_openai):
    # Asked what "它" stands for, the 1.5B answered "诺曼人的城堡": the name with the words after
    # "它" in the question, which the conversation does not hold as written.
    state, searched = followed_up(scripted_openai, "谁是诺曼人在意大利和亚美尼亚的主要敌人？", "诺曼人的城堡",
                                  "它的城堡叫什么名字？")
    assert state["search_question"] == "诺曼人的城堡叫什么名字？" == step(state, "retrieve")["query"]
    assert searched["refers_to"] == "诺曼人" and searched["answered_question"] == state["search_question"]
    assert searched["attempts"] == [{"raw": "诺曼人的城堡", "taken": "诺曼人",
                                     "problems": ["those words are not in the conversation: copy them from it"]}]
    assert state["trace"]["llm_calls"] == 2


def test_words_of_the_conversation_that_repeat_the_question_s_word_give_the_name_alone(scripted_openai):
    # "瘟疫鼠疫耶氏菌的菌株" is in the conversation, but put for 它 it would ask for 菌株 twice.
    state, searched = followed_up(scripted_openai, "研究人员在瘟疫鼠疫耶氏菌的菌株中发现了什么？", "瘟疫鼠疫耶氏菌的菌株",
                                  "在乱葬岗中发现了它的什么菌株？")
    assert state["search_question"] == "在乱葬岗中发现了瘟疫鼠疫耶氏菌的什么菌株？"
    assert searched["refers_to"] == "瘟疫鼠疫耶氏菌"
    assert searched["attempts"] == [{"raw": "瘟疫鼠疫耶氏菌的菌株", "problems": [], "taken": "瘟疫鼠疫耶氏菌"}]


def test_a_chinese_follow_up_takes_the_only_name_of_the_conversation(scripted_openai):
    # The 1.5B answered "这项" (words that refer back themselves): the previous question names one
    # thing, 法国, and the follow-up is searched with it rather than beside that question.
    state, searched = followed_up(scripted_openai, "哪一位法国皇帝颁布了这项公文?", "这项", "它的哪一项公文废止了新教?")
    assert state["search_question"] == "法国的哪一项公文废止了新教?" == step(state, "retrieve")["query"]
    assert searched["refers_to"] == "法国" and searched["reason"].startswith("refers to the only name")
    assert [attempt["problems"] for attempt in searched["attempts"]] == [
        ["those words refer to something themselves: give the words that name it"]]


def test_refused_words_give_way_to_the_only_thing_the_previous_question_names(scripted_openai):
    # The demo's follow-up: asked what "it" stands for, the 1.5B answered the question instead. The
    # answer names several things; the question one, in lower case.
    state, searched = followed_up(
        scripted_openai, "How do I build a hybrid retriever?", "BM25Retriever, DenseEmbeddingRetriever",
        "What does it combine?", first_answer="Put a BM25Retriever and a DenseEmbeddingRetriever under a "
                                              "FusionRetriever [1].", reply="The documents do not say.")
    assert state["search_question"] == "What does a hybrid retriever combine?" == step(state, "retrieve")["query"]
    assert searched["refers_to"] == "a hybrid retriever"
    assert searched["reason"] == "refers to the only thing the previous question names"
    assert searched["answered_question"] == state["search_question"]


def test_a_spanish_referent_that_is_no_name_is_refused_for_the_name_the_conversation_holds(scripted_openai):
    # Asked what "él" stands for, the 1.5B answered the follow-up itself: "irracional y atrasado".
    state, searched = followed_up(
        scripted_openai, "¿Occidente veía a Oriente como qué?", "irracional y atrasado",
        "Los primeros textos de Occidente que hacen referencia a él describen a la gente como, ¿qué?",
        first_answer="Occidente veía a Oriente como irracional y atrasado en oposición al racional y progresivo "
                     "Occidente [1].", reply="Los documentos no lo dicen.")
    assert state["search_question"] == \
        "Los primeros textos de Occidente que hacen referencia a Oriente describen a la gente como, ¿qué?"
    assert searched["refers_to"] == "Oriente" and searched["reason"].startswith("refers to the only name")
    assert searched["attempts"][0]["problems"] == [
        "those words are not a name or a thing with its article: give the name of what it stands for"]


def test_a_previous_question_naming_one_thing_gives_it_names_or_lower_case_alike():
    from rag.strategies.followups import previous_subject

    def subject(question, follow_up, marked, language):
        return previous_subject([{"role": "user", "content": question}, {"role": "assistant", "content": "…"}],
                                follow_up, marked, language)

    assert subject("Who designed the bridge?", "When did it open?", "it", "en") == "the bridge"
    assert subject("How long is the Danube?", "Which countries does it flow through?", "it", "en") == "Danube"
    assert subject("¿Quién diseñó el puente?", "¿Cuándo se inauguró?", "(none)", "es") == "el puente"
    # "ella" does not stand for "el puente".
    assert subject("¿Quién diseñó el puente?", "¿Dónde estudió ella?", "ella", "es") is None
    # Two things named, in capitals or not, leave the choice open.
    assert subject("Who painted the ceiling of the chapel?", "When?", "(none)", "en") is None
    assert subject("When did the Danube flood the city?", "How long is it?", "it", "en") is None
    assert subject("¿Quién es el vicepresidente del IPCC?", "¿Quién es el presidente de él?", "él", "es") is None
    # Chinese counts every noun the tagger reads, names or not: the spacesuit is a thing too.
    assert subject("阿波罗宇航员穿的太空服是什么样的？", "它最初是怎样的？", "它", "zh-Hans") is None
    # Asked which thing of a kind, the answer names it, not the question.
    assert subject("Which web framework ships an admin panel?", "What else does it ship?", "it", "en") is None
    assert subject("¿Qué río pasa por Sevilla?", "¿Dónde nace?", "(none)", "es") is None


def test_the_question_s_words_around_a_name_are_taken_off_in_each_language():
    from rag.strategies.followups import marked_word, without_question_words

    def inside(answer, question, language):
        return without_question_words(answer, question, marked_word(question, language), language)

    assert inside("诺曼人的城堡", "它的城堡叫什么名字？", "zh-Hans") == "诺曼人"
    assert inside("the Normans' castle", "What was their castle called?", "en") == "the Normans"
    assert inside("the Kestrel Bridge's colour", "What is its colour?", "en") == "the Kestrel Bridge"
    assert inside("capital de Francia", "¿Cuál es su capital?", "es") == "Francia"
    assert inside("población del Perú", "¿Cuál es su población?", "es") == "Perú"
    # The question's words between the marked word and its noun left out ("它的什么菌株").
    assert inside("瘟疫鼠疫耶氏菌的菌株", "在乱葬岗中发现了它的什么菌株？", "zh-Hans") == "瘟疫鼠疫耶氏菌"
    # Words the question does not hold next to the marked word are left to the other checks.
    assert inside("防守丢", "它的防守丢了多少分？", "zh-Hans") is None
    assert inside("the Normans", "What was their castle called?", "en") is None
    # One character in common is chance, not the question's words.
    assert inside("诺曼人", "它人口多少？", "zh-Hans") is None


def test_the_names_a_follow_up_may_stand_for_agree_with_its_pronoun():
    from rag.strategies.followups import candidates, referent_problems

    india = [{"role": "user", "content": "Junto con el CISCE y NENBSE, ¿cuál es una junta notable de la India?"},
             {"role": "assistant", "content": "La CBSE es una junta notable en varios estados de la India [1]."}]
    question = "¿Cuántas juntas de examen existen en ella?"
    # "ella" is feminine singular: not "el CISCE"; a name without an article may be either.
    assert candidates(india, question, "ella", "es") == ["NENBSE", "la India", "la CBSE"]
    assert candidates(india, question, "él", "es") == ["el CISCE", "NENBSE"]
    assert "cannot stand for" in referent_problems("CISCE", "Q: Junto con el CISCE y NENBSE", "ella", question, "es")[0]
    assert referent_problems("la India", "Q: … de la India?", "ella", question, "es") == []
    # A capital that only opens a sentence is no name; what the question already names is no choice.
    luther = [{"role": "user", "content": "Además de publicar «El cautiverio babilónico de la Iglesia», ¿qué otras "
                                          "obras hizo Lutero en 1520?"}]
    assert candidates(luther, "¿Cuándo amplió Lutero sus ataques a las doctrinas de ella?", "ella", "es") == ["la Iglesia"]
    # Chinese names have no capitals: jieba's part-of-speech tagger tells them (people, places,
    # organisations, words in Latin letters), and what the question names is no choice either.
    normans = [{"role": "user", "content": "谁是诺曼人在意大利和亚美尼亚的主要敌人？"}]
    assert candidates(normans, "它的城堡叫什么名字？", "它", "zh-Hans") == ["诺曼人", "意大利", "亚美尼亚"]
    ipcc = [{"role": "user", "content": "IPCC 现任主席是谁？"}, {"role": "assistant", "content": "BSkyB 的主席 [1]。"}]
    assert candidates(ipcc, "IPCC 它的主席是谁？", "它", "zh-Hans") == ["BSkyB"]


@pytest.mark.parametrize(("question", "refers"), [
    ("When did it open?", True), ("¿Cuándo se inauguró?", True), ("它是什麼時候開放的？", True),
    ("¿Cuál es su capital?", True), ("And its colour?", True),
    ("When was the Orrin Lighthouse first lit?", False),
    ("What is the name of the river that flows through Paris?", False),
    ("¿Quién, a su llegada, proporcionó una identidad común a los primeros colonos?", False),
    ("黑豹隊在防守中丟了多少分？", False),
])
def test_which_questions_refer_to_earlier_turns(question, refers):
    assert refers_back(question) is refers


def test_a_reference_is_replaced_by_rule_in_each_language():
    from rag.strategies.followups import marked_word

    assert rewrite("When did it open?", "the bridge", marked_word("When did it open?", "en"), "en") == \
        "When did the bridge open?"
    assert rewrite("¿Cuál es su capital?", "Francia", marked_word("¿Cuál es su capital?", "es"), "es") == \
        "¿Cuál es capital de Francia?"
    assert rewrite("它什麼時候開放？", "艾菲爾鐵塔", marked_word("它什麼時候開放？", "zh-Hant"), "zh-Hant") == \
        "艾菲爾鐵塔什麼時候開放？"
    assert rewrite("¿Cuándo se inauguró?", "el puente", None, "es") == "¿Cuándo se inauguró? (el puente)"


def test_when_the_model_says_the_passages_are_silent_the_reply_says_so_with_no_citation(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["The documents do not say."]))
    state = naive(scripted_openai).run("What is the boiling point of mercury?")

    assert state["response"] == NOT_FOUND["en"] and state["citations"] == []
    assert state["declined"]["by"] == "answer"
    assert [passage["chunk_id"] for passage in state["declined"]["closest"]] == \
        [chunk["chunk_id"] for chunk in state["chunks_sent"]]
    assert state["trace"]["declined"]["by"] == "answer"
    assert step(state, "generate")["draft"] == "The documents do not say."


def test_an_invented_answer_citing_an_unrelated_passage_is_declined_in_the_questions_language(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Los pelos de los ctenóforos se llaman cnidocitos [1]."]))
    state = naive(scripted_openai).run("¿Cómo se llaman los pelos de los ctenóforos en las células?")

    assert state["response"] == NOT_FOUND["es"] and state["citations"] == []
    assert state["declined"]["by"] == "support"
    generate = step(state, "generate")
    assert generate["draft"] == "Los pelos de los ctenóforos se llaman cnidocitos [1]."
    assert generate["grounding"]["declined_by"] == "support"
    assert generate["grounding"]["sentences"][0]["supported"] is False


def test_an_unsupported_sentence_is_flagged_and_the_supported_one_kept(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream([
        "The mitochondria produces ATP through respiration [1]. It was discovered in 1857 by Albert Kolliker [1]."]))
    state = naive(scripted_openai).run("What does the mitochondria produce?")

    assert state["declined"] is None
    assert state["unsupported"] == ["It was discovered in 1857 by Albert Kolliker [1]."]
    assert state["trace"]["unsupported"] == state["unsupported"]
    grounding = step(state, "generate")["grounding"]
    assert (grounding["supported_citations"], grounding["citations_checked"]) == (1, 2)
    assert grounding["sentences"][1]["missing_numbers"] == ["1857"]


def test_a_question_asking_for_a_number_answered_with_none_is_declined_and_the_trace_says_why(scripted_openai):
    draft = "The Eiffel Tower in Paris was completed for the World's Fair [1]."
    scripted_openai.enqueue(CHAT, chat_stream([draft]))
    state = naive(scripted_openai).run("How many visitors did the Eiffel Tower in Paris have at the World's Fair?")

    assert state["response"] == NOT_FOUND["en"] and state["citations"] == []
    assert state["declined"]["by"] == "number"
    assert "number" in state["declined"]["why"]
    generate = step(state, "generate")
    assert generate["draft"] == draft
    assert generate["grounding"]["declined_by"] == "number"
    assert generate["grounding"]["sentences"][0]["supported"] is True, "its words are the passage's: it answers nothing"


@pytest.mark.parametrize(("answer", "question", "language", "declined_by"), [
    ("The Eiffel Tower was completed in 1889 [1].", "What year was the Eiffel Tower completed?", "en", None),
    ("The Eiffel Tower was completed for the World's Fair [1].", "What year was the Eiffel Tower completed?", "en",
     "number"),
    # Written out, or an amount in words, is a number.
    ("Josh Norman interceptó cuatro pases [1].", "¿Cuántos pases interceptó Josh Norman?", "es", None),
    ("El Amazonas representa más de la mitad de los bosques [1].", "¿Qué porcentaje de los bosques representa el Amazonas?",
     "es", None),
    ("黑豹队的防守丢了三百零八分 [1]。", "黑豹队的防守丢了多少分？", "zh-Hant", None),
    # A number the question already holds is not an answer to it.
    ("Josh Norman jugó con los Panthers e interceptó pases en 2015 [1].", "¿Cuántos pases interceptó Josh Norman en 2015?",
     "es", "number"),
    # Asking two things, or how long: the answer may rightly state no number.
    ("Josh Norman jugó con los Panthers [1].", "¿Cuántos pases interceptó y con qué equipo jugó Josh Norman?", "es", None),
    ("Josh Norman jugó con los Panthers toda su carrera [1].", "¿Cuánto tiempo jugó Josh Norman con los Panthers?",
     "es", None),
    ("李会晟的国籍是韩国 [1]。", "州际高速公路系统创建于哪一年，以及李会晟的国籍是？", "zh-Hant", None),
    # How much of something is answered in words as often as in numbers.
    ("Tomatoes need direct sunlight all day [1].", "How much sun do tomatoes need?", "en", None),
    ("番茄需要充足的阳光 [1]。", "番茄需要多少阳光？", "zh-Hant", None),
])
def test_only_a_question_asking_for_a_number_alone_needs_one(answer, question, language, declined_by):
    passage = ("Tomatoes need direct sunlight all day. 番茄需要充足的阳光。"
               "Josh Norman jugó con los Panthers toda su carrera e interceptó cuatro pases en 2015. El Amazonas representa más de la "
               "mitad de los bosques. The Eiffel Tower in Paris was completed in 1889 for the World's Fair. "
               "黑豹队的防守丢了308分。李会晟的国籍是韩国。州际高速公路系统创建于1956年。")
    assert grounding.check(answer, question, [passage], language).declined_by == declined_by


def test_a_sentence_citing_the_wrong_passage_cites_the_one_that_holds_it_and_the_trace_keeps_the_draft(
        scripted_openai):
    draft = "Rust guarantees memory safety through ownership and borrowing [2]."
    scripted_openai.enqueue(CHAT, chat_stream([draft]))
    state = naive(scripted_openai).run("Does Python or Rust guarantee memory safety?")

    sent = [chunk["text"] for chunk in state["chunks_sent"]]
    assert "ownership" in sent[0] and "ownership" not in sent[1]
    assert state["declined"] is None and state["unsupported"] == []
    assert state["response"] == "Rust guarantees memory safety through ownership and borrowing [1]."
    assert [(citation["n"], citation["supported"]) for citation in state["citations"]] == [(1, True)]
    generate = step(state, "generate")
    assert generate["draft"] == draft
    sentence = generate["grounding"]["sentences"][0]
    assert sentence["cites"] == [1] and sentence["cited_instead"] == [2]


def test_without_a_re_ranker_every_retrieved_passage_reaches_a_hosted_model(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Rust guarantees memory safety through ownership [1]."]))
    state = naive(scripted_openai, top_k=6).run("the cell, the orchard, Rust, Django, React and Python code")
    assert len(state["chunks"]) == 6 and len(state["chunks_sent"]) == 6, "more than a small local model's three"
    assert step(state, "generate")["budget"]["passages"] == {"count": 6, "set_by": "retrieved"}


def test_map_reduce_sends_its_top_k_chunks(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Rust guarantees memory safety through ownership [1]."]))
    retriever = BM25Retriever(top_k=4)
    retriever.inject_infra(chunks=corpus_chunks())
    strategy = MapReduceRAG(Variants(), retriever, ResponseSynthesizer(llm=llm(scripted_openai)), top_k=5)
    state = strategy.run("the Django admin panel, React components and Python code")
    assert len(state["chunks"]) == 5 and len(state["chunks_sent"]) == 5
    assert step(state, "generate")["budget"]["passages"] == {"count": 5, "set_by": "strategy"}


OXYGEN = ("氧气的名字来源于希腊词根ὀξύς oxys（“酸”），字面意思是“尖锐”，指酸味。\n\n1891年 ，苏格兰化学家 詹姆斯·杜瓦 "
          "成功制造出足够数量的液氧进行研究。")
EDICT = ("虽然《南特敕令》的宗教规定仍保持不变，但是 路易十四 继位以后，逐渐加紧迫害胡格诺派，最后直至发布 《枫丹白露法令》"
         " （ 1685年 ）。该法令废止了新教在法国获得的一切法律地位，并强迫胡格诺派改变信仰。")


def test_a_passage_holding_too_little_of_the_question_supports_no_answer():
    # From the development set (bench/answers.py --absent): the V&A's article was not in the
    # knowledge base; the draft took the subject from the question and a year from a passage on
    # liquid oxygen. The passage holds a year the sentence states, but hardly any of the question.
    invented = grounding.check("V＆A起源于1891年 [1]。", "V＆A起源于哪个博览会？", [OXYGEN], "zh-Hant")
    assert invented.declined_by == "support"
    assert invented.sentences[0].whole_question < grounding.WHOLE_QUESTION_SUPPORTED
    # A short question the passage answers in other words is still supported.
    answered = grounding.check("该法令是 1685年宣布的 [1]。", "该法令是何时宣布的?", [EDICT], "zh-Hant")
    assert answered.declined_by is None and answered.sentences[0].supported


METAL = ("许多人估计， 毒液 是黑色金属的源头，并且认为它对1979年成立于纽卡斯尔的极度金属现场的整体影响都至关重要。"
         "民间金属乐队 遮天 ，通常被认为是第一个民间金属乐队，也是在马丁·瓦尔凯尔的激流金属乐队安息日解散后在纽卡斯尔成立的。")


def test_the_question_words_a_passage_shares_are_not_what_it_is_about():
    # From the development set: a question about a poet's protest was answered from a passage on
    # folk metal that shares only "被认为是第一" with it ("is considered the first").
    invented = grounding.check("他的诗歌被认为是第一种民间金属乐队的抗议 [1]。", "他的诗歌被认为是第一种什么样的抗议?",
                               [METAL], "zh-Hant")
    assert invented.declined_by == "support"
    assert set(grounding.terms("他的诗歌被认为是第一种什么样的抗议?", "zh-Hant")) == {"诗歌", "抗议"}


def test_a_re_pointed_sentence_names_one_passage_and_a_sentence_inheriting_its_mark_is_left_as_written():
    passages = ["Rust guarantees memory safety through ownership and borrowing.",
                "Python manages memory with reference counting.", "Django is a web framework."]
    answer = "Rust guarantees memory safety through ownership [2][3]. It relies on borrowing."
    checked = grounding.check(answer, "Does Rust guarantee memory safety?", passages, "en")
    assert checked.sentences[0].cited_instead == [2, 3]
    assert grounding.repointed(answer, checked) == "Rust guarantees memory safety through ownership [1]. It relies on borrowing."
    assert checked.sentences[0].text == "Rust guarantees memory safety through ownership [1]."


@pytest.mark.parametrize(("answer", "expected"), [
    # The README's question, answered in the chat: the mark after the full stop was read as a
    # sentence of its own ("[2]"), which held no words and was flagged as unsupported.
    ("To build one, open Pipelines and choose New pipeline. For Spanish, set its stop_words to spanish. [2]",
     [("To build one, open Pipelines and choose New pipeline.", [2]),
      ("For Spanish, set its stop_words to spanish. [2]", [2])]),
    ("It opened in 1912 [1]. Aurora Vilas painted it. [2]",
     [("It opened in 1912 [1].", [1]), ("Aurora Vilas painted it. [2]", [2])]),
    ("龜嶼燈塔於1912年啟用。[1]", [("龜嶼燈塔於1912年啟用。[1]", [1])]),
    ("It opened in 1912 [1]. It is red.", [("It opened in 1912 [1].", [1]), ("It is red.", [1])]),
    # A sentence with its own number keeps it beside the mark after its full stop.
    ("It opened in 1912 [1]. Aurora Vilas painted it [3]. [2]",
     [("It opened in 1912 [1].", [1]), ("Aurora Vilas painted it [3]. [2]", [3, 2])]),
])
def test_marks_after_the_full_stop_cite_the_sentences_before_them_and_are_no_sentence(answer, expected):
    assert grounding.sentences(answer) == expected


def test_an_initial_in_an_answer_does_not_cut_its_sentence_in_two():
    # "… John F." and "Kennedy [1]." were judged apart: the half sentence without the name was
    # supported and "Kennedy [1]." flagged, shown to the reader as an unsupported sentence.
    passage = "La sonda fue lanzada en 1962 por orden de John F. Kennedy, que visitó la base ese año."
    answer = "La sonda fue lanzada en 1962 por orden de John F. Kennedy [1]."
    checked = grounding.check(answer, "¿Quién ordenó lanzar la sonda?", [passage], "es")
    assert [(sentence.text, sentence.supported) for sentence in checked.sentences] == [(answer, True)]
    assert grounding.sentences("Lo dirige el Dr. Moss en EE. UU. [1]. Abrió en 1912 [2].") == [
        ("Lo dirige el Dr. Moss en EE. UU. [1].", [1]), ("Abrió en 1912 [2].", [2])]


def test_an_answer_whose_mark_follows_its_last_full_stop_is_supported_sentence_by_sentence():
    passage = ("How to build a hybrid retriever. In the builder: Open Pipelines and choose New pipeline; pick the "
               "knowledge base. Add a child: BM25Retriever, top_k 100. For Spanish set its vectorizer's stop_words "
               "to spanish.")
    answer = ("To build a hybrid retriever, open Pipelines, choose New pipeline and add a child: BM25Retriever, "
              "top_k 100. For Spanish, set its vectorizer's stop_words to spanish. [2]")
    checked = grounding.check(answer, "How do I build a hybrid retriever?", ["Retrievers: an overview.", passage],
                              "en")
    assert [(sentence.cites, sentence.supported) for sentence in checked.sentences] == [([2], True), ([2], True)]
    assert grounding.repointed(answer, checked) == answer


SHELLEY = ("Tras la masacre de Peterloo de 1819, el poeta Percy Shelley escribió el poema político La máscara de la "
           "anarquía. Es quizás la primera declaración moderna del principio de protesta no violenta. El autor Henry "
           "David Thoreau retomó una versión en su ensayo Desobediencia Civil, y más tarde Gandhi en su doctrina de "
           "Satyagraha.")
ABC_DOT = ("2000年，美国广播公司发起了一个网络宣传活动，围绕其 圆形标志 ，也称为 点 ”，其中漫画人物Little Dot促使访问者“下载该点” “，"
           "这个程序会导致美国广播公司徽标在屏幕上四处飞行并在右下角停下。")
FIRST_BATTLE = "七年战争的时间与北美大陆战争不一致，从1754年的 朱蒙维尔•格伦战役 到 1760年 的占领蒙特利尔战役。"


@pytest.mark.parametrize(("answer", "question", "passage", "language"), [
    # A name the question misspells ("Shelly") is the name the passage spells ("Shelley").
    ("Henry David Thoreau usó la similitud y semejanza de Percy Shelly en sus escritos [1].",
     "¿Qué autor famoso usó la similitud y semejanza de Percy Shelly en sus escritos?", SHELLEY, "es"),
    # A one-character answer, quoted, is a claim the passage holds.
    ("美国广播公司标志的昵称是“点” [1]。", "2000年活动中美国广播公司标志的昵称是什么？", ABC_DOT, "zh-Hant"),
    # "第一场" (the first) says nothing of the subject: the battle is.
    ("1754年的第一场战役是朱蒙维尔•格伦战役 [1]。", "1754年的第一场战役是什么？", FIRST_BATTLE, "zh-Hant"),
])
def test_right_answers_the_development_set_declined_are_supported(answer, question, passage, language):
    assert grounding.check(answer, question, [passage], language).declined_by is None


def test_a_quoted_word_or_a_near_spelling_the_passage_lacks_supports_nothing():
    assert grounding.check("美国广播公司标志的昵称是“星” [1]。", "2000年活动中美国广播公司标志的昵称是什么？", [ABC_DOT],
                           "zh-Hant").declined_by == "support"
    # One letter apart is a misspelling only in a long word: "actor" is not "autor".
    assert not grounding._one_edit_apart("actor", "autor")
    assert grounding._one_edit_apart("shelly", "shelley") and grounding._one_edit_apart("shelley", "shelly")
    assert not grounding._one_edit_apart("shelly", "shelter")


TRAN_CLAN = ("La región china de Fujian fue el hogar original del clan chino Tran (Chen) antes de migrar a Dai Viet "
             "y cuyos descendientes establecieron la dinastía Trần que gobernaba Vietnam Đại Việt.")
TRAN_BATTLE = ("La dinastía Tran, que gobernó Annam (Dai Viet), aplastó y derrotó a los mongoles en la Batalla de "
               "Bạch Đằng (1288).")
TRAN_REFUGEES = ("El profesor Liam Kelley observó que personas de la dinastía Song huyeron a la dinastía Tran y ayudaron "
                 "a los Tran a luchar contra la invasión mongola.")


def test_a_mark_naming_a_passage_that_does_not_hold_the_sentence_is_dropped():
    # From the development set: the battle is in [1] only; "[2]" sent the reader to a passage on refugees.
    answer = "La Batalla de Bạch Đằng [1] [2]."
    checked = grounding.check(answer, "¿En qué batalla fueron derrotados los mongoles por los Tran?",
                              [TRAN_BATTLE, TRAN_REFUGEES], "es")
    assert (checked.sentences[0].cites, checked.sentences[0].cited_instead) == ([1], [1, 2])
    assert grounding.repointed(answer, checked) == "La Batalla de Bạch Đằng [1]."
    # Both marks stay when each passage holds the sentence.
    both = grounding.check(answer, "¿En qué batalla fueron derrotados los mongoles por los Tran?",
                           [TRAN_BATTLE, TRAN_BATTLE], "es")
    assert (both.sentences[0].cites, both.sentences[0].cited_instead) == ([1, 2], None)


def test_a_sentence_cites_the_passage_holding_all_it_says_rather_than_one_holding_part():
    # From the development set: [1] holds "Dai Viet" but not "Annam"; [2] holds both.
    answer = "La dinastía Tran gobernó Annam (Dai Viet) [1]."
    checked = grounding.check(answer, "¿Dónde gobernó la dinastía Tran?", [TRAN_CLAN, TRAN_BATTLE], "es")
    sentence = checked.sentences[0]
    assert sentence.supported and (sentence.cites, sentence.cited_instead, sentence.new_terms) == ([2], [1], 1.0)
    assert grounding.repointed(answer, checked) == "La dinastía Tran gobernó Annam (Dai Viet) [2]."
    # A passage holding all of it keeps its mark.
    kept = grounding.check("La dinastía Tran gobernó Annam (Dai Viet) [2].", "¿Dónde gobernó la dinastía Tran?",
                           [TRAN_CLAN, TRAN_BATTLE], "es")
    assert (kept.sentences[0].cites, kept.sentences[0].cited_instead) == ([2], None)


@pytest.mark.parametrize(("referent", "question", "problem"), [
    ("Lutero", "¿Cuándo amplió Lutero sus ataques para incluir las doctrinas básicas de ella?", "already names"),
    ("2000年", "它在哪一年停止使用四音符做促销？", "number or a date"),
    ("la Iglesia", "¿Cuándo amplió Lutero sus ataques para incluir las doctrinas básicas de ella?", None),
    ("EE. UU.", "¿Cuál es su capital?", None),
    ("这项", "它的哪一项公文废止了新教?", "refer to something themselves"),
])
def test_a_referent_the_question_already_names_or_a_bare_date_is_refused(referent, question, problem):
    from rag.strategies.answer_prompts import detect_language
    from rag.strategies.followups import referent_problems

    conversation = f"Q: ¿Qué dijo Lutero de la Iglesia en 2000年 y de EE. UU.? 哪一位法国皇帝颁布了这项公文?\nA: {referent}."
    problems = referent_problems(referent, conversation, "ella", question, detect_language(question))
    assert (problem is None and problems == []) or (problem is not None and problem in problems[0])


SPANISH = {1: ["El puente Kestrel fue diseñado por Ada Morrow y está pintado de verde oscuro desde 1931."],
           2: ["El faro de Orrin se encendió por primera vez el 3 de marzo de 1874 y su luz alcanza 20 millas."]}
E5 = {"component": "MultilingualE5SmallEmbedding", "params": {}}


def dense_naive(server, **synthesizer):
    from rag.documents import Chunk
    from rag.retrievers.dense import DenseEmbeddingRetriever

    retriever = DenseEmbeddingRetriever(embedding_model=E5, top_k=2)
    retriever.inject_infra(chunks={document: {0: Chunk(document, document, 0, texts[0])}
                                   for document, texts in SPANISH.items()})
    retriever.init_model()
    return NaiveRAG(retriever=retriever, response_synthesizer=ResponseSynthesizer(llm=llm(server), **synthesizer))


@pytest.mark.slow
def test_passages_far_from_the_question_are_declined_before_the_model_is_asked(scripted_openai):
    state = dense_naive(scripted_openai).run("¿Cuántos goles marcó el Real Madrid en la final de 1960?")

    assert scripted_openai.requests_to(CHAT) == [], "no model call"
    assert state["response"] == NOT_FOUND["es"] and state["citations"] == []
    assert state["declined"]["by"] == "relevance"
    assert [passage["document_id"] for passage in state["declined"]["closest"]]
    relevance = step(state, "generate")["relevance"]
    assert relevance["declined"] and relevance["best"] < relevance["floor"]
    assert relevance["set_by"] == "embedding model" and relevance["model"] == "MultilingualE5SmallEmbedding"


@pytest.mark.slow
def test_a_passage_about_the_question_is_read_and_an_explicit_floor_is_obeyed(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Se encendió el 3 de marzo de 1874 [1]."]))
    state = dense_naive(scripted_openai).run("¿Cuándo se encendió por primera vez el faro de Orrin?")
    assert state["declined"] is None and state["response"].endswith("[1].")
    relevance = step(state, "generate")["relevance"]
    assert not relevance["declined"] and relevance["best"] >= relevance["floor"]

    strict = dense_naive(scripted_openai, relevance_floor=0.999).run("¿Cuándo se encendió el faro de Orrin?")
    assert strict["declined"]["by"] == "relevance"
    assert step(strict, "generate")["relevance"]["set_by"] == "pipeline"
    scripted_openai.enqueue(CHAT, chat_stream(["No lo sé."]))
    never = dense_naive(scripted_openai, relevance_floor=0).run("¿Cuántos goles marcó el Real Madrid en 1960?")
    assert "relevance" not in step(never, "generate") and len(scripted_openai.requests_to(CHAT)) == 2


JACKSONVILLE = "杰克逊维尔是美国佛罗里达州人口最多的城市，位于杜瓦尔郡，是该郡的县治所在地。"
CIVIL_DISOBEDIENCE = "革命性的公民不服从是指试图推翻一个政府或改变文化传统、社会习俗、宗教信仰等的非暴力反抗行为。"
TWO_PART_ZH = "杰克逊维尔位于哪个郡，以及当有人试图推翻一个政府或信仰体系时，这叫什么？"


def test_one_sentence_answering_two_parts_from_two_passages_is_supported_by_both():
    # From the two-fact development set: the county is in [1], the name in [2]; the model cited [1].
    answer = "杰克逊维尔位于杜瓦尔郡，当有人试图推翻一个政府或信仰体系时，这叫革命性的公民不服从 [1]。"
    checked = grounding.check(answer, TWO_PART_ZH, [JACKSONVILLE, CIVIL_DISOBEDIENCE], "zh-Hant")
    sentence = checked.sentences[0]
    assert checked.declined_by is None and sentence.supported
    assert (sentence.cites, sentence.cited_instead) == ([1, 2], [1])
    assert grounding.repointed(answer, checked).endswith("公民不服从 [1, 2]。")
    # A sentence one passage holds keeps that passage alone: the other adds nothing to it.
    alone = grounding.check("杰克逊维尔位于杜瓦尔郡 [1]。", TWO_PART_ZH, [JACKSONVILLE, CIVIL_DISOBEDIENCE], "zh-Hant")
    assert alone.sentences[0].supported and alone.sentences[0].cites == [1]
    # Words neither passage holds are not supported by the two together.
    invented = grounding.check("杰克逊维尔位于棕榈滩郡，这叫和平抗议运动 [1]。", TWO_PART_ZH,
                               [JACKSONVILLE, CIVIL_DISOBEDIENCE], "zh-Hant")
    assert not invented.sentences[0].supported


DENMARK = "Tras dos intentos fallidos, Dinamarca entró en la Comunidad Europea en 1972, junto con Irlanda y el Reino Unido."
POLIGNAC = ("La conjetura de Polignac sostiene que para cualquier número entero positivo n hay infinitos pares de primos "
            "consecutivos que difieren en 2n.")
TWO_PART_ES = ("¿Cuándo se incorporó Dinamarca a la UE y qué conjetura sostiene que para cualquier número entero positivo "
               "n, hay una cantidad infinita de pares de primos consecutivos que difieren en 2n?")


def test_sentences_answering_one_part_each_from_their_own_passages_are_supported():
    # A passage holding one part of a two-part question holds little of the whole question, but it
    # holds the part the sentence answers: each sentence is judged by its passage's share of that part.
    answer = ("Dinamarca se incorporó a la UE en 1972 [1]. La conjetura de Polignac sostiene que hay infinitos pares "
              "de primos consecutivos que difieren en 2n [2].")
    checked = grounding.check(answer, TWO_PART_ES, [DENMARK, POLIGNAC], "es")
    assert [(sentence.cites, sentence.supported) for sentence in checked.sentences] == [([1], True), ([2], True)]
    # One part answered from its passage is a right answer to that part, not a decline; words the
    # passage does not hold are still no answer.
    one = grounding.check("Dinamarca se incorporó a la UE en 1972 [1].", TWO_PART_ES, [DENMARK, POLIGNAC], "es")
    assert one.declined_by is None
    invented = grounding.check("Dinamarca se incorporó a la UE en 1986 tras un referéndum [1].", TWO_PART_ES,
                               [DENMARK, POLIGNAC], "es")
    assert invented.declined_by == "support"


HURRICANE = ("El efecto más fuerte en Jacksonville fue del huracán Dora en 1964. El ojo cruzó San Agustín con vientos "
             "que apenas habían disminuido a 110 mph.")
COUNTDOWN = ('Para enero se planificó una prueba de "desconexión", que simularía una cuenta atrás del lanzamiento en el '
             "LC-34 con el traslado de la nave a la alimentación interna.")
TWO_PART_HURRICANE = ("¿Con qué velocidad soplaron los vientos alrededor de San Agustín en el huracán de 1964 y qué fue lo "
                      "que se hizo para simular en el LC-34?")


def test_a_sentence_copied_from_the_passage_of_its_part_is_supported_and_the_answer_stands():
    # From the two-fact development set: both facts answered, the mark after the last full stop
    # naming the countdown passage for both sentences; the answer was declined, as that passage holds
    # 0.13 of the whole question, whose first part's words weigh more.
    answer = ("Los vientos alrededor de San Agustín en el huracán de 1964 alcanzaron hasta 110 mph. Para simular en el "
              'LC-34 se planificó una prueba de "desconexión" que simularía una cuenta atrás del lanzamiento. [2]')
    checked = grounding.check(answer, TWO_PART_HURRICANE, [HURRICANE, COUNTDOWN], "es")
    assert checked.declined_by is None
    assert [(sentence.cites, sentence.supported) for sentence in checked.sentences][1] == ([2], True)
    # A sentence repeating both parts is about the whole question, which the countdown passage
    # holds too little of: it is judged as before.
    both = grounding.check("Los vientos de San Agustín en el huracán de 1964 se simularon en el LC-34 con una prueba "
                           'de "desconexión" [2].', TWO_PART_HURRICANE, [HURRICANE, COUNTDOWN], "es")
    assert not both.sentences[0].supported


FUSION_WEIGHTED = ("fusion weighted (what the Hybrid preset uses) — each child's scores are min–max normalised to 0–1 "
                   "over the list it returned, multiplied by that child's weight and summed; a chunk a child did not "
                   "return gets 0 from it.")


def test_an_english_plural_the_stemmer_leaves_whole_is_the_word_the_passage_uses():
    # The guide's own question, answered right in the passage's words, was declined: "children" was
    # not "child", and "does" counted as a word of the subject.
    answer = ("The hybrid retriever fuses its children's scores by min–max normalising them to 0–1 over the list they "
              "returned, multiplying them by that child's weight and summing.")
    question = "How does the hybrid retriever fuse its children's scores?"
    assert grounding.check(answer, question, [FUSION_WEIGHTED], "en").declined_by is None
    assert grounding.terms("The children of the women", "en") == {"child": 5, "woman": 5}
    # The weights are the words' own: an invented answer borrowing the plural is still not the passage's.
    assert grounding.check("The children's scores are fused by Reciprocal Rank Fusion with k = 60 [1].", question,
                           [FUSION_WEIGHTED], "en").declined_by == "support"


def test_an_answer_naming_no_passage_cites_the_one_that_holds_each_sentence_and_the_trace_says_so(scripted_openai):
    draft = "Rust guarantees memory safety through ownership and borrowing. It was designed by Guido van Rossum."
    scripted_openai.enqueue(CHAT, chat_stream([draft]))
    state = naive(scripted_openai).run("Does Python or Rust guarantee memory safety?")

    assert "ownership" in state["chunks_sent"][0]["text"]
    assert state["response"] == ("Rust guarantees memory safety through ownership and borrowing [1]. "
                                 "It was designed by Guido van Rossum.")
    assert [(citation["n"], citation["supported"]) for citation in state["citations"]] == [(1, True)]
    assert state["unsupported"] == ["It was designed by Guido van Rossum."]
    generate = step(state, "generate")
    assert generate["citations_marked"] == [1] and generate["draft"] == draft


def test_a_chinese_sentence_takes_its_mark_before_its_full_stop():
    checked = grounding.check("埃菲爾鐵塔於 1889 年完工。", "埃菲爾鐵塔何時完工？",
                              ["艾菲爾鐵塔", "埃菲爾鐵塔於 1889 年為世界博覽會完工。"], "zh-Hant")
    assert grounding.marked("埃菲爾鐵塔於 1889 年完工。", checked) == ("埃菲爾鐵塔於 1889 年完工 [2]。", [2])


def test_the_digits_of_a_name_are_no_number_a_passage_must_state():
    # From the development set: "S2" in "DVB-S2" was read as the number 2, which [2] states ("两家");
    # the sentence then stood on the number and kept citing [2], which never names DVB-S2.
    sky = ("BSkyB的标清广播是以 DVB-兼容 MPEG-2 进行的。Sky+HD内容是使用 MPEG-4 广播的，大部分高清内容使用 "
           "DVB-S2 标准。")
    deal = "双发达成的协议包括，两家频道供应商都能获得额外的最高支付额度。目前还没有迹象表明新协议是否包括此前BSkyB提供的高清内容。"
    assert grounding.numbers("大部分高清内容使用 DVB-S2 标准，MPEG-2、A380 与 COVID-19 亦然", "zh-Hant") == set()
    assert grounding.numbers("Apolo 11 llegó en 1969, en los años 1960s", "es") == {"11", "1969", "1960"}
    answer = "大部分高清内容使用 DVB-S2 标准 [2]。"
    checked = grounding.check(answer, "大部分高清内容使用什么标准？", [sky, deal], "zh-Hant")
    sentence = checked.sentences[0]
    assert sentence.supported and (sentence.cites, sentence.cited_instead) == ([1], [2])
    assert grounding.repointed(answer, checked) == "大部分高清内容使用 DVB-S2 标准 [1]。"


def test_sentences_reading_a_re_pointed_mark_after_the_full_stop_keep_the_passage_holding_them():
    # From the development set: three sentences copied from [1] and a fourth from [2], one mark
    # after the last full stop ("… 。 [1]"). Re-pointing the fourth to [2] changed that mark, so the
    # three sentences [1] holds, the answer among them, read [2] and the reader lost [1].
    duties = ("In the United Kingdom pharmacy technicians manage the pharmacy department and its specialised "
              "areas. Once qualified, pharmacy technicians register with the General Pharmaceutical Council.")
    automation = "Legislation sets storage conditions. Pharmacy technicians now rely on automation to handle prescriptions."
    answer = ("Pharmacy technicians manage the pharmacy department and its specialised areas. Once qualified, they "
              "register with the General Pharmaceutical Council. They rely on automation to handle prescriptions. [1]")
    checked = grounding.check(answer, "What are the duties of a pharmacy technician?", [duties, automation], "en")
    assert [(sentence.cites, sentence.cited_instead) for sentence in checked.sentences] == \
        [([1], None), ([1], None), ([2], [1])]
    written = grounding.repointed(answer, checked)
    assert written == ("Pharmacy technicians manage the pharmacy department and its specialised areas [1]. Once "
                       "qualified, they register with the General Pharmaceutical Council [1]. They rely on automation "
                       "to handle prescriptions. [2]")
    assert [cites for _, cites in grounding.sentences(written)] == [[1], [1], [2]]
    # When the sentences before read the same passage as the re-pointed one, its mark still covers them.
    both = ("Pharmacy technicians manage the pharmacy department and its specialised areas. They rely on automation "
            "to handle prescriptions.")
    moved = "Pharmacy technicians manage the department. They rely on automation to handle prescriptions. [1]"
    rechecked = grounding.check(moved, "What are the duties of a pharmacy technician?", ["Legislation sets storage "
                                "conditions for medicines.", both], "en")
    assert [sentence.cites for sentence in rechecked.sentences] == [[2], [2]]
    assert grounding.repointed(moved, rechecked) == ("Pharmacy technicians manage the department. They rely on "
                                                     "automation to handle prescriptions. [2]")


def test_a_claim_borrowed_from_a_passage_about_something_else_is_not_re_pointed_there():
    # From the development set: the model cited the passage on Hadrian's Wall, which names the Picts,
    # and wrote the "northern bandits" of a passage on the Trần dynasty. Moving the mark to that
    # passage made an invented answer look supported; a wrong citation number is moved only to a
    # passage about the question as much as the one cited.
    wall = ("哈德良长城的长度是73英里（117公里），跨越英国的宽度;城墙装有壁垒，建筑目的主要用于防御，以防止不必要的移民和"
            "来自北方的 皮克特族 部落的入侵，而不是用作重大入侵的战斗防线。罗马人在长城沿线修建了堡垒。")
    tran = ("利亚姆·凯利教授指出，赵忠、许宗道等宋人在蒙古人侵略宋朝后逃往越南陈王朝，他们也帮助了陈王朝抗击蒙古人入侵。"
            "记载了蒙古人入侵、并将其称作“北方匪徒”的道士许宗道亦本是福建人。")
    question = "罗马人害怕从北方入侵的部落叫什么？"
    borrowed = grounding.check("罗马人害怕从北方入侵的部落叫“北方匪徒” [1]。", question, [wall, tran], "zh-Hant")
    assert borrowed.declined_by == "support"
    assert borrowed.sentences[0].cites == [1] and borrowed.sentences[0].cited_instead is None
    # The same slip of the number towards a passage about the question is still mended.
    right = grounding.check("罗马人害怕从北方入侵的部落叫皮克特族 [1]。", question, [tran, wall], "zh-Hant")
    sentence = right.sentences[0]
    assert right.declined_by is None and (sentence.cites, sentence.cited_instead) == ([2], [1])


def test_a_draft_copying_a_worked_example_is_asked_again_without_the_examples(scripted_openai):
    copied = "The engineer Clara Soto designed the bridge [2]."
    scripted_openai.enqueue(CHAT, chat_stream([copied]))
    scripted_openai.enqueue(CHAT, chat_response("The mitochondria produces ATP through respiration [1]."))
    state = naive(scripted_openai).run("What does the mitochondria produce?")

    assert state["response"] == "The mitochondria produces ATP through respiration [1]."
    assert state["declined"] is None and [citation["n"] for citation in state["citations"]] == [1]
    asked = step(state, "generate")["asked_without_examples"]
    assert asked["draft"] == copied and asked["copied"] == EXAMPLES["en"][4][2]
    first, again = (request.body["messages"] for request in scripted_openai.requests_to(CHAT))
    assert len(first) == 2 + 2 * len(EXAMPLES["en"])
    assert [message["role"] for message in again] == ["system", "user"]
    assert again[0] == first[0] and again[-1] == first[-1], "the same instructions, passages and question"


@pytest.mark.parametrize(("answer", "language", "passages", "copied"), [
    ("La ciudad creció deprisa tras la llegada del ferrocarril en 1890 [1].", "es",
     ["Varsovia es la capital de Polonia."], EXAMPLES["es"][4][1][0]),
    ("El puente fue inaugurado por el alcalde Juan Pérez en 1932 [2].", "es",
     ["El puente de Varsovia se abrió en 1914."], EXAMPLES["es"][4][1][1]),
    ("這座橋由工程師克拉拉·索托設計 [2]。", "zh-Hant", ["華沙是波蘭的首都。"], EXAMPLES["zh-Hant"][4][1][1]),
    # The passages hold the same words: the answer read them.
    ("La ciudad creció deprisa tras la llegada del ferrocarril en 1890 [1].", "es",
     ["Como otras del valle, la ciudad creció deprisa tras la llegada del ferrocarril en 1890."], None),
    # The decline is meant to be copied; a few shared words are chance.
    ("Los documentos no lo dicen.", "es", ["Varsovia es la capital de Polonia."], None),
    ("La Torre Eiffel mide 330 metros [1].", "es", ["Varsovia es la capital de Polonia."], None),
])
def test_an_answer_is_a_copy_of_a_worked_example_only_when_its_passages_lack_the_words(answer, language, passages,
                                                                                      copied):
    assert copied_example(answer, language, passages) == copied


def test_a_follow_up_repeating_the_previous_question_s_words_refers_to_what_they_named(scripted_openai):
    # The development set's IPCC conversation: asked what "él" stands for, the 1.5B named the person
    # of the previous answer. The follow-up repeats "presidente de", where the previous question had
    # the IPCC; the model is not asked.
    history = [{"role": "user", "content": "¿Cuándo renunció Pachauri como presidente del IPCC?"},
               {"role": "assistant", "content": "Rajendra K. Pachauri renunció en febrero de 2015 [1]."}]
    scripted_openai.enqueue(CHAT, chat_stream(["Los documentos no lo dicen."]))
    state = naive(scripted_openai).run("¿Quién es el presidente de él?", history=history)
    searched = step(state, "search_question")
    assert state["search_question"] == "¿Quién es el presidente del IPCC?" == step(state, "retrieve")["query"]
    assert searched["refers_to"] == "el IPCC" and searched["attempts"] == []
    assert searched["reason"] == "repeats the previous question's words, with the marked words where they named it"
    assert state["trace"]["llm_calls"] == 1


@pytest.mark.parametrize(("previous", "question", "language", "referent"), [
    ("¿Quién fue el primer presidente del IPCC?", "¿Quién es el presidente de él?", "es", "el IPCC"),
    ("¿Quién diseñó la fachada de la catedral?", "¿Cuándo se terminó su fachada?", "es", "la catedral"),
    ("What is the capital of France?", "What is the population of its capital?", "en", "France"),
    ("Who wrote the king's speech?", "When was his speech given?", "en", "the king"),
    ("2015年黑豹队的防守有多少次拦截记录？", "它的防守丢了多少分？", "zh-Hans", "黑豹队"),
    # No word repeated beside the pronoun: the model is asked.
    ("¿Quién es el vicepresidente del IPCC?", "¿Quién es el presidente de él?", "es", None),
    ("谁是诺曼人在意大利的主要敌人？", "它的城堡叫什么名字？", "zh-Hans", None),
    ("Who designed the Kestrel Bridge?", "Where did she study?", "en", None),
    # Put back, the thing would ask the previous question again: the pronoun stands for its answer.
    ("Who is the father of the king?", "And who is the father of him?", "en", None),
    # "ella" does not stand for "el puente".
    ("¿Quién es el diseñador del puente?", "¿Quién es el diseñador de ella?", "es", None),
])
def test_the_thing_a_repeated_word_was_joined_to_in_the_previous_question(previous, question, language, referent):
    from rag.strategies.followups import marked_word, parallel_referent

    history = [{"role": "user", "content": previous}, {"role": "assistant", "content": "…"}]
    assert parallel_referent(history, question, marked_word(question, language), language) == referent
