"""metaeval.core.stats.correlation: system-level HJ correlation (paper Appendix B.2, Table 2)."""
from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval.core.stats.correlation import Correlation, GridCell, correlate, correlation_grid, strength_label

nan = float("nan")


def all_nan(c: Correlation) -> bool:
    return all(math.isnan(v) for v in (c.pearson, c.pearson_p, c.spearman, c.spearman_p, c.kendall, c.kendall_p))


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("n", [3, 4, 7, 10, 25, 60])
def test_equals_scipy_on_seeded_random_vectors(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = 0.5 * x + rng.random(n)
    if seed % 2:  # ties: tau-b and Spearman's average ranks matter
        x, y = np.round(x, 1), np.round(y, 1)
    c = correlate(list(x), list(y))
    assert c.n == n and c.dropped == () and c.note == ""
    r, rho, tau = stats.pearsonr(x, y), stats.spearmanr(x, y), stats.kendalltau(x, y)
    assert (c.pearson, c.pearson_p) == (r.statistic, r.pvalue)
    assert (c.spearman, c.spearman_p) == (rho.statistic, rho.pvalue)
    assert (c.kendall, c.kendall_p) == (tau.statistic, tau.pvalue)
    assert all(type(v) is float for v in (c.pearson, c.pearson_p, c.spearman, c.spearman_p, c.kendall, c.kendall_p))


def test_hand_computed_four_systems():
    # Four systems; automatic scores x, human scores y.
    x = [0.1, 0.2, 0.3, 0.9]
    y = [1.0, 3.0, 2.0, 4.0]
    c = correlate(x, y)
    # Pearson: mean x = 1.5/4 = 0.375, mean y = 10/4 = 2.5
    #   dx = [-0.275, -0.175, -0.075, 0.525], dy = [-1.5, 0.5, -0.5, 1.5]
    #   sum dx*dy = 0.4125 - 0.0875 + 0.0375 + 0.7875 = 1.15
    #   sum dx^2 = 0.075625 + 0.030625 + 0.005625 + 0.275625 = 0.3875, sum dy^2 = 2.25+0.25+0.25+2.25 = 5
    #   r = 1.15 / sqrt(0.3875 * 5) = 1.15 / sqrt(1.9375)
    assert c.pearson == pytest.approx(1.15 / math.sqrt(1.9375), abs=1e-12)  # 0.82618...
    # two-sided t-test, df = n - 2 = 2: t = r sqrt(2 / (1 - r^2)); for df = 2, p = 1 - |t| / sqrt(t^2 + 2) = 1 - |r|
    assert c.pearson_p == pytest.approx(1 - 1.15 / math.sqrt(1.9375), abs=1e-12)
    # Spearman: ranks x = [1, 2, 3, 4], ranks y = [1, 3, 2, 4]; d = [0, -1, 1, 0], sum d^2 = 2
    #   rho = 1 - 6 * 2 / (4 * (16 - 1)) = 1 - 12/60 = 0.8; p (t-test, df 2) = 1 - 0.8 = 0.2
    assert c.spearman == pytest.approx(0.8, abs=1e-12)
    assert c.spearman_p == pytest.approx(0.2, abs=1e-12)
    # Kendall: pairs (i<j) of systems: (1,2) C, (1,3) C, (1,4) C, (2,3) D [x up, y 3->2], (2,4) C, (3,4) C
    #   c = 5, d = 1, no ties: tau = (5 - 1) / 6 = 2/3
    #   exact p: of the 24 orderings of 4 items, 1 has 0 and 3 have 1 discordant pair -> one side 4/24,
    #   two-sided 8/24 = 1/3
    assert c.kendall == pytest.approx(2 / 3, abs=1e-12)
    assert c.kendall_p == pytest.approx(1 / 3, abs=1e-12)
    assert (c.n, c.dropped, c.note) == (4, (), "")


def test_kendall_is_tau_b_with_ties():
    # x has one tie (systems 2 and 3). Pairs: (1,2) C, (1,3) C, (1,4) C, (2,3) tied in x, (2,4) C, (3,4) C
    #   c = 5, d = 0; n0 = 6 pairs, ties in x n1 = 1, ties in y n2 = 0
    #   tau-b = (c - d) / sqrt((n0 - n1)(n0 - n2)) = 5 / sqrt(5 * 6) = 0.91287...  (tau-a would be 5/6)
    c = correlate([1, 2, 2, 3], [1, 2, 3, 4])
    assert c.kendall == pytest.approx(5 / math.sqrt(30), abs=1e-12)
    # Spearman with average ranks: x ranks [1, 2.5, 2.5, 4] vs [1, 2, 3, 4] -> Pearson of the ranks
    assert c.spearman == pytest.approx(stats.pearsonr([1, 2.5, 2.5, 4], [1, 2, 3, 4]).statistic, abs=1e-12)


def test_perfect_and_inverse():
    up = correlate([1, 2, 3, 4, 5], [10, 20, 30, 40, 50])
    down = correlate([1, 2, 3, 4, 5], [5, 4, 3, 2, 1])
    assert (up.pearson, up.spearman, up.kendall) == pytest.approx((1, 1, 1))
    assert (down.pearson, down.spearman, down.kendall) == pytest.approx((-1, -1, -1))


def test_nan_pairs_are_dropped_pairwise():
    x = [0.1, nan, 0.3, 0.9, 0.5, 0.4]
    y = [1.0, 2.0, 2.0, 4.0, nan, 3.0]
    c = correlate(x, y)
    assert c.dropped == (1, 4) and c.n == 4
    kept = correlate([0.1, 0.3, 0.9, 0.4], [1.0, 2.0, 4.0, 3.0])
    assert (c.pearson, c.spearman, c.kendall) == (kept.pearson, kept.spearman, kept.kendall)
    assert (c.pearson_p, c.spearman_p, c.kendall_p) == (kept.pearson_p, kept.spearman_p, kept.kendall_p)
    both = correlate([None, 1, 2, 3, float("inf")], [1, 2, 1, 3, 4])
    assert both.dropped == (0, 4) and both.n == 3


@pytest.mark.parametrize(("x", "y", "n"), [([], [], 0), ([1.0], [2.0], 1), ([1, 2], [2, 1], 2),
                                           ([1, 2, nan], [1, 2, 3], 2)])
def test_fewer_than_three_pairs_is_nan_with_note(x, y, n):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = correlate(x, y)
    assert c.n == n and all_nan(c)
    assert "undefined" in c.note and "at least 3" in c.note


@pytest.mark.parametrize(("x", "y", "which"), [([2, 2, 2, 2], [1, 2, 3, 4], "x is constant"),
                                               ([1, 2, 3], [5, 5, 5], "y is constant"),
                                               ([1, 1, 1], [5, 5, 5], "x and y are constant"),
                                               ([1, nan, 1, 1], [1, 2, 3, 4], "x is constant")])
def test_constant_input_is_nan_with_note_and_no_warning(x, y, which):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a leaked ConstantInputWarning would fail here
        c = correlate(x, y)
    assert all_nan(c) and which in c.note


def test_near_constant_input_does_not_leak_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        c = correlate([1.0, 1.0 + 1e-15, 1.0, 1.0 + 2e-15], [1, 2, 3, 4])
    assert c.n == 4


def test_length_mismatch_raises():
    with pytest.raises(ValueError, match="differ in length"):
        correlate([1, 2, 3], [1, 2])


@pytest.mark.parametrize(
    ("value", "p", "label"),
    [
        (0.73, 0.001, "Strong"),
        (-0.9, 0.001, "Strong"),
        (0.7, 0.001, "Strong"),
        (0.69, 0.001, "Moderate"),
        (0.4, 0.0, "Moderate"),
        (0.39, 0.005, "Low"),
        (-0.1, 0.001, "Low"),
        (0.09, 0.001, "None"),
        (0.95, 0.01, "None"),  # not significant at p < 0.01 (footnote 7)
        (0.95, 0.2, "None"),
        (0.95, nan, "None"),
        (nan, 0.001, "None"),
        (0.95, None, "Strong"),  # no p: magnitude only
    ],
)
def test_strength_label(value, p, label):
    assert strength_label(value, p) == label


def test_strength_label_options():
    assert strength_label(0.95, 0.04, alpha=0.05) == "Strong"
    assert strength_label(0.95, 0.5, alpha=None) == "Strong"
    assert strength_label(0.5, 0.001, strong=0.5) == "Strong"


def test_correlation_as_dict():
    c = correlate([0.1, 0.2, nan, 0.3, 0.9], [1.0, 3.0, 1.0, 2.0, 4.0])
    d = c.as_dict()
    assert list(d) == ["n", "pearson", "pearson_p", "pearson_label", "spearman", "spearman_p", "spearman_label",
                       "kendall", "kendall_p", "kendall_label", "dropped", "note"]
    assert d["n"] == 4 and d["dropped"] == [2] and d["spearman"] == c.spearman
    assert d["pearson_label"] == "None"  # r = 0.83 but p = 0.17
    json.dumps(d)


AUTO = {
    "PSE-RG-L": {"A": 0.1, "B": 0.2, "C": 0.3, "D": 0.9, "onlyauto": 0.5},
    "PSE-JSD": {"D": 0.4, "C": 0.3, "B": 0.2, "A": 0.1},
    "PSE-BLEU": {"A": 0.5, "B": nan, "C": 0.5, "D": 0.5},
}
HUMAN = {
    "HJ-InfoLM": {"B": 3.0, "A": 1.0, "D": 4.0, "C": 2.0, "onlyhuman": 9.0},
    "HJ-RG-L": {"A": 4.0, "B": 3.0, "C": 2.0},
}


def test_grid_shape_order_and_systems():
    cells = correlation_grid(AUTO, HUMAN)
    assert len(cells) == len(AUTO) * len(HUMAN)
    assert [(c.auto_measure, c.hj_measure) for c in cells] == [
        ("PSE-RG-L", "HJ-InfoLM"), ("PSE-RG-L", "HJ-RG-L"),
        ("PSE-JSD", "HJ-InfoLM"), ("PSE-JSD", "HJ-RG-L"),
        ("PSE-BLEU", "HJ-InfoLM"), ("PSE-BLEU", "HJ-RG-L"),
    ]
    assert all(isinstance(c, GridCell) for c in cells)
    first = cells[0]
    assert first.systems == ("A", "B", "C", "D") and first.dropped == ()
    assert first.correlation == correlate([0.1, 0.2, 0.3, 0.9], [1.0, 3.0, 2.0, 4.0])  # sorted systems
    assert cells[1].systems == ("A", "B", "C") and cells[1].correlation.kendall == pytest.approx(-1)
    assert cells[2].correlation.pearson == correlate([0.1, 0.2, 0.3, 0.4], [1.0, 3.0, 2.0, 4.0]).pearson
    bleu = cells[4]
    assert bleu.systems == ("A", "C", "D") and bleu.dropped == ("B",) and bleu.correlation.dropped == (1,)
    assert all_nan(bleu.correlation) and "x is constant" in bleu.correlation.note
    assert cells[5].correlation.n == 2 and all_nan(cells[5].correlation)


def test_grid_cell_as_dict():
    cell = correlation_grid(AUTO, HUMAN)[4]
    d = cell.as_dict()
    assert d["auto_measure"] == "PSE-BLEU" and d["hj_measure"] == "HJ-InfoLM"
    assert d["systems"] == ["A", "C", "D"] and d["dropped"] == ["B"] and d["n"] == 3
    flat = cell.as_dict(flat=True)
    assert flat["systems"] == "A;C;D" and flat["dropped"] == "B"
    assert all(not isinstance(v, (list, tuple, dict)) for v in flat.values())


def test_grid_empty_inputs():
    assert correlation_grid({}, HUMAN) == [] and correlation_grid(AUTO, {}) == []
    (cell,) = correlation_grid({"a": {"X": 1.0}}, {"h": {"Y": 1.0}})
    assert cell.systems == () and cell.correlation.n == 0
