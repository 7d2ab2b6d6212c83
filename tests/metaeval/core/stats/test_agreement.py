"""Tests for metaeval.core.stats.agreement: Krippendorff's alpha (golden vs the ``krippendorff`` package and by hand)
and
its bootstrap interval."""
from __future__ import annotations

import math

import krippendorff
import numpy as np
import pytest

from metaeval.core.stats.agreement import alpha_bootstrap_ci, coincidence_matrix, krippendorff_alpha

NAN = np.nan
SCALE = list(range(1, 7))
LEVELS = ("nominal", "ordinal", "interval", "ratio")

# Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability", sec. E: 4 observers (rows) x 12 units.
PAPER = [
    [1, 2, 3, 3, 2, 1, 4, 1, 2, NAN, NAN, NAN],
    [1, 2, 3, 3, 2, 2, 4, 1, 2, 5, NAN, 3],
    [NAN, 3, 3, 3, 2, 3, 4, 2, 2, 5, 1, NAN],
    [1, 2, 3, 3, 2, 4, 4, 1, 2, 5, 1, NAN],
]


def random_matrix(seed: int, raters: int, units: int, missing: float, correlated: bool = True) -> np.ndarray:
    """Ratings 1..6, a share ``missing`` of them NaN. Correlated raters share a latent value per unit plus noise
    (alpha about 0.3..0.9); uncorrelated ones rate at random (alpha near 0, possibly negative)."""
    rng = np.random.default_rng(seed)
    if correlated:
        latent = rng.integers(1, 7, size=units)
        noise = rng.integers(-2, 3, size=(raters, units)) * (rng.random((raters, units)) < 0.5)
        matrix = np.clip(latent + noise, 1, 6).astype(float)
    else:
        matrix = rng.integers(1, 7, size=(raters, units)).astype(float)
    matrix[rng.random((raters, units)) < missing] = NAN
    return matrix


# --------------------------------------------------------------------------------------------------------------
# Alpha
# --------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize(
    ("seed", "raters", "units", "missing", "correlated"),
    [
        (0, 2, 10, 0.0, True), (1, 3, 25, 0.3, True), (2, 5, 40, 0.5, True), (3, 8, 60, 0.7, True),
        (4, 4, 200, 0.4, True), (5, 10, 7, 0.6, True), (6, 3, 30, 0.2, False), (7, 6, 50, 0.5, False),
    ],
)
def test_alpha_matches_krippendorff_package(
    level: str, seed: int, raters: int, units: int, missing: float, correlated: bool
) -> None:
    matrix = random_matrix(seed, raters, units, missing, correlated)
    expected = krippendorff.alpha(reliability_data=matrix, level_of_measurement=level, value_domain=SCALE)
    assert krippendorff_alpha(matrix, level) == pytest.approx(expected, abs=1e-12)
    # The same data as {unit: {rater: value}} (missing values left out) gives the same alpha.
    units_map = {
        u: {r: matrix[r, u] for r in range(raters) if not np.isnan(matrix[r, u])} for u in range(units)
    }
    assert krippendorff_alpha(units_map, level) == pytest.approx(expected, abs=1e-12)


def test_paper_example() -> None:
    # Pairable values per value (unit 12 has a single value and is ignored), counted from the table:
    # 1: u1 x3, u6 x1, u8 x3, u11 x2 = 9;  2: u2 x3, u5 x4, u6, u8, u9 x4 = 13;  3: u2, u3 x4, u4 x4, u6 = 10;
    # 4: u6, u7 x4 = 5;  5: u10 x3 = 3;  n.. = 40.
    o = coincidence_matrix(PAPER, values=(1, 2, 3, 4, 5))
    assert o.sum(axis=0) == pytest.approx([9, 13, 10, 5, 3])
    assert o == pytest.approx(o.T)
    # Unit 6 (values 1, 2, 3, 4 from four observers) adds 1/3 to every off-diagonal pair among 1..4; unit 2
    # (2, 2, 3, 2) adds 2 * 3/3 = 2 to o_22 and 3 * 1/3 = 1 to o_23; unit 8 (1, 1, 2, 1) likewise to o_11, o_12.
    assert o[0, 1] == pytest.approx(1 / 3 + 1)
    assert o[1, 2] == pytest.approx(1 / 3 + 1)
    # The paper's results: nominal .743, ordinal .815, interval .849, ratio .797.
    for level, published in (("nominal", 0.743), ("ordinal", 0.815), ("interval", 0.849), ("ratio", 0.797)):
        assert round(krippendorff_alpha(PAPER, level, values=(1, 2, 3, 4, 5)), 3) == published
    # Nominal alpha exactly: the diagonal of o sums to 7 + 10 + 8 + 4 + 3 = 32, so 8 of the 40 pairable values
    # disagree; sum_{c != k} n_c n_k = 40^2 - (81 + 169 + 100 + 25 + 9) = 1216; alpha = 1 - 39 * 8 / 1216.
    assert np.trace(o) == pytest.approx(32)
    assert krippendorff_alpha(PAPER, "nominal", values=(1, 2, 3, 4, 5)) == pytest.approx(1 - 39 * 8 / 1216)


def test_small_case_by_hand() -> None:
    # 3 units x 2 raters: u1 = (1, 1), u2 = (2, 3), u3 = (3, 3).
    # Coincidences (m_u - 1 = 1): o_11 = 2 (u1), o_23 = o_32 = 1 (u2), o_33 = 2 (u3).
    # Margins n_1 = 2, n_2 = 1, n_3 = 3 (values 4..6 unused, n = 0), n.. = 6.
    # alpha = 1 - (n.. - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck.
    # Ordinal: d_12 = (n_1 + n_2 - (n_1 + n_2)/2)^2 = 1.5^2 = 2.25; d_23 = (1 + 3 - 2)^2 = 4;
    #          d_13 = (2 + 1 + 3 - 2.5)^2 = 12.25.
    #   observed: 2 * o_23 * d_23 = 8; expected: 2 * (2*1*2.25 + 2*3*12.25 + 1*3*4) = 2 * 90 = 180.
    #   alpha = 1 - 5 * 8 / 180 = 7/9.
    # Nominal: observed 2 (off-diagonal o); expected n..^2 - sum n_c^2 = 36 - 14 = 22; alpha = 1 - 10/22 = 6/11.
    # Interval: observed 2 * 1 * (3-2)^2 = 2; expected 2 * (2*1*1 + 2*3*4 + 1*3*1) = 58; alpha = 1 - 10/58 = 24/29.
    units = {"u1": {"A": 1, "B": 1}, "u2": {"A": 2, "B": 3}, "u3": {"A": 3, "B": 3}}
    assert krippendorff_alpha(units) == pytest.approx(7 / 9, abs=1e-15)
    assert krippendorff_alpha(units, "nominal") == pytest.approx(6 / 11, abs=1e-15)
    assert krippendorff_alpha(units, "interval") == pytest.approx(24 / 29, abs=1e-15)
    matrix = [[1, 2, 3], [1, 3, 3]]
    assert krippendorff_alpha(matrix) == pytest.approx(7 / 9, abs=1e-15)
    assert krippendorff.alpha(reliability_data=matrix, level_of_measurement="ordinal", value_domain=SCALE) == (
        pytest.approx(7 / 9, abs=1e-15)
    )
    # A unit rated once is not pairable: adding one changes nothing (also for ordinal, whose margins it would shift).
    assert krippendorff_alpha({**units, "u4": {"A": 6}}) == pytest.approx(7 / 9, abs=1e-15)
    assert krippendorff_alpha({**units, "u4": [6, None, NAN]}) == pytest.approx(7 / 9, abs=1e-15)


@pytest.mark.parametrize("level", LEVELS)
def test_perfect_agreement_and_undefined_cases(level: str) -> None:
    perfect = [[1, 2, 3, 6, NAN], [1, 2, 3, 6, 5], [1, NAN, 3, 6, NAN]]
    assert krippendorff_alpha(perfect, level) == 1.0
    assert math.isnan(krippendorff_alpha([[4, 4, 4], [4, 4, NAN]], level))  # no variation: D_e = 0
    assert math.isnan(krippendorff_alpha([[1, NAN], [NAN, 2]], level))  # no pairable unit
    assert math.isnan(krippendorff_alpha({}, level))


def test_bad_input() -> None:
    with pytest.raises(ValueError, match="not one of the values"):
        krippendorff_alpha([[1, 7], [1, 2]])
    with pytest.raises(ValueError, match="not one of the values"):
        krippendorff_alpha({"u": [1, 2.5]})
    with pytest.raises(ValueError, match="unknown level"):
        krippendorff_alpha([[1, 2], [1, 2]], "cardinal")
    with pytest.raises(ValueError, match="2-D"):
        krippendorff_alpha([1, 2, 3])
    # values=None takes the sorted observed values.
    assert krippendorff_alpha([[1, 7], [1, 7]], values=None) == 1.0


def test_bootstrap_interval() -> None:
    matrix = random_matrix(7, 4, 80, 0.3)
    alpha, low, high = alpha_bootstrap_ci(matrix, n_boot=500, seed=11)
    assert alpha == krippendorff_alpha(matrix)
    assert low < alpha < high
    assert 0 < high - low < 0.5
    assert alpha_bootstrap_ci(matrix, n_boot=500, seed=11) == (alpha, low, high)
    assert alpha_bootstrap_ci(matrix, n_boot=500, seed=12) != (alpha, low, high)
    wider = alpha_bootstrap_ci(matrix, n_boot=500, seed=11, confidence=0.99)
    assert wider[1] <= low and wider[2] >= high
    # Each replicate rebuilds the coincidence matrix from resampled units; a resample of all units once each
    # is the estimate itself, so with perfect agreement every replicate is 1.
    assert alpha_bootstrap_ci([[1, 2, 3, 4], [1, 2, 3, 4]], n_boot=50, seed=0) == (1.0, 1.0, 1.0)
    nan_alpha, nan_low, nan_high = alpha_bootstrap_ci([[2, 2], [2, 2]], n_boot=10, seed=0)
    assert math.isnan(nan_alpha) and math.isnan(nan_low) and math.isnan(nan_high)
    with pytest.raises(ValueError):
        alpha_bootstrap_ci(matrix, n_boot=0)
    with pytest.raises(ValueError):
        alpha_bootstrap_ci(matrix, confidence=1.0)
