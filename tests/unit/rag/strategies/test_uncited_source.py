"""An answer that repeats a passage without naming it gets that passage's citation."""

from rag.strategies.base import uncited_source

PASSAGES = ["Trellis is a workbench for retrieval.",
            "The Zorblax lantern festival is held in Quillon every March, on the first full moon of spring."]


def test_an_answer_repeating_a_passage_without_a_citation_names_that_passage():
    answer = "The Zorblax lantern festival is held in Quillon every March, on the first full moon."
    assert uncited_source(answer, PASSAGES) == 2


def test_an_answer_that_cites_or_only_shares_a_few_words_is_left_as_written():
    assert uncited_source("It is held every March [2].", PASSAGES) is None
    assert uncited_source("Every March, in Quillon.", PASSAGES) is None
    assert uncited_source("", PASSAGES) is None
    assert uncited_source("The Zorblax lantern festival is held in Quillon every March.", []) is None
