import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS, CountVectorizer

from rag.core import LANGUAGES, ConfigValidationError, localize_schema, registry
from rag.retrievers.sparse import BagOfWordsConverter, Vocabulary
from rag.retrievers.sparse.stop_words import SPANISH_STOP_WORDS

from .corpora import SCIENCE

pytestmark = pytest.mark.unit

BACKEND = Path(__file__).resolve().parents[5] / "backend"


def analyze(text, **params):
    return BagOfWordsConverter(**params).analyze(text)


# -- declaration ------------------------------------------------------------------------------


def test_converter_is_registered_as_a_vectorizer_with_complete_metadata():
    assert registry.get("BagOfWordsConverter") is BagOfWordsConverter
    metadata = BagOfWordsConverter.get_metadata()
    assert (metadata["kind"], metadata["category"], metadata["icon"]) == ("vectorizer", "text processing", "text")
    for text in (BagOfWordsConverter.DISPLAY_NAME, BagOfWordsConverter.DESCRIPTION,
                 BagOfWordsConverter.REPRESENTATION):
        assert all(text.has(language) for language in LANGUAGES)


def test_every_parameter_has_a_title_and_description_in_every_language():
    properties = BagOfWordsConverter.get_schema()["properties"]
    assert set(properties) == {
        "analyzer", "lowercase", "strip_accents", "stop_words", "custom_stop_words", "stemmer", "ngram_min",
        "ngram_max", "min_df", "max_df", "max_features", "chinese_segmentation",
    }
    for name, schema in properties.items():
        texts = schema["x-i18n"]
        for key in ("title", "description"):
            assert set(texts[key]) == {"en", "es", "zh-Hant"}, f"{name}.{key} lacks a language: {texts[key]}"
            assert len(set(texts[key].values())) == 3, f"{name}.{key} is not translated: {texts[key]}"


def test_schema_carries_bounds_and_choices():
    schema = localize_schema(BagOfWordsConverter.get_schema(), "es")["properties"]
    assert schema["analyzer"]["enum"] == ["word", "char", "char_wb"]
    assert schema["max_df"]["exclusiveMinimum"] == 0 and schema["max_df"]["maximum"] == 1
    assert schema["min_df"]["type"] == "number" and schema["min_df"]["minimum"] == 0
    assert schema["ngram_min"]["minimum"] == 1
    assert schema["chinese_segmentation"]["title"] == "Segmentación del chino"


def test_representation_renders_in_each_language():
    converter = BagOfWordsConverter(ngram_max=2, stop_words="spanish")
    assert converter.render_representation("en") == (
        "Bag of words · words · 1–2-grams · stop words: Spanish · stems: none")
    assert converter.render_representation("es") == (
        "Bolsa de palabras · palabras · 1–2-gramas · palabras vacías: español · raíces: ninguna")
    assert "停用詞：西班牙文" in converter.render_representation("zh-Hant")
    assert BagOfWordsConverter(stemmer="auto").render_representation("es").endswith(
        "raíces: idioma de la base de conocimiento")


def test_ngram_min_above_ngram_max_is_refused_with_a_clear_message():
    with pytest.raises(ConfigValidationError) as failure:
        BagOfWordsConverter(ngram_min=3, ngram_max=2)
    [error] = failure.value.errors
    assert error.path == "params"
    assert error.message == "ngram_min (3) must not exceed ngram_max (2)"


@pytest.mark.parametrize(
    "params",
    [{"min_df": -1}, {"min_df": 1.5}, {"min_df": -0.1}, {"min_df": "2"},
     {"max_df": 0.0}, {"max_df": 1.5}, {"max_features": 0}, {"ngram_min": 0},
     {"analyzer": "sentence"}, {"strip_accents": "latin"}, {"stop_words": "french"},
     {"chinese_segmentation": "pkuseg"}, {"stemmer": "french"}, {"custom_stop_words": [""]}, {"lowercase": "yes"}],
)
def test_out_of_range_values_are_refused(params):
    with pytest.raises(ConfigValidationError) as failure:
        BagOfWordsConverter(**params)
    assert failure.value.errors[0].path.startswith(f"params.{next(iter(params))}")


# -- tokens -----------------------------------------------------------------------------------


def test_default_word_tokens_drop_single_letters_but_keep_single_digits_and_words():
    assert analyze("A p53 test: type 2 diabetes, x-ray and B12_vitamin!") == [
        "p53", "test", "type", "2", "diabetes", "ray", "and", "b12_vitamin",
    ]


def test_word_tokens_are_unicode_aware():
    assert analyze("Über naïve Σίσυφος und Москва") == ["über", "naïve", "σίσυφος", "und", "москва"]


def test_analyzer_char_and_char_wb_match_scikit_learn_exactly():
    text = "The  cat\tsat\n\non a   MAT, naïvely."
    for analyzer in ("char", "char_wb"):
        for low, high in ((1, 1), (2, 4), (3, 5)):
            expected = CountVectorizer(analyzer=analyzer, ngram_range=(low, high)).build_analyzer()(text)
            assert analyze(text, analyzer=analyzer, ngram_min=low, ngram_max=high) == expected, (analyzer, low, high)


def test_char_analyzers_differ_from_words_and_from_each_other():
    word = analyze("red cat", ngram_min=3, ngram_max=3)
    char = analyze("red cat", analyzer="char", ngram_min=3, ngram_max=3)
    char_wb = analyze("red cat", analyzer="char_wb", ngram_min=3, ngram_max=3)
    assert word == []
    assert char == ["red", "ed ", "d c", " ca", "cat"]
    assert char_wb == [" re", "red", "ed ", " ca", "cat", "at "]


def test_lowercase_off_keeps_case():
    assert analyze("Protein PROTEIN protein", lowercase=False) == ["Protein", "PROTEIN", "protein"]
    assert analyze("Protein PROTEIN protein") == ["protein"] * 3


def test_strip_accents_unicode_removes_marks_but_keeps_letters_without_decomposition():
    assert analyze("Canción niño Straße Ørsted 珍珠", strip_accents="unicode", chinese_segmentation="characters") == [
        "cancion", "nino", "straße", "ørsted", "珍", "珠",
    ]


def test_strip_accents_ascii_folds_latin_letters_and_keeps_chinese():
    assert analyze("Canción Straße Ørsted Æsir ﬁnal 珍珠", strip_accents="ascii", chinese_segmentation="characters") == [
        "cancion", "strasse", "orsted", "aesir", "final", "珍", "珠",
    ]


def test_accents_are_kept_by_default():
    assert analyze("canción") == ["canción"]


def test_english_stop_words_come_from_scikit_learn_and_match_any_case():
    assert analyze("The cat is on THE mat", stop_words="english") == ["cat", "mat"]
    assert analyze("The cat is on THE mat", stop_words="english", lowercase=False) == ["cat", "mat"]
    from rag.retrievers.sparse.stop_words import english_stop_words

    assert english_stop_words() == ENGLISH_STOP_WORDS


def test_spanish_stop_words_remove_function_words_and_keep_content():
    assert analyze("El niño comió más manzanas que la niña", stop_words="spanish") == [
        "niño", "comió", "manzanas", "niña",
    ]
    assert len(SPANISH_STOP_WORDS) >= 300
    assert {"el", "la", "de", "que", "y", "más", "estaba", "hubiera", "tendríamos", "aquellos"} <= SPANISH_STOP_WORDS


def test_spanish_stop_words_still_match_once_accents_are_stripped():
    assert analyze("Más rápido, él está aquí", stop_words="spanish", strip_accents="unicode") == ["rapido"]


def test_custom_stop_words_add_to_the_list_in_any_script():
    tokens = analyze("The patient's blood pressure 的 是 高", stop_words="english",
                     custom_stop_words=["Patient", "的"], chinese_segmentation="characters")
    assert tokens == ["blood", "pressure", "是", "高"]


def test_stop_words_do_not_apply_to_character_analyzers():
    assert analyze("the", analyzer="char_wb", ngram_min=3, ngram_max=3, stop_words="english") == [" th", "the", "he "]


def test_word_ngrams_follow_scikit_learns_order_after_stop_words():
    assert analyze("heart attack risk factors", ngram_min=1, ngram_max=2) == [
        "heart", "attack", "risk", "factors", "heart attack", "attack risk", "risk factors",
    ]
    assert analyze("the heart attack risk", ngram_min=2, ngram_max=3, stop_words="english") == [
        "heart attack", "attack risk", "heart attack risk",
    ]
    text = "Heart attack risk: the factors that matter"
    expected = CountVectorizer(ngram_range=(1, 3), token_pattern=r"(?u)\b\w\w+\b").build_analyzer()(text)
    assert analyze(text, ngram_max=3) == expected


def test_stemming_makes_word_forms_one_term_after_stop_words_and_before_ngrams():
    assert analyze("Studies studied the proteins", stemmer="english") == ["studi", "studi", "the", "protein"]
    assert analyze("the studies of proteins", stemmer="english", stop_words="english", ngram_max=2) == [
        "studi", "protein", "studi protein",
    ]
    assert analyze("Los estudios estudiaron canciones", stemmer="spanish", stop_words="spanish") == [
        "estudi", "estudi", "cancion",
    ]
    assert analyze("Studies studied") == ["studies", "studied"]


def test_stemming_leaves_chinese_and_the_character_analyzers_alone():
    assert analyze("珍珠奶茶 teas", stemmer="english") == ["珍珠", "奶茶", "珍珠奶茶", "tea"]
    assert analyze("teas", stemmer="english", analyzer="char_wb", ngram_min=4, ngram_max=4) == [" tea", "teas", "eas "]


@pytest.mark.parametrize(("language", "stemmer"), [("en", "english"), ("es", "spanish"), ("zh-Hant", "none"),
                                                   ("multilingual", "none"), (None, "none")])
def test_auto_stemming_follows_the_knowledge_bases_language(language, stemmer):
    resolved = BagOfWordsConverter(stemmer="auto", stop_words="english").for_language(language)
    assert resolved.params.stemmer == stemmer
    assert resolved.params.stop_words == "english"
    assert resolved.analyze("proteins") == BagOfWordsConverter(stemmer=stemmer).analyze("proteins")


def test_an_unresolved_auto_stemmer_does_not_stem_and_a_set_one_is_not_resolved_again():
    assert analyze("proteins", stemmer="auto") == ["proteins"]
    english = BagOfWordsConverter(stemmer="english")
    assert english.for_language("es") is english


def test_stemmed_and_unstemmed_converters_are_different_configurations():
    from rag.stores.knowledge_base import converter_fingerprint

    fingerprints = {converter_fingerprint(BagOfWordsConverter(stemmer=stemmer).to_config())
                    for stemmer in ("none", "english", "spanish", "auto")}
    assert len(fingerprints) == 4


def test_stemming_from_many_threads_gives_each_thread_the_same_terms():
    from concurrent.futures import ThreadPoolExecutor

    converter = BagOfWordsConverter(stemmer="english")
    texts = [" ".join(f"runner{i} running studies {i}" for i in range(start, start + 200)) for start in range(16)]
    expected = [BagOfWordsConverter(stemmer="english").analyze(text) for text in texts]
    with ThreadPoolExecutor(8) as pool:
        assert list(pool.map(converter.analyze, texts * 4)) == expected * 4


def test_jieba_search_mode_emits_sub_words_of_long_compounds():
    tokens = analyze("小明硕士毕业于中国科学院计算所")
    assert tokens[:2] == ["小明", "硕士"]
    assert {"中国", "科学", "学院", "科学院", "中国科学院", "计算所"} <= set(tokens)


def test_chinese_segmentation_characters_makes_every_ideograph_a_term():
    assert analyze("珍珠奶茶 tea", chinese_segmentation="characters") == ["珍", "珠", "奶", "茶", "tea"]
    assert analyze("珍珠奶茶 tea") == ["珍珠", "奶茶", "珍珠奶茶", "tea"]


def test_mixed_chinese_and_latin_text_keeps_latin_tokens_whole():
    assert analyze("台北101是摩天大樓 Taipei-101") == ["台北", "101", "是", "摩天", "大樓", "taipei", "101"]


def test_jieba_loads_quietly_once_and_safely_from_many_threads():
    script = textwrap.dedent(
        """
        from concurrent.futures import ThreadPoolExecutor
        from rag.retrievers.sparse import BagOfWordsConverter
        converter = BagOfWordsConverter()
        with ThreadPoolExecutor(8) as pool:
            results = list(pool.map(converter.analyze, ["中国科学院计算所的研究生"] * 16))
        assert all(result == results[0] for result in results), results
        print(results[0])
        """
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=BACKEND, env={"PYTHONPATH": str(BACKEND)},
                            capture_output=True, text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stderr == "", f"jieba was not quiet: {result.stderr!r}"
    assert "科学院" in result.stdout


# -- vocabulary and counts --------------------------------------------------------------------

DOCS = ["apple banana apple", "banana cherry", "banana date", "banana apple elder"]


def test_fit_keeps_every_term_sorted_by_default():
    assert BagOfWordsConverter().fit(DOCS).terms == ("apple", "banana", "cherry", "date", "elder")


def test_min_df_is_an_absolute_document_count():
    assert BagOfWordsConverter(min_df=2).fit(DOCS).terms == ("apple", "banana")


def test_a_decimal_min_df_is_a_share_of_the_documents():
    assert BagOfWordsConverter(min_df=0.5).fit(DOCS).terms == ("apple", "banana")
    assert BagOfWordsConverter(min_df=0.75).fit(DOCS).terms == ("banana",)
    assert BagOfWordsConverter(min_df=0.0).fit(DOCS).terms == BagOfWordsConverter(min_df=1).fit(DOCS).terms


def test_max_df_is_a_fraction_of_documents():
    assert BagOfWordsConverter(max_df=0.75).fit(DOCS).terms == ("apple", "cherry", "date", "elder")
    assert BagOfWordsConverter(max_df=0.5).fit(DOCS).terms == ("apple", "cherry", "date", "elder")
    assert BagOfWordsConverter(max_df=0.25).fit(DOCS).terms == ("cherry", "date", "elder")


def test_max_features_keeps_the_most_frequent_terms_with_ties_in_term_order():
    assert BagOfWordsConverter(max_features=2).fit(DOCS).terms == ("apple", "banana")
    assert BagOfWordsConverter(max_features=3).fit(DOCS).terms == ("apple", "banana", "cherry")


def test_pruning_matches_scikit_learn_on_a_real_corpus():
    texts = [text for text in SCIENCE if text]
    for params in ({"min_df": 2}, {"min_df": 0.05}, {"min_df": 0.0}, {"max_df": 0.2},
                   {"min_df": 2, "max_df": 0.3, "ngram_max": 2},
                   {"max_features": 40, "ngram_max": 2}):
        converter = BagOfWordsConverter(**params)
        pruning = {key: value for key, value in params.items() if key != "ngram_max"}
        vocabulary, counts = converter.fit_transform(texts)
        sk = CountVectorizer(analyzer=converter.analyze, **pruning)
        expected = sk.fit_transform(texts)
        if "max_features" not in params:
            assert list(vocabulary.terms) == sorted(sk.vocabulary_), params
            assert (counts != expected).nnz == 0
        else:
            # scikit-learn breaks frequency ties arbitrarily; compare the frequencies kept.
            frequencies = np.asarray(expected.sum(axis=0)).ravel()
            assert sorted(np.asarray(counts.sum(axis=0)).ravel()) == sorted(frequencies)


def test_transform_counts_terms_against_a_vocabulary_and_drops_unknown_ones():
    converter = BagOfWordsConverter()
    counts = converter.transform(["apple apple kiwi", "", "date banana"], Vocabulary(["apple", "banana", "date"]))
    assert counts.format == "csr" and counts.dtype == np.int32
    assert counts.toarray().tolist() == [[2, 0, 0], [0, 0, 0], [0, 1, 1]]


def test_fit_transform_equals_fit_then_transform_with_pruned_terms_uncounted():
    converter = BagOfWordsConverter(max_df=0.75)
    vocabulary, counts = converter.fit_transform(DOCS)
    assert vocabulary == converter.fit(DOCS)
    assert (counts != converter.transform(DOCS, vocabulary)).nnz == 0
    assert counts.toarray().tolist() == [[2, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0], [1, 0, 0, 1]]


def test_fit_on_no_text_gives_an_empty_vocabulary():
    vocabulary, counts = BagOfWordsConverter().fit_transform([])
    assert len(vocabulary) == 0 and counts.shape == (0, 0)
