"""Confidence intervals and paired significance tests over per-query scores.

Every function takes an explicit ``seed``: the same inputs and seed give the same numbers, so
a stored report can be reproduced.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

_TOLERANCE = 1e-12
_BATCH = 1000


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (linear interpolation, numpy's default); NaN when empty."""
    if not len(values):
        return float("nan")
    return float(np.percentile(np.asarray(values, dtype=np.float64), q))


def bootstrap_ci(values: Sequence[float] | np.ndarray, *, confidence: float = 0.95, resamples: int = 2000,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values``.

    Resamples the values with replacement ``resamples`` times and returns the
    ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of the resampled means.
    """
    data = np.asarray(values, dtype=np.float64)
    if data.size == 0:
        return float("nan"), float("nan")
    if data.size == 1 or np.all(data == data[0]):
        return float(data[0]), float(data[0])
    means = _bootstrap_means(data, resamples, np.random.default_rng(seed))
    alpha = (1.0 - confidence) / 2.0
    low, high = np.quantile(means, [alpha, 1.0 - alpha])
    return float(low), float(high)


def paired_randomization_test(a: Sequence[float], b: Sequence[float], *, permutations: int = 10000,
                              seed: int = 0) -> float:
    """Two-sided p-value of the paired randomisation (sign-flip permutation) test.

    Under the null hypothesis the two systems are exchangeable on each query, so each per-query
    difference ``a[i] - b[i]`` is as likely to have either sign. The p-value is the share of
    sign assignments whose mean difference is at least as far from 0 as the observed one. When
    ``2 ** n <= permutations`` every assignment is enumerated (an exact test); otherwise
    ``permutations`` random ones are drawn and ``(hits + 1) / (permutations + 1)`` is returned.
    """
    differences = _differences(a, b)
    n = differences.size
    if n == 0:
        return float("nan")
    observed = abs(differences.mean())
    if observed <= _TOLERANCE:
        return 1.0
    if 2 ** n <= permutations:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        extreme = np.abs(signs @ differences / n) >= observed - _TOLERANCE
        return float(extreme.mean())
    rng = np.random.default_rng(seed)
    hits = 0
    for start in range(0, permutations, _BATCH):
        size = min(_BATCH, permutations - start)
        signs = rng.choice((-1.0, 1.0), size=(size, n))
        hits += int(np.count_nonzero(np.abs(signs @ differences / n) >= observed - _TOLERANCE))
    return (hits + 1) / (permutations + 1)


def paired_bootstrap_test(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95,
                          resamples: int = 2000, seed: int = 0) -> dict[str, Any]:
    """The mean difference ``a - b`` with its bootstrap interval and a two-sided p-value.

    The interval resamples queries (pairs kept together). The p-value resamples the differences
    shifted to mean 0 (the null hypothesis) and counts means at least as far from 0 as the
    observed one: ``(hits + 1) / (resamples + 1)``.
    """
    differences = _differences(a, b)
    if differences.size == 0:
        return {"difference": float("nan"), "ci": [float("nan"), float("nan")], "p_value": float("nan")}
    observed = float(differences.mean())
    low, high = bootstrap_ci(differences, confidence=confidence, resamples=resamples, seed=seed)
    if abs(observed) <= _TOLERANCE or differences.size == 1:
        p_value = 1.0
    else:
        shifted = _bootstrap_means(differences - observed, resamples, np.random.default_rng(seed + 1))
        p_value = (int(np.count_nonzero(np.abs(shifted) >= abs(observed) - _TOLERANCE)) + 1) / (resamples + 1)
    return {"difference": observed, "ci": [low, high], "p_value": p_value}


def compare_paired(a: Sequence[float], b: Sequence[float], *, seed: int = 0, permutations: int = 10000,
                   resamples: int = 2000) -> dict[str, Any]:
    """Both tests on one metric: means, difference ``a - b``, its interval, both p-values."""
    bootstrap = paired_bootstrap_test(a, b, resamples=resamples, seed=seed)
    return {
        "n": len(a),
        "mean_a": _mean(a),
        "mean_b": _mean(b),
        "difference": bootstrap["difference"],
        "ci": bootstrap["ci"],
        "p_randomization": paired_randomization_test(a, b, permutations=permutations, seed=seed),
        "p_bootstrap": bootstrap["p_value"],
    }


def _mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if len(values) else float("nan")


def _differences(a: Sequence[float], b: Sequence[float]) -> np.ndarray:
    if len(a) != len(b):
        raise ValueError(f"paired scores need the same number of queries, got {len(a)} and {len(b)}")
    return np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)


def _bootstrap_means(data: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _BATCH):
        size = min(_BATCH, resamples - start)
        rows = rng.integers(0, data.size, size=(size, data.size))
        means[start:start + size] = data[rows].mean(axis=1)
    return means
