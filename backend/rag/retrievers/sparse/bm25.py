"""``BM25Index``: BM25 scores from a precomputed sparse matrix of per-(document, term) weights.

The variants and their formulas are exactly rank-bm25 0.2.2's ``BM25Okapi``, ``BM25L`` and
``BM25Plus`` (including their quirks, noted below), so scores equal ``get_scores`` on the same
tokens. A query costs a gather of the query terms' columns and one weighted ``bincount``; no
Python loop runs over documents.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import scipy.sparse as sp

from .vocabulary import Vocabulary, count_tokens

if TYPE_CHECKING:
    from .bag_of_words import BagOfWordsConverter

Variant = Literal["okapi", "bm25l", "bm25plus"]
VARIANTS: tuple[str, ...] = ("okapi", "bm25l", "bm25plus")

# What the retriever's ``delta > 0`` selects. BM25+ is the well-behaved lower-bounded variant:
# its delta adds the same idf·delta to every document for each query term, so rankings follow
# Okapi-style saturation with a floor for long documents. rank-bm25's BM25L multiplies its
# term weight by the raw term frequency once more (tf · (k1+1) · (c+δ)/(k1+c+δ)), so its
# weights grow without saturating in tf; it stays available as an explicit variant.
DELTA_VARIANT: Variant = "bm25plus"


def variant_for_delta(delta: float) -> Variant:
    """The variant the retriever's ``delta`` selects: ``"okapi"`` for 0, ``DELTA_VARIANT``
    (``"bm25plus"``) above."""
    return "okapi" if delta == 0 else DELTA_VARIANT


@dataclass(frozen=True)
class BM25Parameters:
    """Which BM25 and its constants.

    Parameters
    ----------
    variant : {"okapi", "bm25l", "bm25plus"}
        rank-bm25's ``BM25Okapi``, ``BM25L`` or ``BM25Plus``.
    k1 : float
        Term-frequency saturation, ≥ 0.
    b : float
        Length normalisation, in [0, 1].
    delta : float
        BM25L/BM25+ shift, ≥ 0; must be 0 for Okapi, which has none.
    epsilon : float
        Okapi only: terms with a negative idf (found in more than half of the documents) get
        ``epsilon × (mean idf over the vocabulary)`` instead, as rank-bm25 does.
    """

    variant: Variant = "okapi"
    k1: float = 1.5
    b: float = 0.75
    delta: float = 0.0
    epsilon: float = 0.25

    def __post_init__(self) -> None:
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}; got {self.variant!r}")
        for name in ("k1", "b", "delta", "epsilon"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise ValueError(f"{name} must be a finite number; got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.k1 < 0:
            raise ValueError(f"k1 must be ≥ 0; got {self.k1}")
        if not 0 <= self.b <= 1:
            raise ValueError(f"b must be between 0 and 1; got {self.b}")
        if self.delta < 0:
            raise ValueError(f"delta must be ≥ 0; got {self.delta}")
        if self.epsilon < 0:
            raise ValueError(f"epsilon must be ≥ 0; got {self.epsilon}")
        if self.variant == "okapi" and self.delta != 0:
            raise ValueError(f"delta={self.delta} has no meaning for okapi; choose bm25l or bm25plus, or delta=0")

    @classmethod
    def for_delta(
        cls, *, k1: float = 1.5, b: float = 0.75, delta: float = 0.0, epsilon: float = 0.25
    ) -> BM25Parameters:
        """The parameters of a retriever configured by ``k1``, ``b`` and ``delta``: Okapi when
        ``delta`` is 0, ``DELTA_VARIANT`` (BM25+) otherwise."""
        return cls(variant=variant_for_delta(delta), k1=k1, b=b, delta=delta, epsilon=epsilon)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, values: Mapping[str, Any]) -> BM25Parameters:
        unknown = set(values) - {"variant", "k1", "b", "delta", "epsilon"}
        if unknown:
            raise ValueError(f"unknown BM25 parameter(s): {', '.join(sorted(unknown))}")
        return cls(**values)


class BM25Index:
    """BM25 over a fixed corpus, scored from a precomputed sparse weight matrix.

    A document is its bag of terms: the scores equal rank-bm25's ``get_scores`` given, for
    every document, exactly the tokens counted in its row (to ~1e-15 relative; only summation
    order differs). Build one with :meth:`from_tokens`, :meth:`from_texts` or from a count
    matrix; it is immutable and safe to query from many threads.

    Parameters
    ----------
    counts : scipy.sparse matrix of non-negative integers, shape (n_documents, n_terms)
        Term counts per document (any sparse format; kept as CSC).
    vocabulary : Vocabulary
        The terms of ``counts``' columns.
    doc_ids : sequence of int, optional
        An id per row (e.g. chunk ids), unique; default ``0..n_documents-1``.
    params : BM25Parameters, optional
        Default: Okapi, k1=1.5, b=0.75, epsilon=0.25.
    metadata : mapping, optional
        JSON-serialisable facts saved with the index (e.g. the converter's configuration, so a
        stale index can be detected).

    Notes
    -----
    rank-bm25 semantics kept on purpose:

    * Okapi: ``idf = ln(N - n + 0.5) - ln(n + 0.5)``; negative idfs are replaced by
      ``epsilon × mean(idf)`` over the whole vocabulary (the mean taken before flooring).
    * BM25L: ``idf = ln(N + 1) - ln(n + 0.5)``; weight ``idf · tf · (k1+1) · (c+δ) / (k1+c+δ)``
      with ``c = tf / (1 - b + b·dl/avgdl)`` (the extra ``tf`` factor is rank-bm25's).
    * BM25+: ``idf = ln((N + 1) / n)``; every document, with or without the term, gets
      ``idf · δ`` per query term, kept here as a per-term constant outside the sparse matrix.
    * A repeated query term counts once per occurrence; terms outside the vocabulary add 0.

    Where rank-bm25 divides 0 by 0 (an empty document with ``b=1``, or ``k1=0``), a term a
    document lacks contributes its limit: nothing (BM25+: ``idf · δ``) instead of NaN.
    """

    def __init__(
        self,
        counts: sp.spmatrix | sp.sparray,
        vocabulary: Vocabulary,
        *,
        doc_ids: Sequence[int] | np.ndarray | None = None,
        params: BM25Parameters | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> None:
        if not sp.issparse(counts):
            raise TypeError(f"counts must be a scipy.sparse matrix, got {type(counts).__name__}")
        if not np.issubdtype(counts.dtype, np.integer):
            raise TypeError(f"counts must hold integers, got {counts.dtype}")
        n_documents, n_terms = counts.shape
        if n_terms != len(vocabulary):
            raise ValueError(f"counts has {n_terms} columns but the vocabulary has {len(vocabulary)} terms")
        # A private, canonical copy: sorted rows within each column, no explicit zeros.
        matrix = sp.csc_matrix(counts, dtype=np.int32, copy=True)
        matrix.sum_duplicates()
        matrix.eliminate_zeros()
        if matrix.nnz and matrix.data.min() < 0:
            raise ValueError("term counts must be ≥ 0")
        self._counts = matrix
        self._vocabulary = vocabulary
        self._doc_ids = _doc_ids(doc_ids, n_documents)
        self._params = params or BM25Parameters()
        self._metadata = json.loads(json.dumps(dict(metadata or {})))
        self._row_lookup: tuple[np.ndarray, np.ndarray] | None = None
        self._weigh()

    # -- construction -----------------------------------------------------------------------

    @classmethod
    def from_tokens(
        cls,
        token_lists: Iterable[Sequence[str]],
        *,
        doc_ids: Sequence[int] | np.ndarray | None = None,
        params: BM25Parameters | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> BM25Index:
        """Index documents given as token lists; every distinct token is a term.

        ``BM25Index.from_tokens(corpus).scores(q)`` equals ``rank_bm25.BM25Okapi(corpus).get_scores(q)``.
        """
        vocabulary, counts = count_tokens(token_lists)
        return cls(counts, vocabulary, doc_ids=doc_ids, params=params, metadata=metadata)

    @classmethod
    def from_texts(
        cls,
        texts: Iterable[str],
        converter: BagOfWordsConverter,
        *,
        doc_ids: Sequence[int] | np.ndarray | None = None,
        params: BM25Parameters | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> BM25Index:
        """Index texts through ``converter`` (``fit_transform``: each text analysed once).

        A document is its in-vocabulary terms: terms the converter prunes (``min_df``,
        ``max_df``, ``max_features``) count neither as matches nor toward document length, as
        if rank-bm25 were given the pruned token lists. The converter's configuration is saved
        in ``metadata["converter"]``.
        """
        vocabulary, counts = converter.fit_transform(texts)
        facts = {"converter": converter.to_config(), **dict(metadata or {})}
        return cls(counts, vocabulary, doc_ids=doc_ids, params=params, metadata=facts)

    def with_params(self, params: BM25Parameters) -> BM25Index:
        """The same corpus scored with other BM25 parameters (no re-tokenisation)."""
        return BM25Index(self._counts, self._vocabulary, doc_ids=self._doc_ids, params=params, metadata=self._metadata)

    def _weigh(self) -> None:
        counts, p = self._counts, self._params
        n_documents, n_terms = counts.shape
        document_frequency = np.diff(counts.indptr)
        rows = counts.indices
        term_frequency = counts.data.astype(np.float64)
        doc_lengths = np.bincount(rows, weights=term_frequency, minlength=n_documents)
        average = float(doc_lengths.sum()) / n_documents if n_documents else 0.0

        idf = np.zeros(n_terms)
        present = document_frequency > 0
        n = document_frequency[present].astype(np.float64)
        if p.variant == "okapi":
            raw = np.log(n_documents - n + 0.5) - np.log(n + 0.5)
            if raw.size:
                raw[raw < 0] = p.epsilon * raw.mean()
        elif p.variant == "bm25l":
            raw = np.log(n_documents + 1) - np.log(n + 0.5)
        else:
            raw = np.log((n_documents + 1) / n)
        idf[present] = raw

        # Expressions follow rank-bm25's operation order so each term weight is bit-identical.
        k1, b, delta = p.k1, p.b, p.delta
        term_idf = np.repeat(idf, document_frequency)
        tf, dl = term_frequency, doc_lengths[rows]
        if p.variant == "okapi":
            weights = term_idf * (tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / average)))
        elif p.variant == "bm25l":
            ctd = tf / (1 - b + b * dl / average)
            weights = term_idf * tf * (k1 + 1) * (ctd + delta) / (k1 + ctd + delta)
        else:
            weights = term_idf * ((tf * (k1 + 1)) / (k1 * (1 - b + b * dl / average) + tf))
        self._weights = weights
        self._idf = idf
        self._floor = idf * delta if p.variant == "bm25plus" and delta else None
        self._doc_lengths = doc_lengths
        self._average_length = average
        for array in (self._weights, self._idf, self._doc_lengths):
            array.flags.writeable = False

    # -- queries ----------------------------------------------------------------------------

    def scores(self, query_tokens: Iterable[str]) -> np.ndarray:
        """BM25 score of every document for ``query_tokens``.

        Parameters
        ----------
        query_tokens : iterable of str
            The analysed query (e.g. ``converter.analyze(question)``); repeats count.

        Returns
        -------
        numpy.ndarray of float64, shape (n_documents,)
            A new array; row ``i`` scores the document ``doc_ids[i]``.
        """
        columns, repeats = self._query_columns(query_tokens)
        n_documents = self._counts.shape[0]
        if not columns.size:
            return np.zeros(n_documents)
        indptr, indices, weights = self._counts.indptr, self._counts.indices, self._weights
        row_parts, weight_parts = [], []
        for column, repeat in zip(columns.tolist(), repeats.tolist(), strict=True):
            start, stop = indptr[column], indptr[column + 1]
            row_parts.append(indices[start:stop])
            weight_parts.append(weights[start:stop] * repeat if repeat != 1 else weights[start:stop])
        rows = row_parts[0] if len(row_parts) == 1 else np.concatenate(row_parts)
        values = weight_parts[0] if len(weight_parts) == 1 else np.concatenate(weight_parts)
        # Float scores: numpy's stubs type every bincount as counts, weighted or not.
        scores: np.ndarray = np.bincount(rows, weights=values, minlength=n_documents)
        if self._floor is not None:
            scores += float(self._floor[columns] @ repeats)
        return scores

    def contributions(self, query_tokens: Iterable[str], row: int) -> list[dict[str, Any]]:
        """Each distinct query term's part of document ``row``'s score, in query order.

        A row is ``{"term", "query_count", "term_frequency", "idf", "contribution"}``; the
        contributions add up to ``scores(query_tokens)[row]`` (BM25+'s floor included in each
        term's part). A term no document holds has ``idf`` 0 and contributes nothing.
        """
        counts, indptr, indices = self._counts, self._counts.indptr, self._counts.indices
        lookup = self._vocabulary.column
        parts = []
        for term, repeat in Counter(query_tokens).items():
            column = lookup(term)
            if column is None:
                parts.append({"term": term, "query_count": repeat, "term_frequency": 0, "idf": 0.0, "contribution": 0.0})
                continue
            start, stop = indptr[column], indptr[column + 1]
            at = np.flatnonzero(indices[start:stop] == row)
            frequency = int(counts.data[start + at[0]]) if at.size else 0
            weight = float(self._weights[start + at[0]]) if at.size else 0.0
            floor = float(self._floor[column]) if self._floor is not None else 0.0
            parts.append({"term": term, "query_count": repeat, "term_frequency": frequency,
                          "idf": float(self._idf[column]), "contribution": (weight + floor) * repeat})
        return parts

    def matches(self, query_tokens: Iterable[str]) -> np.ndarray:
        """A boolean per document: does it contain at least one of ``query_tokens``?"""
        columns, _ = self._query_columns(query_tokens)
        matched = np.zeros(self._counts.shape[0], dtype=bool)
        indptr, indices = self._counts.indptr, self._counts.indices
        for column in columns.tolist():
            matched[indices[indptr[column]:indptr[column + 1]]] = True
        return matched

    def baseline(self, query_tokens: Iterable[str]) -> float:
        """The score of a document that contains none of ``query_tokens``: 0, or for BM25+ the
        ``idf · δ`` every document gets per query term."""
        if self._floor is None:
            return 0.0
        columns, repeats = self._query_columns(query_tokens)
        return float(self._floor[columns] @ repeats) if columns.size else 0.0

    def top_k(self, query_tokens: Iterable[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` best documents for ``query_tokens``, best first.

        Returns
        -------
        rows : numpy.ndarray of int64
            Row positions (``doc_ids[rows]`` gives the ids); ties go to the lower row.
        scores : numpy.ndarray of float64
            Their scores. Fewer than ``k`` when the corpus is smaller; documents that match no
            query term are included when needed to fill ``k`` (they score 0, BM25+: its floor).
        """
        scores = self.scores(query_tokens)
        rows = top_k_indices(scores, k)
        return rows, scores[rows]

    def _query_columns(self, query_tokens: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        if isinstance(query_tokens, str):
            raise TypeError("query_tokens is a list of tokens, not a string; analyze the query first")
        columns, repeats = [], []
        lookup = self._vocabulary.column
        for term, repeat in Counter(query_tokens).items():
            column = lookup(term)
            if column is not None:
                columns.append(column)
                repeats.append(repeat)
        return np.asarray(columns, dtype=np.int64), np.asarray(repeats, dtype=np.float64)

    def rows_of(self, doc_ids: Iterable[int]) -> np.ndarray:
        """Row positions of ``doc_ids``; -1 for an id the index does not hold."""
        if self._row_lookup is None:
            order = np.argsort(self._doc_ids, kind="stable")
            self._row_lookup = (self._doc_ids[order], order)
        sorted_ids, order = self._row_lookup
        wanted = np.fromiter(doc_ids, dtype=np.int64)
        if not sorted_ids.size:
            return np.full(wanted.shape, -1, dtype=np.int64)
        slots = np.minimum(np.searchsorted(sorted_ids, wanted), sorted_ids.size - 1)
        return np.where(sorted_ids[slots] == wanted, order[slots], -1).astype(np.int64)

    # -- description ------------------------------------------------------------------------

    @property
    def params(self) -> BM25Parameters:
        return self._params

    @property
    def vocabulary(self) -> Vocabulary:
        return self._vocabulary

    @property
    def counts(self) -> sp.csc_matrix:
        """The documents × terms count matrix (read-only by convention)."""
        return self._counts

    @property
    def doc_ids(self) -> np.ndarray:
        """Document ids by row (int64, read-only)."""
        return self._doc_ids

    @property
    def metadata(self) -> dict[str, Any]:
        return json.loads(json.dumps(self._metadata))

    @property
    def idf(self) -> np.ndarray:
        """The idf of every vocabulary term, as the variant defines it (0 for a term no document has)."""
        return self._idf

    @property
    def doc_lengths(self) -> np.ndarray:
        """Tokens per document (float64)."""
        return self._doc_lengths

    @property
    def average_doc_length(self) -> float:
        return self._average_length

    @property
    def n_documents(self) -> int:
        return int(self._counts.shape[0])

    @property
    def nnz(self) -> int:
        """Stored (document, term) pairs."""
        return int(self._counts.nnz)

    def __len__(self) -> int:
        return self.n_documents

    def __repr__(self) -> str:
        return (
            f"BM25Index(documents={self.n_documents}, terms={len(self._vocabulary)}, nnz={self.nnz}, "
            f"params={self._params})"
        )

    # -- persistence ------------------------------------------------------------------------

    def save(self, directory: str | Path) -> Path:
        """Write the index to ``directory`` atomically; see :mod:`.storage`. Returns the path."""
        from .storage import save_index

        return save_index(self, directory)

    @classmethod
    def load(cls, directory: str | Path) -> BM25Index:
        """Read an index written by :meth:`save`; raises ``BM25IndexError`` when it is missing,
        corrupt or of another format version."""
        from .storage import load_index

        return load_index(directory)

    def _arrays(self) -> dict[str, np.ndarray]:
        counts = self._counts
        return {
            "data": counts.data,
            "indices": counts.indices,
            "indptr": counts.indptr,
            "shape": np.asarray(counts.shape, dtype=np.int64),
        }


_BLOCK = 64


def top_k_indices(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest ``scores``, highest first, ties to the lower position.

    The ``k``-th largest of the maxima of blocks of ``_BLOCK`` scores is a lower bound of the
    ``k``-th largest score, so only the rows reaching it (every top-k row and its ties) are
    ranked. ``argpartition`` over the whole array is avoided: BM25 scores repeat a lot (zeros,
    identical short chunks), which makes numpy's introselect ~20× slower than on distinct values.
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be an integer ≥ 0; got {k!r}")
    n = scores.shape[0]
    k = min(int(k), n)
    if k == 0:
        return np.empty(0, dtype=np.int64)
    blocks = -(-n // _BLOCK)
    if k < n and blocks > k:
        padded = np.full(blocks * _BLOCK, -np.inf)
        padded[:n] = scores
        maxima = padded.reshape(blocks, _BLOCK).max(axis=1)
        bound = np.partition(maxima, blocks - k)[blocks - k]
        candidates = np.flatnonzero(scores >= bound)
    else:
        candidates = np.arange(n)
    values = scores[candidates]
    if candidates.size > 8 * k + 1024:
        # Many rows tie at the bound (e.g. fewer than k blocks score above 0): cut to the k-th value first.
        kth = np.partition(values, candidates.size - k)[candidates.size - k]
        keep = values >= kth
        candidates, values = candidates[keep], values[keep]
    return candidates[np.lexsort((candidates, -values))[:k]].astype(np.int64)


def _doc_ids(doc_ids: Sequence[int] | np.ndarray | None, n_documents: int) -> np.ndarray:
    if doc_ids is None:
        ids = np.arange(n_documents, dtype=np.int64)
    else:
        given = np.asarray(doc_ids)
        if given.size and not np.issubdtype(given.dtype, np.integer):
            raise TypeError(f"doc_ids must be integers, got {given.dtype}")
        ids = given.astype(np.int64).reshape(-1)
        if ids.shape[0] != n_documents:
            raise ValueError(f"{ids.shape[0]} doc_ids for {n_documents} documents")
        unique, counts = np.unique(ids, return_counts=True)
        if unique.size != ids.size:
            raise ValueError(f"doc_ids must be unique; repeated: {unique[counts > 1][:5].tolist()}")
    ids.flags.writeable = False
    return ids
