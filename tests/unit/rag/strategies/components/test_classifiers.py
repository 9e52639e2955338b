import pytest

from rag.components import load_components
from rag.core import validate_tree
from rag.strategies.components import KeywordClassifier, RegexClassifier

pytestmark = pytest.mark.unit


def errors_of(component, params):
    _, errors = validate_tree({"component": component, "params": params}, registry=load_components())
    return [str(error) for error in errors]


class TestKeywordClassifier:
    def test_whole_words_by_default_and_substrings_when_asked(self):
        assert KeywordClassifier(keywords=["art"]).matches("I love modern art.")
        assert not KeywordClassifier(keywords=["art"]).matches("Read the article")
        assert KeywordClassifier(keywords=["art"], whole_words=False).matches("Read the article")

    def test_case_is_ignored_unless_case_sensitive(self):
        assert KeywordClassifier(keywords=["Invoice"]).matches("where is my INVOICE")
        assert not KeywordClassifier(keywords=["Invoice"], case_sensitive=True).matches("where is my invoice")
        assert KeywordClassifier(keywords=["Invoice"], case_sensitive=True).matches("my Invoice")

    def test_any_needs_one_keyword_all_needs_every_one(self):
        assert KeywordClassifier(keywords=["refund", "invoice"]).matches("refund please")
        assert not KeywordClassifier(keywords=["refund", "invoice"], match="all").matches("refund please")
        assert KeywordClassifier(keywords=["refund", "invoice"], match="all").matches("refund the invoice")

    def test_word_boundaries_are_unicode_aware(self):
        assert KeywordClassifier(keywords=["über"]).matches("Über alles")
        assert not KeywordClassifier(keywords=["über"]).matches("Überweisung")
        assert not KeywordClassifier(keywords=["café"]).matches("cafés")
        # A decomposed "é" (e + combining accent) is the same letter as the composed one.
        assert KeywordClassifier(keywords=["café"]).matches("un cafe\u0301 noir")
        assert KeywordClassifier(keywords=["C++"]).matches("Is C++ hard?")

    def test_chinese_keywords_match_inside_text_and_chinese_neighbours_are_word_boundaries(self):
        assert KeywordClassifier(keywords=["退款"]).matches("我想申請退款，謝謝")
        assert KeywordClassifier(keywords=["發票"]).matches("請問發票在哪裡")
        assert not KeywordClassifier(keywords=["發票"]).matches("請問收據在哪裡")
        assert KeywordClassifier(keywords=["iPhone"]).matches("我的iPhone壞了")
        assert not KeywordClassifier(keywords=["iPhone"]).matches("我的iPhones壞了")

    def test_keywords_are_required_and_not_blank(self):
        assert errors_of("KeywordClassifier", {"keywords": []}) == ["params.keywords: must have at least 1 item(s)"]
        assert errors_of("KeywordClassifier", {"keywords": ["ok", " "]}) == [
            "params.keywords: keywords must not be blank (item(s) 1)"]
        assert errors_of("KeywordClassifier", {"keywords": ["a"], "match": "some"}) == [
            "params.match: must be one of 'any' or 'all'"]


class TestRegexClassifier:
    def test_the_pattern_is_searched_anywhere_ignoring_case_by_default(self):
        assert RegexClassifier(pattern=r"order\s+#?\d+").matches("Where is ORDER #1234?")
        assert not RegexClassifier(pattern=r"order\s+#?\d+", ignore_case=False).matches("Where is ORDER #1234?")
        assert not RegexClassifier(pattern=r"^order").matches("my order 5")

    def test_unicode_classes_cover_chinese(self):
        assert RegexClassifier(pattern=r"訂單\s*\d+").matches("我的訂單 42 在哪裡")

    def test_a_pattern_that_does_not_compile_is_a_validation_error_with_the_regex_message(self):
        assert errors_of("RegexClassifier", {"pattern": "(unclosed"}) == [
            "params.pattern: is not a valid regular expression: missing ), unterminated subpattern at position 0"]
        assert errors_of("RegexClassifier", {"pattern": "a{2,1}"}) == [
            "params.pattern: is not a valid regular expression: min repeat greater than max repeat at position 2"]
