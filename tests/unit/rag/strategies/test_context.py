"""What the answering model reads: each text once, a few passages, cut to the budget around the question."""

import re

import pytest

from rag.documents.chunkers import RecursiveCharacterChunker
from rag.documents.focus import focus, sentence_bounds
from rag.documents.models import Chunk
from rag.documents.parsers.base import Section
from rag.llms import LocalLLM, OpenAICompatibleLLM, ReadingDefaults, estimate_tokens
from rag.retrievers import Hit
from rag.retrievers.composite import EnsembleRetriever
from rag.retrievers.sparse import BM25Retriever
from rag.strategies import NaiveRAG, ResponseSynthesizer, detect_language
from rag.strategies.answer_prompts import DECLINED, EXAMPLES, INSTRUCTIONS
from rag.strategies.context import PASSAGE_FLOOR_TOKENS, SHARES, distinct, fit
from rag.strategies.synthesizer import MIN_READING_ROOM
from tests.support.scripted_openai import chat_stream

pytestmark = pytest.mark.unit

CHAT = "/v1/chat/completions"
TOPICS = ["pruning pears", "training espaliers", "feeding apple trees", "thinning fruit"]
SECTIONS = [Section(" ".join(f"Note {page}.{i} is about {TOPICS[(page + i) % 4]}." for i in range(8)), {"page": page})
            for page in (1, 2, 3)]


def overlapping_document():
    """Three pages cut with overlap as ingestion cuts them: each chunk repeats a sentence of the one before."""
    drafts = RecursiveCharacterChunker(chunk_size=100, chunk_overlap=40).split(SECTIONS)
    return {0: {draft.position: Chunk(10 + draft.position, 0, draft.position, draft.text, draft.metadata)
                for draft in drafts}}


def sentences(text):
    return [sentence for sentence in re.findall(r"Note \d\.\d is about [a-z ]+\.", text)]


def passages_of(messages):
    body = messages[-1]["content"]
    return re.findall(r"^\[\d+\] (.*?)(?=\n\n\[\d+\] |\n\n[A-Z][a-z]+: )", body, flags=re.S | re.M)


def test_overlapping_windows_and_chunks_from_two_retrievers_reach_the_model_with_no_sentence_twice(scripted_openai):
    chunks = overlapping_document()
    assert any(chunks[0][p].text[:15] in chunks[0][p - 1].text for p in range(1, len(chunks[0])))
    windows = BM25Retriever(top_k=4, enable_retrieve_then_expand=True, expand_window=3)
    plain = BM25Retriever(top_k=4)
    fusion = EnsembleRetriever(children=[windows, plain], top_k=8)
    for retriever in (windows, plain, fusion):
        retriever.inject_infra(chunks=chunks)
    scripted_openai.enqueue(CHAT, chat_stream(["Espaliers are trained [1]."]))
    synthesizer = ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m"),
                                      max_passages=8)
    state = NaiveRAG(retriever=fusion, response_synthesizer=synthesizer).run("Note 2.3 training espaliers")

    retrieved = [sentence for row in state["chunks"] for sentence in sentences(row["text"])]
    assert len(retrieved) > len(set(retrieved)), "the retrievers' results overlap, or this test proves nothing"
    sent = [sentence for passage in passages_of(scripted_openai.requests_to(CHAT)[0].body["messages"])
            for sentence in sentences(passage)]
    assert sent and len(sent) == len(set(sent)), f"repeated in the prompt: {sent}"
    assert set(sent) == set(retrieved)
    budget = state["trace"]["steps"][-1]["budget"]
    assert budget["duplicates"] or budget["trimmed"]


def test_a_passage_inside_one_already_sent_is_a_duplicate_and_an_overlap_is_cut_off():
    chunks = overlapping_document()[0]
    window = BM25Retriever(enable_retrieve_then_expand=True, expand_window=3)
    window.inject_infra(chunks={0: chunks})
    [unit] = window.expand_retrieved_chunks([chunks[4]], 3)  # positions 3..5, one page
    copy = Chunk(99, 1, 0, chunks[4].text)  # the same text in another document
    selection = distinct([Hit(unit, 3.0), Hit(chunks[4], 2.0), Hit(chunks[6], 1.5), Hit(copy, 1.0)])

    assert [hit.chunk.id for hit in selection.hits] == [unit.id, 16]
    assert selection.duplicates == [{"chunk_id": 14, "of": unit.id}, {"chunk_id": 99, "of": unit.id}]
    cut = selection.hits[1].chunk
    assert sentences(cut.text) == ["Note 1.7 is about pruning pears."]
    assert not set(sentences(cut.text)) & set(sentences(unit.text)) and cut.text in chunks[6].text
    assert (cut.metadata["start"], cut.metadata["end"]) == (254 + 1, 287)
    assert selection.trimmed == [{"chunk_id": 16, "reason": "overlap", "characters": len(cut.text),
                                  "of": len(chunks[6].text)}]


def test_focus_keeps_the_sentences_around_the_one_that_shares_the_questions_words():
    text = ("The orchard was planted in 1921. Its pears are pruned in late winter. "
            "Espaliers along the south wall were trained by Ada Moss in 1950. The shop opens at nine.")
    assert focus(text, "Who trained the espaliers?", 20) == \
        "Espaliers along the south wall were trained by Ada Moss in 1950."
    assert focus(text, "Who trained the espaliers?", 30) == (
        "Espaliers along the south wall were trained by Ada Moss in 1950. The shop opens at nine.")
    assert focus(text, "Who trained the espaliers?", 5) == ""
    assert focus("黑豹隊防守只丟了308分。他們排名第六。", "黑豹隊的防守丟了多少分？", 16) == "黑豹隊防守只丟了308分。"


def test_an_initial_or_a_title_does_not_end_a_sentence_the_cut_keeps():
    # From the development set: cut at "Rajendra K.", the passage the model read ended with that
    # half name, and the model answered that Pachauri was the IPCC's first chair.
    text = ("El economista Hoesung Lee es el presidente del IPCC desde 2015. "
            "Los presidentes anteriores fueron Rajendra K. Pachauri, elegido en 2002, y Bert Bolin en 1988. "
            "La sede de EE. UU. queda en Washington.")
    assert [text[start:end] for start, end in sentence_bounds(text)] == [
        "El economista Hoesung Lee es el presidente del IPCC desde 2015.",
        "Los presidentes anteriores fueron Rajendra K. Pachauri, elegido en 2002, y Bert Bolin en 1988.",
        "La sede de EE. UU. queda en Washington."]
    assert focus(text, "¿Quiénes fueron los presidentes anteriores?", 30) == (
        "Los presidentes anteriores fueron Rajendra K. Pachauri, elegido en 2002, y Bert Bolin en 1988.")
    lines = "Vitamin C.\nA line of its own. Dr. Moss, St. Ives."
    assert [lines[start:end] for start, end in sentence_bounds(lines)] == [
        "Vitamin C.", "A line of its own.", "Dr. Moss, St. Ives."]


def test_a_latin_word_or_number_written_between_ideographs_is_matched_as_a_word_of_the_question():
    # From the development set: "支持LOR" was one token holding ideographs, so "LOR" matched nothing
    # and the tie between the two sentences went to the first, which does not answer.
    text = "希曼斯成立了特设委员会，成为美国国家航空航天局任务模式决策的转折点。1961年末，载人太空船中心的成员开始支持LOR。"
    assert focus(text, "美国宇航局的哪个部门首先支持LOR?", 36) == "1961年末，载人太空船中心的成员开始支持LOR。"


def test_the_budget_gives_the_best_passage_the_largest_share_and_drops_what_cannot_keep_a_sentence():
    hits = [Hit(Chunk(n, n, 0, " ".join(f"Sentence {n}.{i} tells about pears and apples in the orchard."
                                         for i in range(30))), 1.0) for n in range(3)]
    selection = fit(hits, "pears orchard", 300, estimate_tokens)
    sizes = [estimate_tokens(hit.chunk.text) for hit in selection.hits]
    assert len(sizes) == 3 and sizes[0] > sizes[1] > sizes[2] and sum(sizes) <= 300
    assert [entry["reason"] for entry in selection.trimmed] == ["budget"] * 3

    tight = fit(hits, "pears orchard", 20, estimate_tokens)
    assert [hit.chunk.id for hit in tight.hits] == [0] and tight.dropped == [1, 2]


def test_a_budget_too_small_for_three_sentences_a_passage_goes_to_fewer_passages_the_best_first():
    hits = [Hit(Chunk(n, n, 0, " ".join(f"Sentence {n}.{i} tells about pears and apples in the orchard."
                                         for i in range(30))), 1.0) for n in range(3)]
    small = fit(hits, "pears orchard", PASSAGE_FLOOR_TOKENS + 50, estimate_tokens)
    assert [hit.chunk.id for hit in small.hits] == [0] and small.dropped == [1, 2]
    assert estimate_tokens(small.hits[0].chunk.text) > (PASSAGE_FLOOR_TOKENS + 50) * SHARES[0]

    two = fit(hits, "pears orchard", 2 * PASSAGE_FLOOR_TOKENS + 50, estimate_tokens)
    assert [hit.chunk.id for hit in two.hits] == [0, 1] and two.dropped == [2]

    # What a short best passage leaves passes on to the next one.
    short_first = [Hit(Chunk(9, 9, 0, "Pears grow in the orchard."), 1.0), *hits[1:]]
    passed_on = fit(short_first, "pears orchard", PASSAGE_FLOOR_TOKENS + 50, estimate_tokens)
    assert [hit.chunk.id for hit in passed_on.hits[:2]] == [9, 1]
    assert sum(estimate_tokens(hit.chunk.text) for hit in passed_on.hits) <= PASSAGE_FLOOR_TOKENS + 50


def test_the_local_models_reading_budget_bounds_the_passages_and_the_trace_says_which_limit_applied():
    hits = [Hit(Chunk(n, n, 0, " ".join(f"Sentence {n}.{i} tells about pears and apples in the orchard."
                                         for i in range(40))), 1.0) for n in range(6)]
    local = ResponseSynthesizer(llm=LocalLLM(reading_tokens=400))
    prepared = local.prepare("What grows in the orchard?", hits)
    account = prepared.budget
    assert account["limited_by"] == "reading_tokens" and account["new_tokens"] <= 400
    assert account["sent"] == [0, 1, 2] and account["beyond_max_passages"] == [3, 4, 5]
    assert account["dropped"] == [3, 4, 5] and account["truncated"] == 0
    assert account["model_limits"] == {"context_tokens": 4096, "answer_tokens": 384, "reading_tokens": 400}

    roomy = ResponseSynthesizer(llm=LocalLLM(reading_tokens=32768, context_tokens=1024), max_passages=6)
    account = roomy.prepare("What grows in the orchard?", hits).budget
    assert account["limited_by"] == "context_tokens" and account["used_tokens"] <= 1024 - 200  # max_answer_tokens


@pytest.mark.parametrize(
    ("question", "language"),
    [
        ("How many points did the Panthers give up?", "en"),
        ("¿Cuántos puntos cedieron los Panthers?", "es"),
        ("黑豹队的防守丢了多少分？", "zh-Hans"),
        ("黑豹隊的防守丟了多少分？", "zh-Hant"),
    ],
)
def test_the_answer_is_asked_for_in_the_questions_language_and_script_with_examples_in_it(question, language):
    prepared = ResponseSynthesizer().prepare(question, [Hit(Chunk(1, 1, 0, "Los Panthers cedieron 308 puntos."), 1.0)])
    assert prepared.language == language
    system, *examples, user = prepared.messages
    assert system == {"role": "system", "content": INSTRUCTIONS[language]}
    assert [turn["content"] for turn in examples[1::2]] == [answer for _, _, answer in EXAMPLES[language]]
    assert all(re.search(r"\S.*\[\d\]", answer) or answer == DECLINED[language]
               for _, _, answer in EXAMPLES[language]), "an example answer is only a citation"
    assert sum(answer == DECLINED[language] for _, _, answer in EXAMPLES[language]) == 1, "one example declines"
    # The passages first, the question once and last: a question over the passage of the one
    # before reads only itself (the prompt cache holds the rest).
    assert user["content"].count(question) == 1 and user["content"].endswith(question)
    assert user["content"].index("[1] Los Panthers cedieron 308 puntos.") < user["content"].index(question)


def test_chinese_whose_characters_are_the_same_in_both_scripts_follows_the_passages():
    assert detect_language("特斯拉是哪一年去世的？", "特斯拉于1943年在纽约去世。") == "zh-Hans"
    assert detect_language("特斯拉是哪一年去世的？", "特斯拉於1943年在紐約去世。") == "zh-Hant"
    assert detect_language("特斯拉是哪一年去世的？") == "zh-Hant"


def test_own_instructions_replace_the_built_in_ones_and_their_examples():
    prepared = ResponseSynthesizer(instructions="Answer like a pirate, citing [n].").prepare("Why?", [])
    assert [message["role"] for message in prepared.messages] == ["system", "user"]


def test_the_reading_budget_is_the_models_fixed_default_unless_the_pipeline_says_otherwise():
    orchard = [Hit(Chunk(n, n, 0, " ".join(f"Sentence {n}.{i} tells about pears and apples in the orchard."
                                           for i in range(40))), 1.0) for n in range(6)]
    # A packaged model's defaults: a few passages within a fixed budget, the slower model less.
    assert LocalLLM().reading_defaults() == ReadingDefaults(passages=3, reading_tokens=400)
    assert LocalLLM(model="qwen2.5-1.5b-instruct").reading_defaults() == ReadingDefaults(passages=3, reading_tokens=320)
    assert "reading_tokens" not in LocalLLM().input_limits(), "no budget is set, none is measured"
    account = ResponseSynthesizer(llm=LocalLLM(model="qwen2.5-1.5b-instruct")).prepare("What grows?", orchard).budget
    assert account["passages"] == {"count": 3, "set_by": "model default"}
    assert account["reading_tokens_set_by"] == "model default" and account["new_tokens"] <= 320
    # An explicit setting is obeyed: the model's own reading budget, a passage count, the strategy's count.
    assert LocalLLM(reading_tokens=900).input_limits()["reading_tokens"] == 900
    explicit = ResponseSynthesizer(llm=LocalLLM(model="qwen2.5-1.5b-instruct"), max_passages=5)
    account = explicit.prepare("What grows?", orchard).budget
    assert account["passages"] == {"count": 5, "set_by": "max_passages"} and len(account["sent"]) == 5
    assert "reading_tokens" not in account["model_limits"] and account["limited_by"] == "max_input_tokens"
    handed = ResponseSynthesizer(llm=LocalLLM(model="qwen2.5-1.5b-instruct")).prepare("What grows?", orchard, passages=4)
    assert handed.budget["passages"] == {"count": 4, "set_by": "strategy"} and len(handed.sent) == 4
    # A hosted model reads every passage handed over, within the input budget.
    hosted = ResponseSynthesizer(llm=OpenAICompatibleLLM(base_url="http://127.0.0.1:9/v1", model="m"))
    assert len(hosted.prepare("What grows?", orchard).sent) == 6


def test_the_models_own_reading_budget_is_obeyed_even_above_its_default():
    orchard = [Hit(Chunk(n, n, 0, " ".join(f"Sentence {n}.{i} tells about pears and apples in the orchard."
                                           for i in range(40))), 1.0) for n in range(6)]
    account = ResponseSynthesizer(llm=LocalLLM(model="qwen2.5-1.5b-instruct", reading_tokens=900)).prepare(
        "What grows?", orchard).budget
    assert account["model_limits"]["reading_tokens"] == 900 and account["reading_tokens_set_by"] == "model"
    assert 600 < account["new_tokens"] <= 900


def test_a_question_searched_part_by_part_reads_the_default_once_per_part():
    """An agentic plan searched each part of a two-part question: the default budget, which gave
    one passage, is read once per part, so each part's passage reaches the model."""
    def passage(n, fruit, query):
        text = " ".join(f"Sentence {n}.{i} says the {fruit} trees of the orchard were planted in 19{i:02d}."
                        for i in range(12))
        return Hit(Chunk(n, n, 0, text), 1.0, ({"child": 0, "query": query, "rank": 1},))
    question = "When were the pear trees planted, and when were the plum trees planted?"
    split = [passage(1, "pear", "pear trees planted"), passage(2, "plum", "plum trees planted"),
             passage(3, "pear", "pear trees planted")]
    whole = [Hit(hit.chunk, hit.score, ({"child": 0, "query": None, "rank": 1},)) for hit in split]
    model = LocalLLM(model="qwen2.5-1.5b-instruct")
    once = ResponseSynthesizer(llm=model).prepare(question, whole)
    twice = ResponseSynthesizer(llm=model).prepare(question, split)
    assert once.budget["parts"] == 1 and once.budget["model_limits"]["reading_tokens"] == 320
    assert twice.budget["parts"] == 2 and twice.budget["model_limits"]["reading_tokens"] == 640
    assert twice.budget["reading_tokens_set_by"] == "model default"
    assert once.budget["new_tokens"] <= 320 < twice.budget["new_tokens"] <= 640
    read = {hit.chunk.id: hit.chunk.text for hit in twice.sent}
    assert len(read) == 3 and all(len(read[hit.chunk.id]) >= len(hit.chunk.text) for hit in once.sent)
    # An explicit passage count is obeyed as it is, parts or not.
    assert ResponseSynthesizer(llm=model, max_passages=1).prepare(question, split).budget["parts"] == 1


def test_the_prompt_is_the_same_after_the_model_has_read_on_a_busy_machine():
    """What the model reads depends on relevance and settings: reading a prompt (llama.cpp
    times every read) on a loaded machine changes nothing in the next prompt."""
    import threading
    import time

    hits = [Hit(Chunk(n, n, 0, "The orchard grows pears and apples. " * 30), 1.0) for n in range(4)]
    synthesizer = ResponseSynthesizer(llm=LocalLLM(model="smollm2-135m-instruct", context_tokens=2048))
    before = synthesizer.prepare("What grows in the orchard?", hits)
    stop = threading.Event()

    def burn() -> None:
        while not stop.is_set():
            sum(range(10_000))

    burners = [threading.Thread(target=burn, daemon=True) for _ in range(2)]
    for burner in burners:
        burner.start()
    try:
        started = time.perf_counter()
        synthesizer.answer(before)  # a timed read, slowed by the load
        assert time.perf_counter() - started > 0
    finally:
        stop.set()
    after = synthesizer.prepare("What grows in the orchard?", hits)
    assert after.messages == before.messages and after.budget["sent"] == before.budget["sent"]


def test_the_answer_is_capped_at_max_answer_tokens_but_never_past_the_models_own_limit(scripted_openai):
    scripted_openai.enqueue(CHAT, chat_stream(["Pears [1]."]))
    scripted_openai.enqueue(CHAT, chat_stream(["Pears [1]."]))
    hits = [Hit(Chunk(1, 1, 0, "Pears grow in the orchard."), 1.0)]
    for llm_limit in (1024, 120):
        llm = OpenAICompatibleLLM(base_url=scripted_openai.base_url, model="m", max_tokens=llm_limit)
        synthesizer = ResponseSynthesizer(llm=llm)
        assert "".join(synthesizer.stream_answer(synthesizer.prepare("What grows?", hits))) == "Pears [1]."
    assert [request.body["max_tokens"] for request in scripted_openai.requests_to(CHAT)] == [200, 120]


def test_a_best_passage_without_sentence_breaks_is_cut_to_fit_rather_than_dropped():
    unbroken = "word " * 400
    selection = fit([Hit(Chunk(1, 1, 0, unbroken), 1.0)], "word", 50, estimate_tokens)
    assert [hit.chunk.id for hit in selection.hits] == [1]
    assert 0 < estimate_tokens(selection.hits[0].chunk.text) <= 50 and selection.trimmed[0]["reason"] == "budget"


def test_a_long_conversation_gives_up_its_oldest_turns_before_the_passages():
    history = []
    for n in range(3):
        history += [{"role": "user", "content": f"Question {n} about the orchard?"},
                    {"role": "assistant", "content": f"Answer {n}: " + "pears and apples grow there. " * 12}]
    hits = [Hit(Chunk(1, 1, 0, "The orchard grows pears. " * 20), 1.0)]
    prepared = ResponseSynthesizer(llm=LocalLLM(reading_tokens=420), history_turns=3).prepare("And the apples?", hits,
                                                                                             history)
    account = prepared.budget
    assert account["passage_tokens"] >= 200 and account["new_tokens"] <= 420
    assert 0 < account["history_turns"] < 3
    assert prepared.messages[-2] == history[-1] and history[0] not in prepared.messages


def test_a_reading_budget_smaller_than_the_usual_passage_room_keeps_the_worked_examples_and_a_recent_turn():
    # The examples are cached, so a small reading budget is no reason to drop them;
    # earlier turns are read anew each time and give way only while passages have under half of it.
    history = [{"role": "user", "content": "What grows in the orchard?"},
               {"role": "assistant", "content": "Pears grow in the orchard [1]."}]
    hits = [Hit(Chunk(1, 1, 0, "The orchard grows pears. " * 20), 1.0)]
    prepared = ResponseSynthesizer(llm=LocalLLM(reading_tokens=160), history_turns=3).prepare("And apples?", hits,
                                                                                             history)
    account = prepared.budget
    assert account["limited_by"] == "reading_tokens" and account["new_tokens"] <= 160
    assert account["examples"] == len(EXAMPLES["en"]) and account["history_turns"] == 1
    assert account["passage_tokens"] >= 80 and account["sent"] == [1]


def test_a_reading_budget_smaller_than_the_question_still_leaves_the_best_passage_room():
    # A small reading budget can be used up by the question itself; the model then reads more, but it
    # answers from a passage, never from none.
    hits = [Hit(Chunk(1, 1, 0, "The orchard grows pears. Ada Moss trained the espaliers in 1950. " * 5), 1.0)]
    question = "Who trained the espaliers along the south wall of the old orchard, and in which year? " * 2
    prepared = ResponseSynthesizer(llm=LocalLLM(reading_tokens=64)).prepare(question, hits)
    account = prepared.budget
    assert account["limited_by"] == "reading_tokens" and account["passage_tokens"] == MIN_READING_ROOM
    assert account["sent"] == [1] and "Ada Moss" in prepared.messages[-1]["content"]
    assert account["new_tokens"] > 64
