"""metaeval.core.stats.resampling: bootstrap intervals and permutation tests for system-level correlations.

Hand-checkable cases use 3 systems x 2 documents, where every bootstrap outcome can be enumerated.
"""
from __future__ import annotations

import itertools
import json
import math
import warnings

import numpy as np
import pytest
from scipy import stats

from metaeval.core.perseval.report_options import RESAMPLES
from metaeval.core.stats.correlation import correlate, size_label, strength_label
from metaeval.core.stats.resampling import (
    METHODS,
    BootstrapCI,
    PermutationResult,
    align,
    batch_correlation,
    bootstrap_correlation,
    bootstrap_replicates,
    correlation_with_ci,
    permutation_test,
    system_scores,
)

nan = float("nan")
SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}

# Three systems, two documents. Human scores are the same on both documents, so the human system scores are
# (1, 2, 3) in every bootstrap sample; auto ranks the systems 1,2,3 on doc 0 and 1,3,2 on doc 1.
HUMAN = np.array([[1.0, 1.0], [2.0, 2.0], [3.0, 3.0]])
AUTO = np.array([[1.0, 1.0], [2.0, 3.0], [3.0, 2.0]])
# Documents resampled: (0,0) -> auto (1,2,3); (1,1) -> (1,3,2); (0,1)/(1,0) -> mean (1, 2.5, 2.5).
# Pearson: 1, 0.5, sqrt(3)/2 (centred (-1,.5,.5).(-1,0,1) = 1.5 over sqrt(1.5*2)). Spearman the same (ranks).
# Kendall tau-b: 1; (C,C,D) -> 1/3; (C,C,tie in x) -> 2/sqrt(2*3).
EXPECTED_DOC_OUTCOMES = {
    "pearson": (1.0, 0.5, math.sqrt(3) / 2),
    "spearman": (1.0, 0.5, math.sqrt(3) / 2),
    "kendall": (1.0, 1 / 3, 2 / math.sqrt(6)),
}


def scipy_corr(x, y, method: str) -> float:
    x, y = np.asarray(x, float), np.asarray(y, float)
    if len(x) < 3 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return nan
    return float(SCIPY[method](x, y).statistic)


def matches_any(values: np.ndarray, allowed) -> np.ndarray:
    return np.isclose(values[:, None], np.asarray(list(allowed))[None, :], atol=1e-12).any(axis=1)


# ------------------------------------------------------------------------------------------------ size_label
@pytest.mark.parametrize(
    ("r", "label"),
    [(0.7, "Strong"), (-0.95, "Strong"), (0.69, "Moderate"), (-0.4, "Moderate"), (0.1, "Low"), (-0.39, "Low"),
     (0.09, "None"), (0.0, "None"), (nan, "None"), (None, "None")],
)
def test_size_label_uses_strength_thresholds_without_significance(r, label):
    assert size_label(r) == label
    if r is not None and not math.isnan(r):
        assert size_label(r) == strength_label(r)  # same thresholds; strength_label without p has no gate
        assert strength_label(r, 0.5) == "None"  # strength_label itself is unchanged


# --------------------------------------------------------------------------------------------- system_scores
def test_system_scores_unweighted_is_nanmean():
    values = np.array([[1.0, 2.0, nan], [nan, nan, nan], [0.5, 0.5, 2.0]])
    got = system_scores(values)
    assert got[0] == 1.5 and math.isnan(got[1]) and got[2] == 1.0
    np.testing.assert_array_equal(got[[0, 2]], np.nanmean(values[[0, 2]], axis=1))


def test_system_scores_weights_honoured():
    values = np.array([[1.0, 3.0], [1.0, nan], [2.0, 4.0], [5.0, 6.0]])
    weights = np.array([[3.0, 1.0], [2.0, nan], [0.0, 0.0], [0.0, 2.0]])  # NaN weight under a NaN value is ignored
    got = system_scores(values, weights)
    assert got[0] == (3 * 1 + 1 * 3) / 4
    assert got[1] == 1.0
    assert math.isnan(got[2])  # weights sum to 0
    assert got[3] == 6.0


def test_integer_weights_equal_duplicated_documents():
    rng = np.random.default_rng(3)
    values = rng.random((4, 5))
    values[1, 2] = nan
    k = np.array([1, 3, 2, 1, 4])
    weights = np.tile(k.astype(float), (4, 1))
    np.testing.assert_allclose(system_scores(values, weights), system_scores(np.repeat(values, k, axis=1)))


@pytest.mark.parametrize(
    ("values", "weights", "message"),
    [([1.0, 2.0], None, "2-D"), ([[1.0, np.inf]], None, "inf"), ([[1.0, 2.0]], [[1.0]], "shape"),
     ([[1.0, 2.0]], [[1.0, -1.0]], ">= 0"), ([[1.0, 2.0]], [[1.0, nan]], ">= 0")],
)
def test_system_scores_rejects_bad_input(values, weights, message):
    with pytest.raises(ValueError, match=message):
        system_scores(values, weights)


# ------------------------------------------------------------------------------------------ batch_correlation
@pytest.mark.parametrize("method", METHODS)
def test_batch_correlation_equals_scipy_with_ties_and_nan(method):
    rng = np.random.default_rng(7)
    x = np.round(rng.random((60, 9)), 1)
    y = np.round(0.5 * x + rng.random((60, 9)), 1)
    x[5, :7] = nan  # 2 pairs left: undefined
    x[6, 2] = nan  # dropped pairwise
    y[7, 4] = nan
    x[8] = 0.3  # constant
    got = batch_correlation(x, y, method)
    for k in range(60):
        keep = np.isfinite(x[k]) & np.isfinite(y[k])
        expected = scipy_corr(x[k, keep], y[k, keep], method)
        if math.isnan(expected):
            assert math.isnan(got[k])
        else:
            assert got[k] == pytest.approx(expected, abs=1e-12)
    assert math.isnan(got[5]) and math.isnan(got[8])


def test_batch_correlation_broadcasts_a_vector():
    x = np.array([[1.0, 2.0, 3.0], [3.0, 2.0, 1.0]])
    np.testing.assert_allclose(batch_correlation(x, [1.0, 2.0, 4.0], "kendall"), [1.0, -1.0])


# ---------------------------------------------------------------------------------- bootstrap: hand-checkable
@pytest.mark.parametrize("method", METHODS)
def test_documents_bootstrap_outcomes_enumerated(method):
    n_boot = 4000
    reps = bootstrap_replicates(AUTO, HUMAN, methods=(method,), resample="documents", n_boot=n_boot, seed=11)[method]
    single0, single1, full = EXPECTED_DOC_OUTCOMES[method]
    assert matches_any(reps, (full, single0, single1)).all()
    # (0,0) and (1,1) each with probability 1/4, a mixed draw with probability 1/2
    assert np.mean(np.isclose(reps, single0)) == pytest.approx(0.25, abs=0.03)
    assert np.mean(np.isclose(reps, single1)) == pytest.approx(0.25, abs=0.03)
    assert np.mean(np.isclose(reps, full)) == pytest.approx(0.5, abs=0.03)

    ci = bootstrap_correlation(AUTO, HUMAN, method=method, resample="documents", n_boot=n_boot, seed=11)
    assert isinstance(ci, BootstrapCI)
    assert ci.estimate == pytest.approx(full, abs=1e-12)  # full data: auto (1, 2.5, 2.5)
    assert ci.low == pytest.approx(single1, abs=1e-12) and ci.high == pytest.approx(1.0, abs=1e-12)
    assert (ci.n_boot, ci.n_valid, ci.n_systems) == (n_boot, n_boot, 3)
    assert (ci.method, ci.resample, ci.confidence) == (method, "documents", 0.95)


def _enumerate(auto, human, method, resample):
    """The correlations of all equally likely bootstrap samples of a tiny matrix, by brute force (NaN: undefined)."""
    n_sys, n_docs = auto.shape
    every_row, every_col = list(itertools.product(range(n_sys), repeat=n_sys)), \
        list(itertools.product(range(n_docs), repeat=n_docs))
    rows_all = [tuple(range(n_sys))] if resample == "documents" else every_row
    cols_all = [tuple(range(n_docs))] if resample == "systems" else every_col
    outcomes = []
    for rows in rows_all:
        for cols in cols_all:
            a = np.nanmean(auto[list(rows)][:, list(cols)], axis=1)
            h = np.nanmean(human[list(rows)][:, list(cols)], axis=1)
            outcomes.append(scipy_corr(a, h, method))
    return np.array(outcomes)


@pytest.mark.parametrize("resample", ["systems", "both"])
@pytest.mark.parametrize("method", METHODS)
def test_systems_and_both_bootstrap_match_enumeration(method, resample):
    n_boot = 3000
    outcomes = _enumerate(AUTO, HUMAN, method, resample)
    defined = outcomes[np.isfinite(outcomes)]
    reps = bootstrap_replicates(AUTO, HUMAN, methods=(method,), resample=resample, n_boot=n_boot, seed=5)[method]
    valid = reps[np.isfinite(reps)]
    if resample == "systems":
        # auto system scores are (1, 2.5, 2.5): a draw of one system (3 of 27) or of systems 1 and 2 only
        # (2**3 - 2 = 6 of 27) has a constant side, so its correlation is undefined and dropped
        assert len(defined) / len(outcomes) == pytest.approx(18 / 27)
    assert len(valid) / n_boot == pytest.approx(len(defined) / len(outcomes), abs=0.03)
    assert matches_any(valid, set(np.round(defined, 12))).all()
    assert np.mean(valid) == pytest.approx(np.mean(defined), abs=0.03)
    ci = bootstrap_correlation(AUTO, HUMAN, method=method, resample=resample, n_boot=n_boot, seed=5)
    assert ci.n_valid == len(valid)
    assert ci.low == pytest.approx(np.quantile(valid, 0.025)) and ci.high == pytest.approx(np.quantile(valid, 0.975))


def test_bootstrap_weights_zero_weight_document_never_counts():
    weights = np.array([[1.0, 0.0], [1.0, 0.0], [1.0, 0.0]])  # auto scores come from document 0 only
    n_boot = 2000
    reps = bootstrap_replicates(AUTO, HUMAN, methods=("pearson",), resample="documents", n_boot=n_boot, seed=2,
                                auto_weights=weights)["pearson"]
    valid = reps[np.isfinite(reps)]
    # drawing document 1 twice (probability 1/4) leaves every auto score with zero weight: undefined
    assert len(valid) / n_boot == pytest.approx(0.75, abs=0.03)
    np.testing.assert_allclose(valid, 1.0)
    ci = bootstrap_correlation(AUTO, HUMAN, method="pearson", resample="documents", n_boot=n_boot, seed=2,
                               auto_weights=weights)
    assert ci.estimate == pytest.approx(1.0) and ci.low == pytest.approx(1.0) and ci.n_valid == len(valid)


def test_bootstrap_weights_change_the_mixed_outcome():
    weights = np.array([[3.0, 1.0], [3.0, 1.0], [3.0, 1.0]])
    mixed = scipy_corr([1.0, 2.25, 2.75], [1, 2, 3], "pearson")  # 3:1 mean of (1,2,3) and (1,3,2)
    reps = bootstrap_replicates(AUTO, HUMAN, methods=("pearson",), resample="documents", n_boot=2000, seed=4,
                                auto_weights=weights, human_weights=weights)["pearson"]
    assert matches_any(reps, (1.0, 0.5, mixed)).all()
    assert np.mean(np.isclose(reps, mixed)) == pytest.approx(0.5, abs=0.04)
    ci = bootstrap_correlation(AUTO, HUMAN, method="pearson", resample="documents", seed=4, auto_weights=weights)
    assert ci.estimate == pytest.approx(mixed)


# ------------------------------------------------------------------------------------------ bootstrap: NaN, seed
def test_bootstrap_nan_cells_and_dropped_system():
    rng = np.random.default_rng(9)
    auto = rng.random((6, 8))
    human = auto + 0.3 * rng.random((6, 8))
    auto[0, :3] = nan  # skipped cells
    human[2] = nan  # a system with no human score: left out like correlate drops it
    row = correlation_with_ci(auto, human, resample="both", n_boot=300, seed=1)
    expected = correlate(system_scores(auto), system_scores(human))
    assert row["n"] == 5 and row["dropped"] == [2] and expected.dropped == (2,)
    for method in METHODS:
        assert row[method] == getattr(expected, method)
        assert row[f"{method}_p"] == getattr(expected, f"{method}_p")
        assert row[f"{method}_low"] <= row[f"{method}_high"]
        assert 0 < row[f"{method}_n_valid"] <= 300
    for resample in RESAMPLES:
        reps = bootstrap_replicates(auto, human, resample=resample, n_boot=200, seed=3)
        assert set(reps) == set(METHODS) and all(len(v) == 200 for v in reps.values())


def test_sparse_documents_bootstrap_keeps_systems_only_with_drop_system():
    # system 0 has a single document: under "drop-system" a sample that misses it correlates the other 3 systems;
    # under the default (SacreROUGE's rule) that sample is discarded
    auto = np.array([[1.0, nan, nan], [2.0, 2.5, 3.0], [3.0, 3.5, 4.5], [5.0, 4.0, 6.0]])
    human = 2 * auto + np.array([[0.1], [0.0], [0.0], [-1.0]])
    kwargs = dict(methods=("pearson",), resample="documents", n_boot=500, seed=0)
    kept = bootstrap_replicates(auto, human, missing_system="drop-system", **kwargs)["pearson"]
    assert np.isfinite(kept).all()
    discarded = bootstrap_replicates(auto, human, **kwargs)["pearson"]
    # P(document 0 never drawn in 3 draws) = (2/3)^3 = 8/27
    assert np.mean(np.isnan(discarded)) == pytest.approx(8 / 27, abs=0.05)
    np.testing.assert_array_equal(discarded[np.isfinite(discarded)], kept[np.isfinite(discarded)])


def _literal_bootstrap(auto, human, draws, method, missing_system):
    """SacreROUGE's ``bootstrap_ci`` with ``system_level_corr``, written out: per sample, the matrices indexed by
    the drawn rows and columns, ``nanmean`` system scores, scipy's correlation, a sample with a NaN correlation
    skipped, ``np.percentile``. With ``missing_system="drop-system"``: systems with a NaN score are dropped first."""
    samples, incomplete = [], 0
    for rows, cols in draws:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Mean of empty slice" for a system without a drawn value
            x = np.nanmean(auto[rows][:, cols], axis=1)
            y = np.nanmean(human[rows][:, cols], axis=1)
        finite = np.isfinite(x) & np.isfinite(y)
        incomplete += not finite.all()
        if missing_system == "drop-system":
            x, y = x[finite], y[finite]
        r = scipy_corr(x, y, method) if np.isfinite(x).all() and np.isfinite(y).all() else nan
        if not math.isnan(r):
            samples.append(r)
    return np.percentile(samples, 2.5), np.percentile(samples, 97.5), len(samples), incomplete


def _bootstrap_draws(n_systems, n_docs, n_boot, resample, seed):
    """The rows and columns ``bootstrap_replicates`` draws for a small matrix (one chunk of documents)."""
    rng = np.random.default_rng(seed)
    every_row = np.tile(np.arange(n_systems), (n_boot, 1))
    every_col = np.tile(np.arange(n_docs), (n_boot, 1))
    rows = rng.integers(0, n_systems, size=(n_boot, n_systems)) if resample != "documents" else every_row
    cols = rng.integers(0, n_docs, size=(n_boot, n_docs)) if resample != "systems" else every_col
    return list(zip(rows, cols, strict=True))


def _sparse_system_data(seed: int = 7):
    """8 systems x 12 documents, human = auto + noise; system 0 has values on 2 documents only."""
    rng = np.random.default_rng(seed)
    level = np.linspace(0.0, 1.0, 8)[:, None]
    auto = level + 0.6 * rng.normal(size=(8, 12))
    human = level + 0.6 * rng.normal(size=(8, 12))
    auto[0, 2:] = nan
    human[0, 2:] = nan
    return auto, human


@pytest.mark.parametrize("missing_system", ["discard-sample", "drop-system"])
@pytest.mark.parametrize("resample", ["documents", "both"])
@pytest.mark.parametrize("method", METHODS)
def test_bootstrap_equals_sacrerouge_loop_on_a_sparse_system(method, resample, missing_system):
    auto, human = _sparse_system_data()
    n_boot = 400
    ci = bootstrap_correlation(auto, human, method=method, resample=resample, n_boot=n_boot, seed=3,
                               missing_system=missing_system)
    low, high, n_valid, incomplete = _literal_bootstrap(
        auto, human, _bootstrap_draws(8, 12, n_boot, resample, 3), method, missing_system
    )
    assert (ci.low, ci.high) == (pytest.approx(low, abs=1e-12), pytest.approx(high, abs=1e-12))
    assert ci.n_valid == n_valid and ci.n_incomplete == incomplete > 20
    assert ci.n_discarded == (incomplete if missing_system == "discard-sample" else 0)
    assert ci.missing_system == missing_system


def test_bootstrap_default_discards_samples_missing_a_system():
    """The audit's case: with one sparse system, the default interval is SacreROUGE's, and it differs from the
    interval that drops the system from the sample."""
    auto, human = _sparse_system_data()
    default = bootstrap_correlation(auto, human, method="pearson", resample="documents", n_boot=1000, seed=1)
    dropped = bootstrap_correlation(auto, human, method="pearson", resample="documents", n_boot=1000, seed=1,
                                    missing_system="drop-system")
    assert default.missing_system == "discard-sample" and default.n_discarded == default.n_incomplete
    # P(neither of the 2 documents drawn in 12 draws) = (10/12)^12 = 0.112
    assert default.n_discarded / 1000 == pytest.approx((10 / 12) ** 12, abs=0.03)
    assert default.n_valid == 1000 - default.n_discarded and dropped.n_valid == 1000
    assert (default.low, default.high) != (dropped.low, dropped.high)
    row = correlation_with_ci(auto, human, resample="documents", n_boot=1000, seed=1)
    assert (row["pearson_low"], row["pearson_high"]) == (default.low, default.high)
    assert row["n_discarded"] == row["n_incomplete"] == default.n_discarded
    assert row["missing_system"] == "discard-sample"
    with pytest.raises(ValueError, match="missing_system must be one of discard-sample, drop-system"):
        bootstrap_correlation(auto, human, method="pearson", resample="documents", seed=1, missing_system="keep")


def test_bootstrap_systems_resampling_never_discards():
    auto, human = _sparse_system_data()
    ci = bootstrap_correlation(auto, human, method="spearman", resample="systems", n_boot=300, seed=2)
    assert ci.n_incomplete == ci.n_discarded == 0


def test_too_few_systems_gives_nan_interval_with_note():
    ci = bootstrap_correlation([[1.0], [2.0]], [[1.0], [3.0]], method="pearson", resample="systems", seed=0,
                               n_boot=50)
    assert math.isnan(ci.estimate) and math.isnan(ci.low) and math.isnan(ci.high) and ci.n_valid == 0
    assert ci.note


@pytest.mark.parametrize("resample", RESAMPLES)
def test_bootstrap_deterministic_by_seed(resample):
    rng = np.random.default_rng(1)
    auto, human = rng.random((7, 30)), rng.random((7, 30))
    first = bootstrap_replicates(auto, human, resample=resample, n_boot=200, seed=42)
    again = bootstrap_replicates(auto, human, resample=resample, n_boot=200, seed=42)
    other = bootstrap_replicates(auto, human, resample=resample, n_boot=200, seed=43)
    for method in METHODS:
        np.testing.assert_array_equal(first[method], again[method])
        assert not np.array_equal(first[method], other[method])


def test_correlation_with_ci_matches_bootstrap_correlation_and_is_json_safe():
    rng = np.random.default_rng(4)
    base = rng.random((8, 1))
    auto, human = base + 0.2 * rng.random((8, 20)), base + 0.2 * rng.random((8, 20))
    row = correlation_with_ci(auto, human, resample="documents", n_boot=400, confidence=0.9, seed=8)
    for method in METHODS:
        ci = bootstrap_correlation(auto, human, method=method, resample="documents", n_boot=400, confidence=0.9,
                                   seed=8)
        assert (row[method], row[f"{method}_low"], row[f"{method}_high"], row[f"{method}_n_valid"]) == \
            (ci.estimate, ci.low, ci.high, ci.n_valid)
        assert row[f"{method}_size"] == size_label(ci.estimate)
        assert row[f"{method}_label"] == strength_label(ci.estimate, row[f"{method}_p"])
    assert (row["resample"], row["n_boot"], row["confidence"], row["n"]) == ("documents", 400, 0.9, 8)
    json.dumps(row)  # plain Python values only
    assert all(type(row[k]) is float for k in ("pearson", "pearson_low", "kendall_high", "spearman_p"))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [({"method": "tau"}, "method"), ({"resample": "rows"}, "resample"), ({"n_boot": 0}, "n_boot"),
     ({"confidence": 1.0}, "confidence")],
)
def test_bootstrap_rejects_bad_arguments(kwargs, message):
    args = {"method": "pearson", "resample": "systems", "seed": 0, **kwargs}
    with pytest.raises(ValueError, match=message):
        bootstrap_correlation(AUTO, HUMAN, **args)


def test_bootstrap_rejects_mismatched_matrices():
    with pytest.raises(ValueError, match="same systems and documents"):
        bootstrap_correlation(AUTO, HUMAN[:, :1], method="pearson", resample="systems", seed=0)


# ----------------------------------------------------------------------------------------- bootstrap: coverage
def test_pearson_systems_interval_covers_true_rho_about_95_percent():
    rho, n_systems, n_datasets = 0.6, 30, 200
    rng = np.random.default_rng(20240601)
    cov = [[1.0, rho], [rho, 1.0]]
    covered = 0
    for k in range(n_datasets):
        xy = rng.multivariate_normal([0.0, 0.0], cov, size=n_systems)
        ci = bootstrap_correlation(xy[:, :1], xy[:, 1:], method="pearson", resample="systems", n_boot=300, seed=k)
        covered += ci.low <= rho <= ci.high
    assert 0.88 <= covered / n_datasets <= 0.99


# ------------------------------------------------------------------------------------------------ permutation
def _judged(seed: int, n_systems: int = 10, n_docs: int = 40):
    rng = np.random.default_rng(seed)
    level = rng.normal(size=(n_systems, 1))
    human = level + 0.5 * rng.normal(size=(n_systems, n_docs))
    return rng, human


@pytest.mark.parametrize("resample", RESAMPLES)
@pytest.mark.parametrize("method", METHODS)
def test_identical_measures_are_not_significant(method, resample):
    rng, human = _judged(0)
    auto = human + rng.normal(size=human.shape)
    result = permutation_test(auto, auto.copy(), human, method=method, resample=resample, n_permutations=300, seed=1)
    assert isinstance(result, PermutationResult)
    assert result.delta == 0.0 and result.p_value == 1.0 and not result.significant()
    assert result.n_valid == 300


@pytest.mark.parametrize("resample", RESAMPLES)
@pytest.mark.parametrize("method", METHODS)
def test_human_plus_noise_beats_pure_noise(method, resample):
    # 15 systems: with 10, swapping whole systems (2**10 patterns) leaves rank correlations little power when the
    # noise measure correlates 0.3-0.4 with H by chance (seen for 1 seed in 10)
    rng, human = _judged(1, n_systems=15)
    good = human + 0.1 * rng.normal(size=human.shape)
    noise = 100.0 * rng.normal(size=human.shape)  # another scale: standardisation makes the swap meaningful
    result = permutation_test(good, noise, human, method=method, resample=resample, n_permutations=500, seed=2)
    assert result.delta > 0.3 and result.p_value < 0.05 and result.significant()
    assert result.r_a == pytest.approx(getattr(correlate(system_scores(good), system_scores(human)), method))
    reverse = permutation_test(noise, good, human, method=method, resample=resample, n_permutations=500, seed=2)
    assert reverse.delta == pytest.approx(-result.delta) and reverse.p_value > 0.9  # one-sided


@pytest.mark.parametrize(("resample", "expected"), [("systems", 0.25), ("both", 0.25), ("documents", 0.5)])
def test_permutation_p_value_enumerated(resample, expected):
    # One document, systems (1,2,3): A = H (r = 1), B reversed (r = -1), delta = 2. Swapping system 2 changes
    # nothing (A and B agree there, also after z-scoring), so 2 of the 8 per-system swap patterns reproduce
    # delta = 2: p -> 1/4. Per document there is one coin: p -> 1/2.
    human = np.array([[1.0], [2.0], [3.0]])
    a, b = human.copy(), human[::-1].copy()
    n = 4000
    result = permutation_test(a, b, human, method="pearson", resample=resample, n_permutations=n, seed=3)
    assert result.delta == pytest.approx(2.0)
    assert result.p_value == pytest.approx(expected, abs=0.03)
    assert result.p_value >= 1 / (n + 1)


def test_permutation_p_value_formula_with_one_permutation():
    rng, human = _judged(2, n_docs=10)
    auto_a, auto_b = human + rng.normal(size=human.shape), rng.normal(size=human.shape)
    result = permutation_test(auto_a, auto_b, human, method="pearson", resample="both", n_permutations=1, seed=0)
    assert result.p_value in (0.5, 1.0)


def test_permutation_size_under_exchangeable_measures():
    rejections = 0
    n_datasets = 60
    for k in range(n_datasets):
        rng, human = _judged(100 + k, n_systems=8, n_docs=20)
        auto_a = human + rng.normal(size=human.shape)
        auto_b = human + rng.normal(size=human.shape)
        result = permutation_test(auto_a, auto_b, human, method="pearson", resample="both", n_permutations=200,
                                  seed=k)
        rejections += result.p_value < 0.05
    assert rejections / n_datasets <= 0.15


def test_permutation_standardisation_makes_scale_irrelevant():
    rng, human = _judged(3, n_docs=20)
    auto_a, auto_b = human + rng.normal(size=human.shape), human + 2 * rng.normal(size=human.shape)
    plain = permutation_test(auto_a, auto_b, human, method="spearman", resample="both", n_permutations=400, seed=5)
    scaled = permutation_test(auto_a, 1000 * auto_b + 7, human, method="spearman", resample="both",
                              n_permutations=400, seed=5)
    assert scaled.delta == pytest.approx(plain.delta) and scaled.p_value == plain.p_value
    raw = permutation_test(auto_a, auto_b, human, method="spearman", resample="both", n_permutations=400, seed=5,
                           standardize=False)
    assert raw.delta == plain.delta and not raw.standardized


def test_permutation_weights_and_nan():
    rng, human = _judged(4, n_systems=6, n_docs=12)
    auto_a, auto_b = human + 0.1 * rng.normal(size=human.shape), rng.normal(size=human.shape)
    auto_a[0, :6] = nan
    auto_b[1, 3] = nan
    human[5] = nan  # left out: no human score
    weights = rng.integers(1, 4, size=human.shape).astype(float)
    result = permutation_test(auto_a, auto_b, human, method="kendall", resample="both", n_permutations=300, seed=6,
                              a_weights=weights, b_weights=weights, human_weights=weights)
    sa, sb, sh = (system_scores(m, weights) for m in (auto_a, auto_b, human))
    assert result.n_systems == 5
    assert result.r_a == pytest.approx(stats.kendalltau(sa[:5], sh[:5]).statistic)
    assert result.r_b == pytest.approx(stats.kendalltau(sb[:5], sh[:5]).statistic)
    assert 0 < result.p_value <= 1 and result.n_valid == 300
    json.dumps(result.as_dict())


def test_permutation_undefined_delta():
    human = np.array([[1.0], [2.0], [3.0]])
    result = permutation_test(np.ones((3, 1)), human, human, method="pearson", resample="both", seed=0)
    assert math.isnan(result.delta) and math.isnan(result.p_value) and "constant" in result.note


def _literal_permutation(auto_a, auto_b, human, method, swaps, resample, alternative):
    """SacreROUGE's ``permutation_diff_test`` with ``system_level_corr``, written out: X and Y z-scored over their
    cells (``(X - nanmean) / nanstd``), delta from those, each permutation a boolean mask that swaps X and Y per
    system (rows), document (columns) or cell, ``>=`` (``abs`` of both sides when two-tailed), ``(count + 1) /
    (n + 1)``. The masks are given, so the draws can be those of ``permutation_test``. Rank correlations take
    few distinct values, so many ``delta*`` equal ``delta`` in exact arithmetic while scipy's floats differ in the
    last bit: like ``permutation_test``, ``>=`` allows 1e-12 (without it the count would follow rounding noise)."""
    x = (auto_a - np.nanmean(auto_a)) / np.nanstd(auto_a)
    y = (auto_b - np.nanmean(auto_b)) / np.nanstd(auto_b)
    z = np.nanmean(human, axis=1)

    def delta_of(xm, ym):
        d = scipy_corr(np.nanmean(xm, axis=1), z, method) - scipy_corr(np.nanmean(ym, axis=1), z, method)
        return abs(d) if alternative == "two-sided" else d

    observed = delta_of(x, y)
    count = 0
    for mask in swaps:
        cells = {"systems": mask[:, None], "documents": mask[None, :], "both": mask}[resample]
        cells = np.broadcast_to(cells, x.shape)
        count += delta_of(np.where(cells, y, x), np.where(cells, x, y)) >= observed - 1e-12
    return observed, (count + 1) / (len(swaps) + 1)


def _permutation_draws(n_systems, n_docs, n_perm, resample, seed):
    """The swap masks ``permutation_test`` draws for a small matrix (one chunk)."""
    rng = np.random.default_rng(seed)
    shape = {"systems": (n_perm, n_systems), "documents": (n_perm, n_docs), "both": (n_perm, n_systems, n_docs)}
    return list(rng.integers(0, 2, size=shape[resample], dtype=bool))


def _near_ties():
    """The audit's minimal case: H = system means 1..5; A's first three system means differ by 1e-18, which
    z-scoring merges into a tie; B = (0.2, 0.1, 0.3, 0.4, 0.5). Two identical documents per system."""
    human = np.repeat(np.arange(1.0, 6.0)[:, None], 2, axis=1)
    auto_a = np.repeat(np.array([0.0, 1e-18, 2e-18, 0.5, 1.0])[:, None], 2, axis=1)
    auto_b = np.repeat(np.array([0.2, 0.1, 0.3, 0.4, 0.5])[:, None], 2, axis=1)
    return auto_a, auto_b, human


def test_permutation_delta_comes_from_the_matrices_the_permutations_use():
    auto_a, auto_b, human = _near_ties()
    result = permutation_test(auto_a, auto_b, human, method="spearman", resample="systems", n_permutations=1000,
                              seed=0)
    # z-scored A ranks (2, 2, 2, 4, 5): Spearman 8 / sqrt(80); B ranks (2, 1, 3, 4, 5): 1 - 6 * 2 / 120 = 0.9.
    # (The raw matrices give r(A) = 1 and delta = 0.1, a value no permutation of the z-scored data produces.)
    assert result.r_a == pytest.approx(8 / math.sqrt(80), abs=1e-12)
    assert result.r_b == pytest.approx(0.9, abs=1e-12)
    assert result.delta == pytest.approx(8 / math.sqrt(80) - 0.9, abs=1e-12)
    delta, p = _literal_permutation(auto_a, auto_b, human, "spearman",
                                    _permutation_draws(5, 2, 1000, "systems", 0), "systems", "greater")
    assert result.delta == pytest.approx(delta, abs=1e-12) and result.p_value == p
    # all 32 swap patterns: the exact permutation p-value, which 1000 draws estimate
    patterns = [np.array(bits, dtype=bool) for bits in itertools.product([False, True], repeat=5)]
    _, exact = _literal_permutation(auto_a, auto_b, human, "spearman", patterns, "systems", "greater")
    exact_share = (exact * 33 - 1) / 32
    assert result.p_value == pytest.approx(exact_share, abs=0.04) and result.p_value > 0.5


@pytest.mark.parametrize("alternative", ["greater", "two-sided"])
@pytest.mark.parametrize("resample", RESAMPLES)
@pytest.mark.parametrize("method", METHODS)
def test_permutation_equals_sacrerouge_loop(method, resample, alternative):
    rng, human = _judged(11, n_systems=7, n_docs=6)
    auto_a = human + rng.normal(size=human.shape)
    auto_b = 5.0 * (human + 1.5 * rng.normal(size=human.shape)) + 3.0
    result = permutation_test(auto_a, auto_b, human, method=method, resample=resample, n_permutations=300, seed=4,
                              alternative=alternative)
    delta, p = _literal_permutation(auto_a, auto_b, human, method, _permutation_draws(7, 6, 300, resample, 4),
                                    resample, alternative)
    assert abs(result.delta) == pytest.approx(abs(delta), abs=1e-12)
    assert result.p_value == p and result.alternative == alternative and result.n_valid == 300


def test_two_sided_permutation_counts_absolute_deltas():
    rng, human = _judged(12, n_systems=12, n_docs=10)
    good, noise = human + 0.2 * rng.normal(size=human.shape), rng.normal(size=human.shape)
    kwargs = dict(method="pearson", resample="both", n_permutations=400, seed=8)
    greater = permutation_test(good, noise, human, **kwargs)
    less = permutation_test(noise, good, human, **kwargs)
    both = permutation_test(good, noise, human, alternative="two-sided", **kwargs)
    both_reversed = permutation_test(noise, good, human, alternative="two-sided", **kwargs)
    assert greater.p_value < 0.05 < less.p_value and both.p_value < 0.05
    assert both.delta == -both_reversed.delta and both.p_value == both_reversed.p_value  # symmetric in A and B
    assert both.p_value >= greater.p_value
    with pytest.raises(ValueError, match="alternative must be one of greater, two-sided"):
        permutation_test(good, noise, human, alternative="less", **kwargs)


@pytest.mark.parametrize("resample", RESAMPLES)
def test_permutation_deterministic_by_seed(resample):
    rng, human = _judged(5, n_docs=15)
    auto_a, auto_b = human + rng.normal(size=human.shape), human + rng.normal(size=human.shape)
    kwargs = {"method": "pearson", "resample": resample, "n_permutations": 300}
    assert permutation_test(auto_a, auto_b, human, seed=9, **kwargs) == \
        permutation_test(auto_a, auto_b, human, seed=9, **kwargs)


# ------------------------------------------------------------------------------------------------------ align
def test_align_intersects_systems_and_unions_documents():
    auto = (["s1", "s2", "s3"], ["d1", "d2"], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], [[1.0, 3.0], [1.0, 1.0], [1, 1]])
    human = (["s3", "s1"], ["d2", "d3"], [[0.5, 0.7], [0.1, 0.2]], None)
    systems, docs, (va, vh), (wa, wh) = align(auto, human)
    assert systems == ["s1", "s3"] and docs == ["d1", "d2", "d3"]
    np.testing.assert_array_equal(va, [[1.0, 2.0, nan], [5.0, 6.0, nan]])
    np.testing.assert_array_equal(vh, [[nan, 0.1, 0.2], [nan, 0.5, 0.7]])
    np.testing.assert_array_equal(wa, [[1.0, 3.0, 0.0], [1.0, 1.0, 0.0]])
    assert wh is None
    # each measure's system scores are unchanged by the alignment
    np.testing.assert_allclose(system_scores(va, wa), [1.75, 5.5])
    np.testing.assert_allclose(system_scores(vh), [0.15, 0.6])


def test_system_score_intervals_enumerable_case() -> None:
    """One system, documents valued 0 and 1: a 2-document resample has mean 0 (p=1/4), 1/2 (p=1/2) or 1 (p=1/4),
    so the 95% interval is [0, 1] and the score the plain mean 1/2; a constant system has a zero-width interval."""
    from metaeval.core.stats.resampling import system_score_intervals

    scores, low, high = system_score_intervals([[0.0, 1.0], [0.3, 0.3], [np.nan, np.nan]], n_boot=2000, seed=3)
    assert scores[0] == 0.5 and low[0] == 0.0 and high[0] == 1.0
    assert scores[1] == pytest.approx(0.3) and low[1] == pytest.approx(0.3) and high[1] == pytest.approx(0.3)
    assert np.isnan(scores[2]) and np.isnan(low[2]) and np.isnan(high[2])
    again = system_score_intervals([[0.0, 1.0], [0.3, 0.3], [np.nan, np.nan]], n_boot=2000, seed=3)
    assert np.array_equal(again[1], low, equal_nan=True)
