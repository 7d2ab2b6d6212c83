"""System-level correlation between automatic scores and human-judgment scores (paper Appendix B.2, Table 2;
docs/conventions.md sec. 11).

The coefficients are SciPy's, the maintained definitions: Pearson's r (``scipy.stats.pearsonr``), Spearman's
rho (``spearmanr``) and Kendall's tau-b (``kendalltau`` with its defaults: ``variant="b"``, ``method="auto"``,
i.e. an exact p-value for small samples without ties). Without ties tau-b equals the paper's (c - d)/(c + d);
with ties it is the usual tie-corrected form. p-values are two-sided.

Undefined cases do not raise and leak no SciPy warning: fewer than 3 usable pairs, or a constant vector, give
NaN coefficients and p-values with a ``note`` saying why. Pairs where either value is NaN (or +-inf, or
``None``) are dropped pairwise and their indices reported in ``dropped``.

Strength labels (:func:`strength_label`): the paper labels Table 2 correlations Strong / Moderate / Low / None
and fixes significance at p < 0.01 (footnote 7) but gives no magnitude thresholds. We use the convention
``|value| >= 0.7`` Strong, ``>= 0.4`` Moderate, ``>= 0.1`` Low, otherwise None, and a correlation that is not
significant (p >= 0.01, or p undefined) is labelled None whatever its size. This convention is ours, not the
paper's; the thresholds are keyword arguments.
"""
from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import product

import numpy as np
from scipy import stats

__all__ = [
    "ALPHA",
    "Correlation",
    "GridCell",
    "correlate",
    "correlation_grid",
    "size_label",
    "strength_label",
]

MIN_PAIRS = 3
ALPHA = 0.01  # footnote 7 of Table 2
NAN = float("nan")


def strength_label(
    value: float,
    p: float | None = None,
    *,
    alpha: float | None = ALPHA,
    strong: float = 0.7,
    moderate: float = 0.4,
    low: float = 0.1,
) -> str:  # thresholds: our convention, see the module docstring
    """``"Strong"``, ``"Moderate"``, ``"Low"`` or ``"None"`` for a correlation ``value`` with p-value ``p``.

    By ``|value|``: ``>= strong`` Strong, ``>= moderate`` Moderate, ``>= low`` Low, else None (thresholds are
    our documented convention; the paper states none). When ``p`` is given and ``alpha`` is not ``None``, a
    correlation that is not significant (``p >= alpha``, or ``p`` NaN) is None. A NaN value is None.
    """
    if value is None or not math.isfinite(value):
        return "None"
    if p is not None and alpha is not None and not (p < alpha):  # NaN p compares false
        return "None"
    size = abs(value)
    for label, threshold in (("Strong", strong), ("Moderate", moderate), ("Low", low)):
        if size >= threshold:
            return label
    return "None"


def size_label(r: float | None) -> str:
    """Strength of ``r`` by ``|r|`` alone: ``"Strong"``, ``"Moderate"``, ``"Low"`` or ``"None"`` (NaN: None).

    :func:`strength_label`'s thresholds without its significance gate (e.g. for a bootstrap interval's bounds).
    """
    return strength_label(NAN if r is None else float(r), None)


@dataclass(frozen=True)
class Correlation:
    """Pearson, Spearman and Kendall (tau-b) coefficients with two-sided p-values over ``n`` pairs."""

    n: int
    pearson: float = NAN
    pearson_p: float = NAN
    spearman: float = NAN
    spearman_p: float = NAN
    kendall: float = NAN
    kendall_p: float = NAN
    dropped: tuple[int, ...] = ()
    note: str = ""

    def labels(self, alpha: float | None = ALPHA) -> dict[str, str]:
        """:func:`strength_label` of each coefficient."""
        return {
            name: strength_label(getattr(self, name), getattr(self, f"{name}_p"), alpha=alpha)
            for name in ("pearson", "spearman", "kendall")
        }

    def as_dict(self) -> dict[str, object]:
        """Plain values for CSV/JSON: the fields, ``dropped`` as a list, and ``<coef>_label`` strengths.

        NaN stays a float NaN; a JSON writer must decide how to encode it.
        """
        labels = self.labels()
        out: dict[str, object] = {"n": self.n}
        for name in ("pearson", "spearman", "kendall"):
            out[name] = getattr(self, name)
            out[f"{name}_p"] = getattr(self, f"{name}_p")
            out[f"{name}_label"] = labels[name]
        out["dropped"] = list(self.dropped)
        out["note"] = self.note
        return out


def _as_float(value: object) -> float:
    return NAN if value is None else float(value)  # type: ignore[arg-type]  # numbers or numeric strings


def correlate(x: Sequence[float] | np.ndarray, y: Sequence[float] | np.ndarray) -> Correlation:
    """Correlate ``x`` and ``y`` pairwise (same length); pairs with a NaN/inf/``None`` on either side are dropped.

    Fewer than 3 remaining pairs, or a constant remaining vector, give NaN coefficients with a ``note``.
    """
    xs = [_as_float(v) for v in x]
    ys = [_as_float(v) for v in y]
    if len(xs) != len(ys):
        raise ValueError(f"x and y differ in length ({len(xs)} and {len(ys)})")
    pairs = enumerate(zip(xs, ys, strict=True))
    dropped = tuple(i for i, (a, b) in pairs if not (math.isfinite(a) and math.isfinite(b)))
    skip = set(dropped)
    a = np.array([v for i, v in enumerate(xs) if i not in skip], dtype=np.float64)
    b = np.array([v for i, v in enumerate(ys) if i not in skip], dtype=np.float64)
    n = len(a)
    after = f" after dropping {len(dropped)} pair(s) with NaN" if dropped else ""
    if n < MIN_PAIRS:
        return Correlation(n=n, dropped=dropped, note=f"undefined: {n} pair(s){after}; at least {MIN_PAIRS} are needed")
    constant = [name for name, v in (("x", a), ("y", b)) if np.all(v == v[0])]
    if constant:
        which = " and ".join(constant)
        verb = "are" if len(constant) > 1 else "is"
        return Correlation(n=n, dropped=dropped, note=f"undefined: {which} {verb} constant over the {n} pairs{after}")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        pearson = stats.pearsonr(a, b)
        spearman = stats.spearmanr(a, b)
        kendall = stats.kendalltau(a, b)
    result = Correlation(
        n=n,
        pearson=float(pearson.statistic),
        pearson_p=float(pearson.pvalue),
        spearman=float(spearman.statistic),
        spearman_p=float(spearman.pvalue),
        kendall=float(kendall.statistic),
        kendall_p=float(kendall.pvalue),
        dropped=dropped,
    )
    values = (result.pearson, result.spearman, result.kendall)
    if any(math.isnan(v) for v in values):
        return replace(result, note="scipy returned NaN for a coefficient")
    return result


@dataclass(frozen=True)
class GridCell:
    """One (automatic measure, human-judgment measure) cell of the reliability grid (paper Table 2).

    ``systems`` are the systems correlated (present in both score maps with finite values, sorted);
    ``dropped`` the systems present in both but left out because a value is NaN. ``correlation.dropped`` holds
    the same as indices into the sorted systems present in both (``sorted(systems + dropped)``).
    """

    auto_measure: str
    hj_measure: str
    systems: tuple[str, ...]
    correlation: Correlation
    dropped: tuple[str, ...] = field(default=())

    def as_dict(self, *, flat: bool = False) -> dict[str, object]:
        """Plain values; ``flat=True`` joins ``systems`` and ``dropped`` with ``";"`` for a CSV cell."""
        corr = self.correlation.as_dict()
        del corr["dropped"]
        systems: object = list(self.systems)
        dropped: object = list(self.dropped)
        if flat:
            systems, dropped = ";".join(self.systems), ";".join(self.dropped)
        return {
            "auto_measure": self.auto_measure,
            "hj_measure": self.hj_measure,
            **corr,
            "systems": systems,
            "dropped": dropped,
        }


def correlation_grid(
    auto: Mapping[str, Mapping[str, float]], human: Mapping[str, Mapping[str, float]]
) -> list[GridCell]:
    """Correlate every automatic measure with every human-judgment measure at system level.

    ``auto[measure][system]`` and ``human[hj_measure][system]`` are system scores. Each cell uses the systems
    present in both maps, in sorted order (NaN values dropped pairwise). Cells come in input order,
    automatic measure outer: ``(a1, h1), (a1, h2), ..., (a2, h1), ...``.
    """
    cells: list[GridCell] = []
    for measure, hj_measure in product(auto, human):
        scores, judged = auto[measure], human[hj_measure]
        common = sorted(set(scores) & set(judged))
        corr = correlate([scores[s] for s in common], [judged[s] for s in common])
        skip = set(corr.dropped)
        cells.append(
            GridCell(
                auto_measure=measure,
                hj_measure=hj_measure,
                systems=tuple(s for i, s in enumerate(common) if i not in skip),
                correlation=corr,
                dropped=tuple(common[i] for i in corr.dropped),
            )
        )
    return cells
