"""metaeval.core.perseval.studies: sec. 7.2, Tables 4 and 6: stability in the paper's and the authors' definitions."""
from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.core.perseval import studies
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.core.perseval.studies import StudyData, draw_seed, prepare_study, stability, stability_summary
from metaeval.core.stats.correlation import correlate
from tests.metaeval.core.perseval.studies.hand_case import BETA, Y, hand_value, tiny_data, two_reader_doc
from tests.reference.straightforward import AUTHORS_DISTANCES, reference_sampled_scores


def test_paper_stability_two_documents_by_hand():
    data = tiny_data()
    rows = stability(data, definition="paper", seed=11)
    assert len(rows) == 3 * 4 and {row.definition for row in rows} == {"paper"}
    full = {s: (hand_value(s, 0) + hand_value(s, 1)) / 2 for s in Y}
    sizes = {80: 2, 60: 1, 40: 1, 20: 1}  # round(p/100 * 2), at least 1
    for row in rows:
        system, level = row.system, row.level
        assert row.set_size == sizes[level] and row.documents == 2 and row.samples == 10
        assert row.full == pytest.approx(full[system], abs=1e-15)
        a, b = hand_value(system, 0), hand_value(system, 1)
        for draw, value in zip(row.draw_seeds, row.scores, strict=True):
            picked = np.random.RandomState(draw).choice(2, sizes[level], replace=True)  # the documented draw
            assert value == pytest.approx(np.mean([(a, b)[i] for i in picked]), abs=1e-15)
        assert row.value == pytest.approx(np.mean(row.scores), abs=1e-15)
        assert row.level_bias == pytest.approx(row.value - full[system], abs=1e-15)
        assert row.level_variance == pytest.approx(np.var(row.scores), abs=1e-15)
        # rank stability: a one-document set ranks like that document, rho = 0.5, tau = 1/3 against the full
        # ranking S1 > S3 > S2; a set holding both documents ranks like the full data (rho = tau = 1)
        samples = zip(row.epsilon_spearman_samples, row.epsilon_kendall_samples, row.draw_seeds, strict=True)
        for rho, tau, draw in samples:
            picked = set(np.random.RandomState(draw).choice(2, sizes[level], replace=True).tolist())
            assert (rho, tau) == pytest.approx((1.0, 1.0) if picked == {0, 1} else (0.5, 1 / 3))
        if sizes[level] == 1:
            assert row.epsilon_spearman == pytest.approx(0.5) and row.epsilon_kendall == pytest.approx(1 / 3)
    for system in Y:
        mine = [row for row in rows if row.system == system]
        level_means = [full[system], *[row.value for row in mine]]  # the full data is the 100 % level
        assert mine[0].bias == pytest.approx(np.std(level_means), abs=1e-15)
        assert mine[0].variance == pytest.approx(np.var(level_means), abs=1e-15)
        assert mine[0].delta == max(mine[0].bias, mine[0].variance)
    again = stability(data, definition="paper", seed=11)
    assert [row.scores for row in again] == [row.scores for row in rows]
    other = stability(data, definition="paper", seed=12)
    assert [row.scores for row in other] != [row.scores for row in rows]
    summary = stability_summary(rows)
    assert len(summary) == 1 and summary[0]["delta"] == max(row.delta for row in rows)
    assert summary[0]["epsilon_spearman"] == pytest.approx(0.5)


def test_paper_stability_matches_the_enumerated_resample_distribution():
    data = tiny_data()
    rows = stability(data, definition="paper", levels=(80, 40), samples=4000, seed=3)
    for row in rows:
        a, b = hand_value(row.system, 0), hand_value(row.system, 1)
        # one document: a or b with probability 1/2 each; two documents: a, (a+b)/2, b with 1/4, 1/2, 1/4
        expected_variance = (a - b) ** 2 / 4 if row.level == 40 else (a - b) ** 2 / 8
        assert row.value == pytest.approx((a + b) / 2, abs=4 * math.sqrt(expected_variance / 4000))
        assert row.level_variance == pytest.approx(expected_variance, rel=0.1)
        if row.level == 80:  # P(both documents) = 1/2: mean rho = 0.5 * 1 + 0.5 * 0.5
            assert row.epsilon_spearman == pytest.approx(0.75, abs=0.03)


def test_paper_stability_is_exact_when_documents_agree():
    docs = {
        system: [two_reader_doc("d1", y), two_reader_doc("d2", y)]
        for system, y in {"S1": 0.5, "S2": 0.4, "S3": 0.3}.items()
    }
    data = StudyData(options=RunOptions(measures=["m"]), doc_ids=["d1", "d2"], measures=["m"], hj=[], docs={"m": docs})
    for row in stability(data, definition="paper", seed=0):
        assert row.bias == pytest.approx(0, abs=1e-15) and row.variance == pytest.approx(0, abs=1e-15)
        assert row.epsilon_spearman_min == 1.0 and row.epsilon_kendall_min == 1.0


def test_authors_stability_equals_the_literal_reference(demo):
    corpus, _ = demo
    systems = ["PersonaPointer", "ProfileBARTx", "LeadLineBaseline"]
    params = Params(beta=BETA)
    data = prepare_study(corpus, RunOptions(measures=["jsd"], compat=True, systems=systems, params=params, workers=1))
    rows = stability(data, definition="authors", levels=(80, 40), samples=2, seed=5)
    assert {row.definition for row in rows} == {"authors"}
    assert [row.level for row in rows[:3]] == [100, 80, 40]
    reference: dict[tuple[float, int], dict] = {}
    for row in rows:
        for draw in row.draw_seeds:
            key = (row.level, draw)
            if key not in reference:
                reference[key] = reference_sampled_scores(
                    corpus, AUTHORS_DISTANCES["jsd"], row.level, seed=draw, systems=systems, beta=BETA
                )
    for system in systems:
        mine = [row for row in rows if row.system == system]
        assert [row.samples for row in mine] == [1, 2, 2]
        level_values = []
        for row in mine:
            expected = [reference[(row.level, draw)][system] for draw in row.draw_seeds]
            assert row.perseval_samples == pytest.approx([e["perseval"] for e in expected], abs=1e-12)
            assert row.egises_samples == pytest.approx([e["egises"] for e in expected], abs=1e-12)
            assert row.sample_rows == expected[0]["perseval_rows"] and row.rows == expected[0]["rows"]
            assert row.value == float(np.round(np.mean([e["perseval"] for e in expected]), 4))
            level_values.append(row.value)
        assert mine[0].perseval_samples[0] == pytest.approx(mine[0].full, abs=1e-12)  # 100 %: a permutation
        assert mine[0].bias == round(float(np.std(level_values)), 4)
        assert mine[0].variance == pytest.approx(float(np.var(level_values)), abs=1e-15)
        assert len({row.bias for row in mine}) == 1  # one value per (measure, system)
    # smaller samples keep fewer rows, and the draw is the documented one
    row = next(r for r in rows if r.level == 40)
    assert row.sample_rows == round(0.4 * row.rows)
    assert row.draw_seeds[0] == draw_seed(5, 40, 0)


def test_vectorised_rank_correlations_equal_correlate():
    rng = np.random.RandomState(0)
    full = np.array([0.3, 0.1, 0.4, 0.1, 0.5, 0.9])  # a tie in the full data
    samples = rng.randint(0, 4, size=(6, 40)).astype(float)  # many ties in the draws
    samples[:, 0] = 2.0  # a constant draw: undefined
    samples[2, 1] = np.nan  # a NaN: dropped pairwise
    spearman, kendall = studies.subsampling._rank_correlations(samples, full)
    for column in range(samples.shape[1]):
        expected = correlate(samples[:, column].tolist(), full.tolist())
        assert spearman[column] == pytest.approx(expected.spearman, abs=1e-12, nan_ok=True)
        assert kendall[column] == pytest.approx(expected.kendall, abs=1e-12, nan_ok=True)
    assert math.isnan(spearman[0]) and not math.isnan(spearman[1])


def test_stability_rejects_bad_arguments():
    data = tiny_data()
    with pytest.raises(ValueError):
        stability(data, definition="other", seed=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        stability(data, definition="paper", levels=(0,), seed=1)
    with pytest.raises(ValueError):
        stability(data, definition="paper", seed=-1)
    assert draw_seed(1, 80, 0) != draw_seed(1, 80, 1) != draw_seed(1, 60, 1)
