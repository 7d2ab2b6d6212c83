"""Meta-evaluation by pairs: hand-worked accuracy, acc_eq and tie calibration (ties on each side, the epsilon rule),
document level, buckets, soft pairwise accuracy; cross-checks against golden values computed by running the
reference implementation (google-research/mt-metrics-eval; ``tests/data/mtme_golden.json``, written by
``tests/data/make_mtme_golden.py`` on the inputs of ``mtme_cases``), scipy.stats.permutation_test, the project's
correlations and its bootstrap draws."""
from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy import stats

from metaeval.core.stats.correlation import correlate
from metaeval.core.stats.meta_accuracy import (
    DocumentValues,
    bucket_agreement,
    item_agreement,
    item_bootstrap,
    meta_accuracy_rows,
    pair_correlations,
    pairwise_agreement,
    system_bootstrap,
)
from metaeval.core.stats.resampling import document_draws
from metaeval.core.stats.resampling.bootstrap import _bootstrap_system_scores
from metaeval.core.stats.soft_pairwise import (
    PairedDocuments,
    one_sided_p_values,
    permutation_signs,
    soft_pairwise_accuracy,
)
from tests.metaeval.core.stats import mtme_cases

GOLDEN = mtme_cases.load_golden()
TAU = GOLDEN["tau_optimization"]


def differences(values: np.ndarray) -> np.ndarray:
    """``[P, D]``: values[i] - values[j] for the pairs i < j (no value missing)."""
    i, j = np.triu_indices(values.shape[0], 1)
    return values[i] - values[j]


def counts(result) -> tuple[int, ...]:
    return (result.concordant, result.discordant, result.ties_human, result.ties_metric, result.ties_both)


# ------------------------------------------------------------------------------------------ hand-worked cases
def test_human_ties_calibration_and_the_smallest_of_equal_maxima():
    """Systems A..E, human [5, 4, 4, 2, 2] (B = C and D = E tied), metric [13, 11, 10, 5, 3].

    pair  |dm| dh  at eps 0        pair  |dm| dh  at eps 0
    AB    2    1   C               BD    6    2   C
    AC    3    1   C               BE    8    2   C
    AD    8    3   C               CD    5    2   C
    AE    10   3   C               CE    7    2   C
    BC    1    0   T_h             DE    2    0   T_h

    accuracy = 8 / 8 (people tie BC and DE, which accuracy leaves out); acc_eq(0) = 8 / 10.
    acc_eq(1) = 9 / 10 (BC becomes tied on both sides); acc_eq(2) = 9 / 10 (AB turns T_m, -1; DE turns T_hm, +1);
    acc_eq(3) = 8 / 10 (AC turns T_m) and it only falls after. Maxima 9 / 10 at 1 and 2: the smallest, 1.
    """
    human, metric = [5, 4, 4, 2, 2], [13, 11, 10, 5, 3]
    plain = pairwise_agreement(metric, human)
    assert (plain.accuracy, plain.acc_eq, plain.epsilon, plain.pairs, plain.compared) == (1.0, 0.8, 0.0, 10, 8)
    assert counts(plain) == (8, 0, 2, 0, 0)
    assert pairwise_agreement(metric, human, epsilon=2).acc_eq == 0.9
    assert counts(pairwise_agreement(metric, human, epsilon=2)) == (7, 0, 0, 1, 2)
    assert pairwise_agreement(metric, human, epsilon=3).acc_eq == 0.8
    calibrated = pairwise_agreement(metric, human, tie_calibration=True)
    assert (calibrated.epsilon, calibrated.acc_eq, calibrated.accuracy) == (1.0, 0.9, 1.0)
    assert counts(calibrated) == (8, 0, 1, 0, 1)
    reference = TAU["hand"]["human_ties"]  # mt-metrics-eval's tau_optimization, run on this case
    assert (reference["metric"], reference["human"]) == (metric, human)
    assert reference["thresholds"] == [0, 1, 2, 3, 5, 6, 7, 8, 10] and reference["taus"][:4] == [0.8, 0.9, 0.9, 0.8]
    assert (reference["best_threshold"], reference["best_tau"]) == (calibrated.epsilon, calibrated.acc_eq)
    for threshold, tau in zip(reference["thresholds"], reference["taus"], strict=True):
        assert pairwise_agreement(metric, human, epsilon=threshold).acc_eq == pytest.approx(tau, abs=1e-15)


def test_metric_ties_and_ties_on_both_sides():
    """Human [4, 3, 3, 1], metric [9, 5, 5, 6]: AB, AC, AD concordant; BC tied on both sides (|dm| = 0: tied at
    every epsilon); BD, CD discordant. accuracy = 3 / 5 (BC has no human difference); acc_eq(0) = (3 + 1) / 6.
    acc_eq(1) = 4 / 6 too (BD and CD turn from D to T_m: no change), so calibration keeps 0; acc_eq(3) = 3 / 6."""
    human, metric = [4, 3, 3, 1], [9, 5, 5, 6]
    result = pairwise_agreement(metric, human)
    assert (result.accuracy, result.acc_eq, result.pairs, result.compared) == (3 / 5, 4 / 6, 6, 5)
    assert counts(result) == (3, 2, 0, 0, 1)
    assert counts(pairwise_agreement(metric, human, epsilon=1)) == (3, 0, 0, 2, 1)
    calibrated = pairwise_agreement(metric, human, tie_calibration=True)
    assert (calibrated.epsilon, calibrated.acc_eq) == (0.0, 4 / 6)
    # a metric tie where people differ: a disagreement for accuracy, T_m for acc_eq
    tie = pairwise_agreement([5, 5, 1], [3, 2, 1])
    assert (tie.accuracy, tie.acc_eq, counts(tie)) == (2 / 3, 2 / 3, (2, 0, 0, 1, 0))
    both = pairwise_agreement([4, 4, 1], [2, 2, 1])
    assert (both.accuracy, both.acc_eq, counts(both)) == (1.0, 1.0, (2, 0, 0, 0, 1))


def test_the_reference_tests_own_cases():
    """mt-metrics-eval's tau_optimization_test: metric [0, 2, 6, 8] against human [1, 2, 3, 4] (best 0, acc 1) and
    against [1, 1, 1, 4] (acc_eq 3/6, 3/6, 4/6, 4/6, 3/6 at 0, 2, 4, 6, 8: best 4, the smaller of 4 and 6)."""
    first = pairwise_agreement([0, 2, 6, 8], [1, 2, 3, 4], tie_calibration=True)
    assert (first.epsilon, first.acc_eq) == (0.0, 1.0)
    second = pairwise_agreement([0, 2, 6, 8], [1, 1, 1, 4], tie_calibration=True)
    assert (second.epsilon, second.acc_eq) == (4.0, 4 / 6)
    assert [pairwise_agreement([0, 2, 6, 8], [1, 1, 1, 4], epsilon=e).acc_eq for e in (0, 2, 4, 6, 8)] == [
        3 / 6, 3 / 6, 4 / 6, 4 / 6, 3 / 6]
    for name in ("reference_test_untied", "reference_test_tied"):  # the reference, run on them
        reference = TAU["hand"][name]
        ours = pairwise_agreement(reference["metric"], reference["human"], tie_calibration=True)
        assert (ours.epsilon, ours.acc_eq) == (reference["best_threshold"], reference["best_tau"])
        assert [pairwise_agreement(reference["metric"], reference["human"], epsilon=t).acc_eq
                for t in reference["thresholds"]] == pytest.approx(reference["taus"], abs=1e-15)


def test_nan_and_missing_systems_are_left_out_and_reported():
    result = pairwise_agreement([3, np.nan, 2, 1], [3, 2, np.nan, 0])
    assert (result.systems, result.pairs, result.dropped, result.accuracy) == (2, 1, (1, 2), 1.0)
    lone = pairwise_agreement([1, np.nan], [1, 2])
    assert math.isnan(lone.accuracy) and math.isnan(lone.acc_eq) and lone.pairs == 0 and "at least 2" in lone.note
    flat = pairwise_agreement([1, 2, 3], [1, 1, 1])
    assert math.isnan(flat.accuracy) and flat.acc_eq == 0.0 and "people tie every pair" in flat.note
    rows = meta_accuracy_rows("m", "hj:m", {"A": 1.0, "B": 2.0, "C": math.nan}, {"A": 1.0, "B": 3.0, "D": 2.0})
    assert rows[0]["dropped"] == "C;D" and rows[0]["pairs"] == 1 and rows[0]["systems"] == 2


def test_bad_epsilon_is_refused():
    with pytest.raises(ValueError, match="not both"):
        pairwise_agreement([1, 2], [1, 2], epsilon=1, tie_calibration=True)
    with pytest.raises(ValueError, match=">= 0"):
        pairwise_agreement([1, 2], [1, 2], epsilon=-1)


# ------------------------------------------------------------------------------------------ document level
def test_document_level_groups_by_document_then_averages():
    """Two documents (columns). d1: systems A, B, C with human [3, 2, 2], metric [6, 4, 3]: AB C (|dm| 2), AC C
    (3), BC T_h (1): accuracy 2/2, acc_eq(0) 2/3. d2: C has no value; A, B with human [2, 1], metric [2, 1]: AB C
    (|dm| 1): accuracy 1/1, acc_eq 1/1. Means: accuracy (1 + 1) / 2 = 1, acc_eq (2/3 + 1) / 2 = 5/6.
    Calibration, one epsilon for both: eps 1 ties BC (d1 -> 3/3) and AB of d2 (C -> T_m, d2 -> 0/1): mean 1/2;
    eps 0 keeps 5/6, so 0. With d2's metric [2, 0] (|dm| 2), eps 1 gives (1 + 1) / 2 = 1, the maximum."""
    human = [[3, 2], [2, 1], [2, np.nan]]
    metric = [[6, 2], [4, 1], [3, 7]]
    result = item_agreement(metric, human)
    assert (result.accuracy, result.documents, result.pairs) == (1.0, 2, 4)
    assert result.acc_eq == pytest.approx(5 / 6, abs=1e-15)
    assert counts(result) == (3, 0, 1, 0, 0)
    assert item_agreement(metric, human, tie_calibration=True).epsilon == 0.0
    metric[1][1] = 0
    calibrated = item_agreement(metric, human, tie_calibration=True)
    assert (calibrated.epsilon, calibrated.acc_eq) == (1.0, 1.0)
    assert item_agreement(metric, human, epsilon=1).acc_eq == 1.0


def test_document_level_calibration_is_the_references_average_by_item():
    """The reference's tau_optimization with rows = documents (missing values as None), stored in the golden file;
    its choice among maxima equal up to rounding is its float order's, ours is the smallest within 1e-12."""
    cases, golden = mtme_cases.document_cases(), TAU["document"]
    assert mtme_cases.checksum([a for case in cases for a in case]) == golden["inputs_sha256"]
    assert len(golden["results"]) == len(cases) == 30
    for trial, ((metric, human), reference) in enumerate(zip(cases, golden["results"], strict=True)):
        result = item_agreement(metric, human, tie_calibration=True)
        if reference is None:  # the reference divides by zero: no document with a pair
            assert result.documents == 0, trial
            continue
        thresholds, taus = reference["thresholds"], reference["taus"]
        best = max(taus)
        expected = next(t for t, v in zip(thresholds, taus, strict=True) if v >= best - 1e-12)
        assert result.epsilon == expected, trial
        assert result.acc_eq == pytest.approx(best, abs=1e-12)


def test_system_calibration_agrees_with_the_reference_on_random_ties():
    cases, golden = mtme_cases.system_cases(), TAU["system"]
    assert mtme_cases.checksum([a for case in cases for a in case]) == golden["inputs_sha256"]
    assert len(golden["results"]) == len(cases) == 200
    for trial, ((metric, human), reference) in enumerate(zip(cases, golden["results"], strict=True)):
        result = pairwise_agreement(metric, human, tie_calibration=True)
        assert (result.epsilon, result.acc_eq) == (reference["best_threshold"], reference["best_tau"]), trial


def test_accuracy_is_the_share_of_human_ordered_pairs_by_brute_force():
    rng = np.random.default_rng(3)
    for _ in range(100):
        n = rng.integers(2, 8)
        human, metric = rng.integers(0, 3, size=n), rng.integers(0, 3, size=n)
        ordered = [(i, j) for i, j in combinations(range(n), 2) if human[i] != human[j]]
        agree = sum(np.sign(metric[i] - metric[j]) == np.sign(human[i] - human[j]) for i, j in ordered)
        result = pairwise_agreement(metric, human)
        assert result.accuracy == (agree / len(ordered) if ordered else pytest.approx(math.nan, nan_ok=True))


# ------------------------------------------------------------------------------------------------ buckets
def test_buckets_by_hand():
    """Human [0, 0.01, 0.05, 0.2], metric [1, 3, 2, 4]. |dh|: AB 0.01, AC 0.05, AD 0.2, BC 0.04, BD 0.19, CD 0.15.
    Bucket [0, 0.045): AB (C), BC (D); [0.045, 0.18): AC (C), CD (C); [0.18, inf): AD (C), BD (C)."""
    buckets = bucket_agreement([1, 3, 2, 4], [0, 0.01, 0.05, 0.2], [0, 0.045, 0.18, math.inf])
    assert [(b.low, b.high) for b in buckets] == [(0, 0.045), (0.045, 0.18), (0.18, math.inf)]
    assert [b.agreement.pairs for b in buckets] == [2, 2, 2]
    assert [b.agreement.accuracy for b in buckets] == [0.5, 1.0, 1.0]
    assert [counts(b.agreement) for b in buckets] == [(1, 1, 0, 0, 0), (2, 0, 0, 0, 0), (2, 0, 0, 0, 0)]
    assert [b.agreement.systems for b in buckets] == [3, 3, 3]
    assert all(math.isnan(b.correlations["kendall"]) for b in buckets)  # fewer than 3 pairs
    wide = bucket_agreement([1, 3, 2, 4], [0, 0.01, 0.05, 0.2], [0, 0.1, 1])
    # [0, 0.1): AB (dm -2, dh -0.01), AC (-1, -0.05), BC (1, -0.04): kendall (1 + 1 - 1) / 3
    assert wide[0].agreement.pairs == 3 and wide[0].correlations["kendall"] == pytest.approx(1 / 3)
    dm, dh = np.array([-2, -1, 1]), np.array([0, 0, 0.01]) - np.array([0.01, 0.05, 0.05])
    assert wide[0].correlations["pearson"] == pytest.approx((dm @ dh) / math.sqrt((dm @ dm) * (dh @ dh)))


def test_pair_correlations_over_all_pairs_are_the_projects_correlations():
    rng = np.random.default_rng(8)
    for _ in range(50):
        n = rng.integers(3, 12)
        x, y = rng.integers(0, 5, size=n).astype(float), rng.normal(size=n)
        if len(set(x)) < 2:
            continue
        ours, theirs = pair_correlations(x, y), correlate(x, y)
        for method in ("pearson", "spearman", "kendall"):
            assert ours[method] == pytest.approx(getattr(theirs, method), abs=1e-12)
    single = bucket_agreement([1, 2, 3, 4], [1, 2, 3, 4], [0, math.inf])
    assert single[0].correlations == pytest.approx(pair_correlations([1, 2, 3, 4], [1, 2, 3, 4]))


def test_bad_edges_are_refused():
    for edges in ([0], [0, 0], [0.1, 0.05], [-1, 1], [0, math.inf, 5]):
        with pytest.raises(ValueError, match="bucket edges"):
            bucket_agreement([1, 2, 3], [1, 2, 3], edges)


# --------------------------------------------------------------------------------------------- soft pairwise
def test_spa_by_hand_exact():
    """Three systems, two documents: 2^2 = 4 <= K, so every sign vector is used and p = #{T* >= T} / 4.

    human A [3, 3], B [1, 2], C [1, 1]: AB diffs (2, 1), T 3, T* in {3, 1, -1, -3}: p 1/4; AC (2, 2): T* in
    {4, 0, 0, -4}: p 1/4; BC (0, 1): T* in {1, -1, 1, -1}: p 2/4.
    metric A [1, 0], B [0, 1], C [2, 2]: AB (1, -1), T 0, T* in {0, 2, -2, 0}: p 3/4; AC (-1, -2), T -3: p 4/4;
    BC (-2, -1), T -3: p 4/4. SPA = mean(1 - 1/2, 1 - 3/4, 1 - 1/2) = 5/12."""
    human = [[3, 3], [1, 2], [1, 1]]
    metric = [[1, 0], [0, 1], [2, 2]]
    result = soft_pairwise_accuracy(metric, human, n_permutations=4, seed=0)
    assert result.exact and result.n_permutations == 4
    assert result.p_human == (0.25, 0.25, 0.5) and result.p_metric == (0.75, 1.0, 1.0)
    assert result.spa == pytest.approx(5 / 12) and result.pairs == 3 and result.documents == (2, 2, 2)


def test_randomised_p_values_count_the_observed_assignment():
    diffs = np.array([[2.0, 1.0]])
    signs = np.array([[1, 1], [1, -1], [-1, 1], [1, 1], [-1, -1]], dtype=float)  # T* 3, 1, -1, 3, -3; T = 3
    assert one_sided_p_values(diffs, signs, exact=False)[0] == (1 + 2) / (1 + 5)
    assert one_sided_p_values(diffs, signs, exact=True)[0] == 2 / 5


def test_exact_p_values_are_scipys_exact_permutation_test():
    rng = np.random.default_rng(2)
    values = rng.integers(0, 5, size=(4, 8)).astype(float)
    signs, exact = permutation_signs(8, 256, seed=0)
    assert exact and signs.shape == (256, 8)
    ours = one_sided_p_values(differences(values), signs, exact)
    for k, (i, j) in enumerate(combinations(range(4), 2)):
        theirs = stats.permutation_test(
            (values[i], values[j]), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
            alternative="greater", n_resamples=np.inf).pvalue
        assert ours[k] == pytest.approx(theirs, abs=1e-12)


def test_randomised_p_values_agree_with_scipys_within_monte_carlo_error():
    rng = np.random.default_rng(4)
    values = rng.normal(size=(3, 30)) + np.array([[0.3], [0.0], [0.1]])
    signs, exact = permutation_signs(30, 20000, seed=1)
    assert not exact
    ours = one_sided_p_values(differences(values), signs, exact)
    for k, (i, j) in enumerate(combinations(range(3), 2)):
        theirs = stats.permutation_test(
            (values[i], values[j]), lambda x, y, axis: np.mean(x - y, axis=axis), permutation_type="samples",
            alternative="greater", n_resamples=20000, random_state=7).pvalue
        assert abs(ours[k] - theirs) < 5 * math.sqrt(2 * theirs * (1 - theirs) / 20000) + 1e-4


def test_spa_with_the_reference_mask_is_the_references_up_to_its_p_value_rule():
    """The reference's pce.compute_pairwise_p_values (1000 permutations, its seed 4) and compute_one_minus_pce, run
    on these matrices (golden file, with the -1/+1 mask it drew). With that mask our counts equal the reference's:
    p = (1 + c) / (1 + K) against its c / K, hence 1 - SPA = (1 - SPA_reference) * K / (K + 1)."""
    golden = GOLDEN["pce"]
    metric, human = mtme_cases.spa_case()
    assert mtme_cases.checksum([metric, human]) == golden["inputs_sha256"]
    mask = mtme_cases.unpack_signs(golden["mask"])
    k = golden["num_permutations"]
    assert mask.shape == (k, 12) == (1000, 12)
    paired = PairedDocuments.of(metric, human)
    ours = float(paired.spa(mask, exact=False)[0])
    p_human, p_metric = (p[:, 0] for p in paired.p_values(mask, exact=False)[:2])
    ref_human, ref_metric = np.array(golden["p_human"]), np.array(golden["p_metric"])
    assert len(ref_human) == len(ref_metric) == 10  # the upper triangle of 5 systems
    assert p_human == pytest.approx((1 + ref_human * k) / (1 + k), abs=1e-12)
    assert p_metric == pytest.approx((1 + ref_metric * k) / (1 + k), abs=1e-12)
    assert 1 - ours == pytest.approx((1 - golden["one_minus_pce"]) * k / (k + 1), abs=1e-12)


def test_complete_data_take_per_system_sums_with_the_same_p_values():
    rng = np.random.default_rng(9)
    human = rng.integers(0, 5, size=(6, 40)) / 4  # many exact ties between T* and T
    metric = rng.normal(size=(6, 40))
    signs, exact = permutation_signs(40, 500, seed=2)
    paired = PairedDocuments.of(metric, human)
    assert paired.usable.all()
    p_human, p_metric, counted = paired.p_values(signs, exact)
    assert counted.all()
    assert p_human[:, 0] == pytest.approx(one_sided_p_values(differences(human), signs, exact), abs=0)
    assert p_metric[:, 0] == pytest.approx(one_sided_p_values(differences(metric), signs, exact), abs=0)
    cols = np.random.default_rng(1).integers(0, 40, size=(7, 40))
    drawn = paired.p_values(signs, exact, cols)[0]
    for k in range(7):
        assert drawn[:, k] == pytest.approx(one_sided_p_values(differences(human[:, cols[k]]), signs, exact), abs=0)


def test_spa_uses_only_the_documents_all_four_values_share():
    human = np.array([[3.0, 1.0, np.nan], [1.0, 2.0, 5.0], [0.0, 0.0, 1.0]])
    metric = np.array([[2.0, 2.0, 9.0], [1.0, 1.0, 1.0], [np.nan, 0.0, 0.0]])
    result = soft_pairwise_accuracy(metric, human, n_permutations=100, seed=0)
    assert result.documents == (2, 1, 2)  # AB: d1, d2; AC: d2; BC: d2, d3
    alone = soft_pairwise_accuracy(metric[[0, 2]][:, [1]], human[[0, 2]][:, [1]], n_permutations=100, seed=0)
    assert result.p_human[1] == alone.p_human[0] and result.p_metric[1] == alone.p_metric[0]
    apart = soft_pairwise_accuracy([[1.0, np.nan], [np.nan, 1.0]], [[1.0, 2.0], [2.0, 1.0]], seed=0)
    assert math.isnan(apart.spa) and apart.pairs == 0 and "no pair" in apart.note


# ----------------------------------------------------------------------------------------------- bootstrap
def _matrices(seed: int, systems: int = 5, documents: int = 9) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    quality = rng.normal(size=(systems, 1))
    human = np.round(quality + rng.normal(scale=0.8, size=(systems, documents)), 1)
    metric = np.round(quality + rng.normal(scale=0.8, size=(systems, documents)), 1)
    human[0, 3] = np.nan
    return metric, human


@pytest.mark.parametrize("calibrate", [False, True])
def test_system_bootstrap_recomputes_every_statistic_on_resamplings_draws(calibrate):
    metric, human = _matrices(1)
    seed, n_boot = 12, 60
    got = system_bootstrap(metric, human, n_boot=n_boot, seed=seed, tie_calibration=calibrate, n_permutations=64)
    num = [(np.nan_to_num(x), np.isfinite(x).astype(float)) for x in (metric, human)]
    ms, hs = _bootstrap_system_scores(num, "documents", n_boot, np.random.default_rng(seed))
    (_, cols), = document_draws(np.random.default_rng(seed), n_boot, metric.shape[1])
    signs, exact = permutation_signs(metric.shape[1], 64, np.random.SeedSequence(seed).spawn(1)[0])
    accuracy, acc_eq, spa = [], [], []
    for k in range(n_boot):
        if not (np.isfinite(ms[k]).all() and np.isfinite(hs[k]).all()):
            continue
        result = pairwise_agreement(ms[k], hs[k], tie_calibration=calibrate)
        accuracy.append(result.accuracy)
        acc_eq.append(result.acc_eq)
        spa.append(float(PairedDocuments.of(metric[:, cols[k]], human[:, cols[k]]).spa(signs, exact)[0]))
    for name, values in (("accuracy", accuracy), ("acc_eq", acc_eq), ("spa", spa)):
        low, high = np.quantile(values, [0.025, 0.975])
        assert got[name][:2] == pytest.approx((low, high), abs=1e-12) and got[name][2] == len(values)


@pytest.mark.parametrize("calibrate", [False, True])
def test_item_bootstrap_is_the_document_level_statistic_of_each_sample(calibrate):
    metric, human = _matrices(2, systems=4, documents=7)
    human[:, 5] = np.nan  # a document without pairs
    got = item_bootstrap(metric, human, n_boot=40, seed=3, tie_calibration=calibrate)
    (_, cols), = document_draws(np.random.default_rng(3), 40, metric.shape[1])
    samples = [item_agreement(metric[:, c], human[:, c], tie_calibration=calibrate) for c in cols]
    for name in ("accuracy", "acc_eq"):
        values = [getattr(s, name) for s in samples]
        low, high = np.nanquantile(values, [0.025, 0.975])
        assert got[name][:2] == pytest.approx((low, high), abs=1e-12)


def test_rows_with_documents_check_that_they_average_to_the_system_values():
    metric, human = _matrices(4, systems=4, documents=6)
    names = ["A", "B", "C", "D"]

    def table(matrix: np.ndarray) -> DocumentValues:
        return DocumentValues.of({(s, f"d{d}"): matrix[k, d] for k, s in enumerate(names)
                                  for d in range(matrix.shape[1])})

    means = {label: dict(zip(names, np.nanmean(x, axis=1), strict=True)) for label, x in (("m", metric),
                                                                                          ("h", human))}
    rows = meta_accuracy_rows("m", "h", means["m"], means["h"], metric_documents=table(metric),
                              human_documents=table(human), tie_calibration=True, buckets=[0, 0.5, math.inf],
                              n_boot=30, n_permutations=50, seed=5)
    assert [(r["level"], r.get("bucket_low")) for r in rows] == [
        ("system", None), ("system", 0.0), ("system", 0.5), ("document", None)]
    system, document = rows[0], rows[-1]
    assert system["documents"] == 6 and system["spa"] == soft_pairwise_accuracy(
        metric, human, n_permutations=50, seed=np.random.SeedSequence(5).spawn(1)[0]).spa
    assert system["acc_eq_low"] <= system["acc_eq_high"] and system["n_valid"] == 30
    assert document["acc_eq"] == item_agreement(metric, human, tie_calibration=True).acc_eq
    assert rows[1]["epsilon"] == rows[2]["epsilon"] == system["epsilon"]
    means["m"]["B"] += 0.01
    with pytest.raises(ValueError, match="do not average to its system value for B"):
        meta_accuracy_rows("m", "h", means["m"], means["h"], metric_documents=table(metric),
                           human_documents=table(human), n_boot=0)
    with pytest.raises(ValueError, match=r"no per-document values of m for system\(s\) E"):
        meta_accuracy_rows("m", "h", {**means["m"], "E": 1.0}, {**means["h"], "E": 1.0},
                           metric_documents=table(metric), human_documents=table(human), n_boot=0)
