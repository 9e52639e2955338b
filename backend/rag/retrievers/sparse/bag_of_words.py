"""``BagOfWordsConverter``: text to term counts, for keyword (BM25) search."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable
from typing import Annotated, Any, Literal

import numpy as np
import scipy.sparse as sp
from pydantic import AliasChoices, Field, StringConstraints, WithJsonSchema, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema
from pydantic_core import PydanticCustomError

from rag.core import ConfigObject, ml, param, register
from rag.core import Params as BaseParams

from . import text as textproc
from .stop_words import stop_words
from .vocabulary import Vocabulary, count_tokens

StopWord = Annotated[str, StringConstraints(min_length=1, max_length=100)]
STEMMER_OF_LANGUAGE = {"en": "english", "es": "spanish"}
"""The Snowball stemmer ``stemmer="auto"`` takes for a knowledge base's language; Chinese has no
stems and a mixed knowledge base no single language, so they are left unstemmed."""

DocumentShare = Annotated[int | float, WithJsonSchema({"type": "number", "minimum": 0})]
"""A whole number of documents, or a share of them between 0.0 and 1.0 (scikit-learn's rule)."""


@register
class BagOfWordsConverter(ConfigObject["BagOfWordsConverter.Params"]):
    """Turns texts into bags of terms and term-count matrices.

    ``analyze`` gives the terms of one text (n-grams included); ``fit`` learns a vocabulary
    from a corpus, pruned by ``min_df``, ``max_df`` and ``max_features``; ``transform`` counts
    texts against a vocabulary. The converter holds no fitted state, so one instance can serve
    many corpora and threads.

    Analysis of one text, for ``analyzer="word"``: lowercase → strip accents → word tokens
    (runs of CJK ideographs segmented by ``chinese_segmentation``) → drop stop words → stem
    (Snowball, ``stemmer``) → word n-grams. ``stemmer="auto"`` stems in the language of the
    knowledge base the converter serves: ``for_language`` resolves it, and unresolved it does
    not stem. For ``"char"`` and ``"char_wb"``: lowercase → strip accents → character n-grams as
    scikit-learn's ``CountVectorizer`` forms them; stop words do not apply.

    A configuration written for DashAI's converter is accepted as it is printed there:
    ``lower_bound_ngrams`` / ``upper_bound_ngrams`` are ``ngram_min`` / ``ngram_max``,
    ``stop_words: null`` is ``"none"``, ``custom_stop_words: null`` an empty list, ``min_df``
    may be a share of the documents (``0.0``), and ``drop_source_columns`` (which drops the
    source columns of a DashAI dataset; chunks have none) is accepted and has no effect. The
    schema shows the canonical names only, and ``to_config`` writes them.
    """

    KIND = "vectorizer"
    CATEGORY = "text processing"
    ICON = "text"
    DISPLAY_NAME = ml("Bag-of-words converter", "Convertidor de bolsa de palabras", "詞袋轉換器")
    SHORT_NAME = ml("Bag of words", "Bolsa de palabras", "詞袋")
    DESCRIPTION = ml(
        "Turns text into term counts for keyword search (BM25): splits it into words or character n-grams, "
        "lowercases, strips accents, drops stop words, forms n-grams and prunes terms that are too rare or too "
        "common. Chinese text is segmented into words with jieba's search-engine mode.",
        "Convierte el texto en recuentos de términos para la búsqueda por palabras clave (BM25): lo divide en "
        "palabras o n-gramas de caracteres, pasa a minúsculas, quita las tildes, elimina las palabras vacías, "
        "forma n-gramas y descarta los términos demasiado raros o demasiado comunes. El texto en chino se "
        "segmenta en palabras con el modo de motor de búsqueda de jieba.",
        "將文字轉換為詞頻，供關鍵字檢索（BM25）使用：將文字切分為詞或字元 n-gram，轉為小寫、去除重音符號、"
        "移除停用詞、組成 n-gram，並剔除過於罕見或過於常見的詞。中文文字以 jieba 的搜尋引擎模式分詞。",
    )
    REPRESENTATION = ml(
        "Bag of words · {analyzer} · {ngram_min}–{ngram_max}-grams · stop words: {stop_words} · stems: {stemmer}",
        "Bolsa de palabras · {analyzer} · {ngram_min}–{ngram_max}-gramas · palabras vacías: {stop_words} · "
        "raíces: {stemmer}",
        "詞袋 · {analyzer} · {ngram_min}–{ngram_max}-gram · 停用詞：{stop_words} · 詞幹：{stemmer}",
    )

    class Params(BaseParams):
        analyzer: Literal["word", "char", "char_wb"] = param(
            "word",
            title=ml("Analyzer", "Analizador", "分析單位"),
            labels={"word": ml("words", "palabras", "詞"), "char": ml("characters", "caracteres", "字元"),
                    "char_wb": ml("characters in words", "caracteres en palabras", "詞內字元")},
            description=ml(
                "What a term is. Words: words (Chinese is segmented into words). Characters: character "
                "n-grams over the whole text. Characters in words: character n-grams inside words, padded with "
                "a space at each edge. Stop words apply to words only.",
                "Qué es un término. Palabras: las palabras (el chino se segmenta en palabras). Caracteres: "
                "n-gramas de caracteres sobre todo el texto. Caracteres en palabras: n-gramas de caracteres "
                "dentro de cada palabra, con un espacio en cada borde. Las palabras vacías solo se aplican a "
                "palabras.",
                "詞項的單位。詞：以詞為單位（中文會先分詞）。字元：整段文字的字元 n-gram。詞內字元："
                "每個詞內部的字元 n-gram，詞的兩端各補一個空格。停用詞只適用於「詞」。",
            ),
        )
        lowercase: bool = param(
            True,
            title=ml("Lowercase", "Minúsculas", "轉為小寫"),
            description=ml(
                "Convert text to lowercase first, so 'Protein' and 'protein' are the same term.",
                "Pasar el texto a minúsculas primero, para que 'Proteína' y 'proteína' sean el mismo término.",
                "先將文字轉為小寫，使 'Protein' 與 'protein' 視為同一個詞。",
            ),
        )
        strip_accents: Literal["ascii", "unicode"] | None = param(
            None,
            title=ml("Strip accents", "Quitar tildes", "去除重音符號"),
            description=ml(
                "Empty keeps accents. 'unicode' removes accents in any script (é → e, ñ → n; ß stays). "
                "'ascii' also folds Latin letters to their closest ASCII form (ß → ss, ø → o, æ → ae); "
                "characters with none, such as Chinese, are kept.",
                "Vacío conserva las tildes. 'unicode' quita los acentos en cualquier escritura (é → e, "
                "ñ → n; ß se mantiene). 'ascii' además lleva las letras latinas a su forma ASCII más cercana "
                "(ß → ss, ø → o, æ → ae); los caracteres sin ella, como los chinos, se conservan.",
                "留空則保留重音符號。'unicode'：移除任何文字系統中的重音符號（é → e、ñ → n；ß 不變）。"
                "'ascii'：另將拉丁字母轉為最接近的 ASCII 形式（ß → ss、ø → o、æ → ae）；沒有對應形式的字元"
                "（例如中文）保持不變。",
            ),
        )
        drop_source_columns: SkipJsonSchema[bool] = Field(False, exclude=True)
        # DashAI's converter setting, accepted so its configurations import verbatim; nothing here
        # has source columns to drop, so it is never stored.

        stop_words: Literal["english", "spanish", "none"] = param(
            "none",
            title=ml("Stop words", "Palabras vacías", "停用詞"),
            labels={"english": ml("English", "inglés", "英文"), "spanish": ml("Spanish", "español", "西班牙文"),
                    "none": ml("none", "ninguna", "無")},
            description=ml(
                "A built-in list of very common words to drop: English (scikit-learn's list), Spanish, or "
                "none. Matching ignores case, and ignores accents too when accents are stripped.",
                "Una lista integrada de palabras muy comunes que se descartan: inglés (la lista de "
                "scikit-learn), español o ninguna. La comparación no distingue mayúsculas, ni tildes cuando "
                "se quitan las tildes.",
                "要移除的內建常用詞清單：英文（scikit-learn 的清單）、西班牙文或無（不使用）。"
                "比對時不分大小寫；若啟用去除重音符號，也不分重音符號。",
            ),
        )
        custom_stop_words: list[StopWord] = param(
            default_factory=list,
            title=ml("Custom stop words", "Palabras vacías propias", "自訂停用詞"),
            description=ml(
                "More words to drop, on top of the built-in list, matched the same way. For Chinese, list "
                "whole words such as 的 or 是.",
                "Más palabras que descartar, además de la lista integrada, comparadas de la misma manera. "
                "Para el chino, escriba palabras completas como 的 o 是.",
                "除內建清單外，另外要移除的詞，比對方式相同。中文請填寫完整的詞，例如「的」或「是」。",
            ),
            max_length=10_000,
        )
        stemmer: Literal["none", "english", "spanish", "auto"] = param(
            "none",
            title=ml("Stemming", "Reducción a la raíz", "詞幹還原"),
            labels={"none": ml("none", "ninguna", "無"), "english": ml("English", "inglés", "英文"),
                    "spanish": ml("Spanish", "español", "西班牙文"),
                    "auto": ml("the knowledge base's language", "idioma de la base de conocimiento", "知識庫的語言")},
            description=ml(
                "Reduce every word to its stem with the Snowball stemmer of a language, so 'studies', 'studied' "
                "and 'study' are one term. 'The knowledge base's language' stems English and Spanish knowledge "
                "bases and leaves Chinese and mixed ones as they are. Words only, after stop words.",
                "Reducir cada palabra a su raíz con el algoritmo Snowball de un idioma, para que 'estudios', "
                "'estudiaron' y 'estudiar' sean un mismo término. 'Idioma de la base de conocimiento' reduce las "
                "bases en inglés y en español y deja como están las chinas y las mixtas. Solo palabras, después "
                "de quitar las palabras vacías.",
                "以某種語言的 Snowball 演算法將每個詞還原為詞幹，使 'studies'、'studied' 與 'study' 成為同一個"
                "詞項。「知識庫的語言」會還原英文與西班牙文知識庫的詞，中文與多語知識庫則保持原樣。只適用於"
                "「詞」，在移除停用詞之後進行。",
            ),
        )
        ngram_min: int = param(
            1,
            title=ml("Minimum n-gram length", "Longitud mínima de n-grama", "n-gram 最小長度"),
            description=ml(
                "The fewest consecutive words (characters, for the character analyzers) in one term. "
                "1 keeps single words.",
                "El menor número de palabras consecutivas (caracteres, en los analizadores de caracteres) "
                "de un término. 1 conserva las palabras sueltas.",
                "一個詞項最少包含幾個連續的詞（字元分析時為字元）。1 表示保留單一詞。",
            ),
            ge=1,
            le=10,
            validation_alias=AliasChoices("ngram_min", "lower_bound_ngrams"),
        )
        ngram_max: int = param(
            1,
            title=ml("Maximum n-gram length", "Longitud máxima de n-grama", "n-gram 最大長度"),
            description=ml(
                "The most consecutive words (or characters) in one term; at least the minimum. 2 adds word "
                "pairs such as 'heart attack'.",
                "El mayor número de palabras (o caracteres) consecutivas de un término; al menos el mínimo. "
                "2 añade pares de palabras como 'ataque cardíaco'.",
                "一個詞項最多包含幾個連續的詞（或字元），不得小於最小長度。2 會加入詞對，例如「心臟 病」。",
            ),
            ge=1,
            le=10,
            validation_alias=AliasChoices("ngram_max", "upper_bound_ngrams"),
        )
        min_df: DocumentShare = param(
            1,
            title=ml("Minimum document count", "Mínimo de documentos", "最少文件數"),
            description=ml(
                "Keep only terms found in at least this many documents: a whole number counts documents "
                "(1 keeps every term); a decimal between 0.0 and 1.0 is a share of them (0.0 keeps every term).",
                "Conservar solo los términos presentes en al menos este número de documentos: un número entero "
                "cuenta documentos (1 conserva todos los términos); un decimal entre 0,0 y 1,0 es una proporción "
                "de ellos (0,0 conserva todos los términos).",
                "只保留至少出現在這麼多份文件中的詞：整數表示文件數（1 表示保留所有詞）；0.0 到 1.0 之間的小數"
                "表示文件比例（0.0 表示保留所有詞）。",
            ),
        )
        max_df: float = param(
            1.0,
            title=ml("Maximum document fraction", "Fracción máxima de documentos", "最高文件比例"),
            description=ml(
                "Drop terms found in more than this fraction of the documents, in (0, 1]. 1 keeps every term; "
                "0.5 drops terms found in over half of them.",
                "Descartar los términos presentes en más de esta fracción de los documentos, en (0, 1]. 1 "
                "conserva todos los términos; 0,5 descarta los que aparecen en más de la mitad.",
                "移除出現在超過此比例文件中的詞，範圍為 (0, 1]。1 表示保留所有詞；0.5 表示移除出現在"
                "一半以上文件中的詞。",
            ),
            gt=0.0,
            le=1.0,
        )
        max_features: int | None = param(
            None,
            title=ml("Maximum vocabulary size", "Tamaño máximo del vocabulario", "詞彙量上限"),
            description=ml(
                "Keep only this many terms, those most frequent in the whole corpus (ties in alphabetical "
                "order). Empty keeps all.",
                "Conservar solo este número de términos, los más frecuentes en todo el corpus (los empates, "
                "por orden alfabético). Vacío los conserva todos.",
                "只保留這麼多個詞，取整個語料中出現次數最多者（次數相同時依字母順序）。留空則全部保留。",
            ),
            ge=1,
        )
        chinese_segmentation: Literal["jieba", "characters"] = param(
            "jieba",
            title=ml("Chinese segmentation", "Segmentación del chino", "中文分詞方式"),
            description=ml(
                "How runs of Chinese characters become terms. 'jieba': words, with jieba's search-engine mode, "
                "which also emits the shorter words inside long compounds so a short query word still matches. "
                "'characters': every character is a term.",
                "Cómo se convierten en términos los tramos de caracteres chinos. 'jieba': palabras, con el modo "
                "de motor de búsqueda de jieba, que también emite las palabras cortas contenidas en los "
                "compuestos largos para que una palabra corta de la consulta siga coincidiendo. 'characters': "
                "cada carácter es un término.",
                "連續中文字元如何切分為詞項。'jieba'：以 jieba 的搜尋引擎模式分詞，長複合詞內較短的詞也會"
                "一併輸出，使查詢中的短詞仍能比對成功。'characters'：每個字元各為一個詞項。",
            ),
        )

        @field_validator("stop_words", mode="before")
        @classmethod
        def _null_stop_words(cls, value: Any) -> Any:
            return "none" if value is None else value

        @field_validator("custom_stop_words", mode="before")
        @classmethod
        def _null_custom_stop_words(cls, value: Any) -> Any:
            return [] if value is None else value

        @field_validator("min_df")
        @classmethod
        def _document_share(cls, value: int | float) -> int | float:
            if value < 0:
                raise PydanticCustomError("greater_than_equal", "Input should be greater than or equal to {ge}",
                                          {"ge": 0})
            if isinstance(value, float) and value > 1.0:
                raise PydanticCustomError("less_than_equal", "Input should be less than or equal to {le}", {"le": 1})
            return value

        @model_validator(mode="after")
        def check_ngram_bounds(self) -> BagOfWordsConverter.Params:
            if self.ngram_min > self.ngram_max:
                raise ValueError(
                    f"ngram_min ({self.ngram_min}) must not exceed ngram_max ({self.ngram_max})"
                )
            return self

    # -- analysis ---------------------------------------------------------------------------

    def for_language(self, language: str | None) -> BagOfWordsConverter:
        """This converter as it analyses a knowledge base in ``language`` (``en``, ``es``,
        ``zh-Hant``...): ``stemmer="auto"`` becomes that language's stemmer, or ``"none"``."""
        if self.params.stemmer != "auto":
            return self
        params = self.to_config()["params"]
        return type(self)(**{**params, "stemmer": STEMMER_OF_LANGUAGE.get(language or "", "none")})

    @functools.cached_property
    def _stemmers(self) -> threading.local | None:
        # A Snowball stemmer keeps a cache and must not be shared between threads; one per thread.
        return threading.local() if self.params.stemmer in STEMMER_OF_LANGUAGE.values() else None

    def _stem(self, words: list[str]) -> list[str]:
        local = self._stemmers
        if local is None:
            return words
        stemmer = getattr(local, "stemmer", None)
        if stemmer is None:
            import Stemmer

            stemmer = local.stemmer = Stemmer.Stemmer(self.params.stemmer)
        return stemmer.stemWords(words)

    @functools.cached_property
    def _stop_keys(self) -> frozenset[str]:
        # The lists are folded like the text, so "Más" in a text still meets "más" in the list
        # once accents are stripped.
        words = stop_words(self.params.stop_words) | frozenset(self.params.custom_stop_words)
        return frozenset(self._fold(word.lower()) for word in words)

    def _fold(self, text: str) -> str:
        strip = textproc.ACCENT_STRIPPERS.get(self.params.strip_accents or "")
        return strip(text) if strip else text

    def _preprocess(self, text: str) -> str:
        if self.params.lowercase:
            text = text.lower()
        return self._fold(text)

    def _words(self, text: str) -> list[str]:
        segment = textproc.SEGMENTERS[self.params.chinese_segmentation]
        tokens = textproc.word_tokens(text, segment)
        stop = self._stop_keys
        if stop:
            # With lowercase on, tokens already are lowercase; lowering again would only cost.
            key: Callable[[str], str] = (lambda token: token) if self.params.lowercase else str.lower
            return [token for token in tokens if key(token) not in stop]
        return list(tokens)

    def analyze(self, text: str) -> list[str]:
        """The terms of one text, in order, n-grams included.

        Parameters
        ----------
        text : str

        Returns
        -------
        list of str
            Repeated terms are repeated; word n-grams are joined by one space.
        """
        text = self._preprocess(text)
        low, high = self.params.ngram_min, self.params.ngram_max
        if self.params.analyzer == "char":
            return textproc.char_ngrams(text, low, high)
        if self.params.analyzer == "char_wb":
            return textproc.char_wb_ngrams(text, low, high)
        return textproc.word_ngrams(self._stem(self._words(text)), low, high)

    # -- counting ---------------------------------------------------------------------------

    def fit_transform(self, texts: Iterable[str]) -> tuple[Vocabulary, sp.csr_matrix]:
        """Learn the vocabulary of ``texts`` and count them against it, analysing each text once.

        Returns
        -------
        vocabulary : Vocabulary
            The terms kept by ``min_df``, ``max_df`` and ``max_features``, sorted.
        counts : scipy.sparse.csr_matrix of int32, shape (len(texts), len(vocabulary))
            Term counts; dropped terms are not counted anywhere.
        """
        vocabulary, counts = count_tokens(self.analyze(text) for text in texts)
        keep = self._kept_columns(counts)
        if keep.size == len(vocabulary):
            return vocabulary, counts
        terms = vocabulary.terms
        pruned = counts[:, keep]
        pruned.sort_indices()
        return Vocabulary(terms[column] for column in keep), pruned.tocsr()

    def fit(self, texts: Iterable[str]) -> Vocabulary:
        """The vocabulary of ``texts``: every term, pruned by ``min_df`` (documents, at least),
        ``max_df`` (fraction of documents, at most) and then ``max_features`` (the most frequent
        terms over the corpus, ties by term order), sorted."""
        return self.fit_transform(texts)[0]

    def transform(self, texts: Iterable[str], vocabulary: Vocabulary) -> sp.csr_matrix:
        """Count ``texts`` against ``vocabulary``; terms outside it are dropped.

        Returns
        -------
        scipy.sparse.csr_matrix of int32, shape (len(texts), len(vocabulary))
        """
        return count_tokens((self.analyze(text) for text in texts), vocabulary)[1]

    def _kept_columns(self, counts: sp.csr_matrix) -> np.ndarray:
        n_documents, n_terms = counts.shape
        document_frequency = np.bincount(counts.indices, minlength=n_terms)
        min_df = self.params.min_df
        keep = document_frequency >= (min_df if isinstance(min_df, int) else min_df * n_documents)
        if self.params.max_df < 1.0:
            keep &= document_frequency <= self.params.max_df * n_documents
        columns = np.flatnonzero(keep)
        limit = self.params.max_features
        if limit is not None and columns.size > limit:
            frequency = np.asarray(counts.sum(axis=0)).ravel()[columns]
            # Columns are in term order, so a stable sort on -frequency breaks ties by term.
            columns = np.sort(columns[np.argsort(-frequency, kind="stable")[:limit]])
        return columns

