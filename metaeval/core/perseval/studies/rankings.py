"""Rankings and ranks of systems by one value (conventions in the package docstring: best first, NaN left
out, competition ranks in tables, average ranks for the Borda sums; no Django)."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np


def is_finite(value: object) -> bool:
    return isinstance(value, (int, float, np.floating, np.integer)) and math.isfinite(float(value))


def ranking(values: Mapping[str, float], *, higher_is_better: bool) -> list[str]:
    """The systems with a finite value, best first; equal values keep their order in ``values``."""
    finite = [(system, float(value)) for system, value in values.items() if is_finite(value)]
    sign = -1.0 if higher_is_better else 1.0
    return [system for system, _ in sorted(finite, key=lambda item: sign * item[1])]


def ranks(values: Mapping[str, float], *, higher_is_better: bool) -> dict[str, int | None]:
    """Competition ranks (1 = best; ties share the best rank; NaN gives ``None``)."""
    finite = {system: float(value) for system, value in values.items() if is_finite(value)}
    out: dict[str, int | None] = {}
    for system, value in values.items():
        if system not in finite:
            out[system] = None
            continue
        better = sum(1 for other in finite.values() if (other > value if higher_is_better else other < value))
        out[system] = 1 + better
    return out


def average_ranks(values: Mapping[str, float], *, higher_is_better: bool) -> dict[str, float]:
    """Rank of each system with a finite value, 1 = best; tied values share their average rank."""
    from scipy.stats import rankdata

    finite = {system: float(value) for system, value in values.items() if is_finite(value)}
    sign = -1.0 if higher_is_better else 1.0
    ranked = rankdata([sign * value for value in finite.values()], method="average")
    return dict(zip(finite, (float(rank) for rank in ranked), strict=True))


def rank_correlation_fields(corr: Any) -> dict[str, Any]:
    """The rank-correlation part of a :class:`~metaeval.core.stats.correlation.Correlation`: ``n``, Spearman and Kendall
    with their p-values, and ``note``."""
    return {
        "n": corr.n, "spearman": corr.spearman, "spearman_p": corr.spearman_p,
        "kendall": corr.kendall, "kendall_p": corr.kendall_p, "note": corr.note,
    }

