"""The vocabulary of a term-count matrix, and counting token lists into one."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Sequence

import numpy as np
import scipy.sparse as sp


class Vocabulary:
    """An immutable, ordered set of terms; a term's position is its column in a count matrix.

    Parameters
    ----------
    terms : sequence of str
        The terms in column order; duplicates are refused.
    """

    __slots__ = ("_index", "_terms")

    def __init__(self, terms: Iterable[str]) -> None:
        self._terms: tuple[str, ...] = tuple(terms)
        self._index: dict[str, int] = {term: column for column, term in enumerate(self._terms)}
        if len(self._index) != len(self._terms):
            duplicates = sorted(term for term, count in Counter(self._terms).items() if count > 1)
            raise ValueError(f"a vocabulary lists each term once; repeated: {duplicates[:5]}")
        for term in self._terms:
            if not isinstance(term, str):
                raise TypeError(f"vocabulary terms are strings, got {type(term).__name__}")

    @property
    def terms(self) -> tuple[str, ...]:
        """The terms in column order."""
        return self._terms

    def column(self, term: str) -> int | None:
        """The column of ``term``, or ``None`` when it is not in the vocabulary."""
        return self._index.get(term)

    def __contains__(self, term: object) -> bool:
        return term in self._index

    def __len__(self) -> int:
        return len(self._terms)

    def __iter__(self) -> Iterator[str]:
        return iter(self._terms)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Vocabulary) and other._terms == self._terms

    def __hash__(self) -> int:
        return hash(self._terms)

    def __repr__(self) -> str:
        preview = ", ".join(repr(term) for term in self._terms[:5])
        more = ", ..." if len(self._terms) > 5 else ""
        return f"Vocabulary([{preview}{more}], size={len(self._terms)})"


def count_tokens(
    token_lists: Iterable[Sequence[str]], vocabulary: Vocabulary | None = None
) -> tuple[Vocabulary, sp.csr_matrix]:
    """Count token lists into a documents × terms CSR matrix.

    Parameters
    ----------
    token_lists : iterable of sequences of str
        One token list per document.
    vocabulary : Vocabulary, optional
        The columns to count; tokens outside it are dropped. Without one, every distinct token
        becomes a term and the vocabulary is sorted (code-point order), so it does not depend
        on document order.

    Returns
    -------
    vocabulary : Vocabulary
    counts : scipy.sparse.csr_matrix of int32, shape (n_documents, len(vocabulary))
        Canonical: sorted column indices, no explicit zeros.
    """
    index: dict[str, int] = {} if vocabulary is None else dict(zip(vocabulary.terms, range(len(vocabulary)), strict=True))
    grow = vocabulary is None
    indices: list[int] = []
    data: list[int] = []
    indptr = [0]
    for tokens in token_lists:
        for term, count in Counter(tokens).items():
            column = index.get(term)
            if column is None:
                if not grow:
                    continue
                column = index[term] = len(index)
            indices.append(column)
            data.append(count)
        indptr.append(len(indices))
    column_of = np.asarray(indices, dtype=np.int64)
    if grow:
        terms = sorted(index)
        # Map first-seen order to sorted order.
        rank = np.empty(len(index), dtype=np.int64)
        rank[[index[term] for term in terms]] = np.arange(len(terms))
        column_of = rank[column_of] if column_of.size else column_of
        vocabulary = Vocabulary(terms)
    assert vocabulary is not None
    counts = sp.csr_matrix(
        (np.asarray(data, dtype=np.int32), column_of.astype(np.int32), np.asarray(indptr, dtype=np.int64)),
        shape=(len(indptr) - 1, len(vocabulary)),
    )
    counts.sort_indices()
    return vocabulary, counts
