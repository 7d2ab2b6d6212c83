"""The alternative annotator test: Benjamini-Yekutieli against statsmodels, the indicators and p-values by hand, a
plain re-implementation from the paper's description, and a simulation (a judge like the annotators passes, a
random judge fails)."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from statsmodels.stats.multitest import multipletests

from metaeval.core.judges.alt_test import EPSILONS, alt_test, alt_test_rows, by_rejections
from metaeval.core.judges.items import build_items
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable


def test_by_by_hand():
    # m = 3, H_3 = 11/6: thresholds k/3 * 0.05 * 6/11 = 0.00909.., 0.01818.., 0.02727..
    assert by_rejections([0.5, 0.001, 0.01], 0.05) == [False, True, True]
    # m = 4, H_4 = 25/12: thresholds 0.006, 0.012, 0.018, 0.024; no sorted p is below its threshold
    assert by_rejections([0.01, 0.04, 0.03, 0.2], 0.05) == [False, False, False, False]
    # step-up: a p above its own threshold is rejected when a later one passes (0.013 > 0.012 but 0.017 <= 0.018)
    assert by_rejections([0.005, 0.013, 0.017, 0.9], 0.05) == [True, True, True, False]
    assert by_rejections([], 0.05) == []


def test_by_equals_statsmodels_fdr_by():
    rng = np.random.default_rng(2)
    for _ in range(300):
        p = rng.beta(0.3, 1.0, int(rng.integers(1, 25)))
        assert by_rejections(list(p), 0.05) == list(multipletests(p, alpha=0.05, method="fdr_by")[0])


def test_indicators_and_p_values_by_hand():
    # 3 annotators label 4 instances; the judge says x everywhere
    people = {"P": {1: "x", 2: "x", 3: "y", 4: "x"},
              "Q": {1: "x", 2: "y", 3: "y", 4: "x"},
              "R": {1: "y", 2: "y", 3: "y", 4: "x"}}
    judge = {1: "x", 2: "x", 3: "x", 4: "x"}
    result = alt_test(judge, people, epsilon=0.1, min_items=2)
    by_name = {a.annotator: a for a in result.annotators}
    # P left out: instance 1 others x, y: S(judge) 1/2 = S(P) -> both win; 2 others y, y: 0 = 0 -> both;
    # 3 others y, y: judge 0 < P 1 -> human only; 4 others x, x: 1 = 1 -> both. W_f = 1,1,0,1, W_h = 1,1,1,1
    assert by_name["P"].judge_advantage == 0.75 and by_name["P"].human_advantage == 1.0
    d = np.array([0.0, 0.0, 1.0, 0.0])
    assert by_name["P"].p_value == pytest.approx(stats.ttest_1samp(d, 0.1, alternative="less").pvalue, abs=1e-15)
    # R left out: 1 others x, x: judge 1 > R 0 -> judge only (d = -1); 2 others x, y: 1/2 = 1/2; 3 y, y: human;
    # 4 x, x: both. d = -1, 0, 1, 0
    d = np.array([-1.0, 0.0, 1.0, 0.0])
    assert by_name["R"].p_value == pytest.approx(stats.ttest_1samp(d, 0.1, alternative="less").pvalue, abs=1e-15)
    assert (by_name["R"].judge_advantage, by_name["R"].human_advantage) == (0.75, 0.75)
    assert result.items == 4 and len(result.tested) == 3
    # p-values here are all far above the BY thresholds: nobody is beaten
    assert (result.rejected, result.omega, result.verdict) == (0, 0.0, "fails")
    assert result.rho == pytest.approx((0.75 + by_name["Q"].judge_advantage + 0.75) / 3)


def test_constant_differences_and_untested_annotators():
    # the judge always equals the left-out annotator's score: d = 0 everywhere, below epsilon with no variance
    people = {name: dict.fromkeys(range(5), "x") for name in "PQR"}
    result = alt_test(dict.fromkeys(range(5), "x"), people, epsilon=0.1, min_items=5)
    assert [a.p_value for a in result.annotators] == [0.0, 0.0, 0.0]
    assert (result.omega, result.verdict, result.rho) == (1.0, "passes", 1.0)
    # epsilon 0 and d = 0: no evidence (scipy gives NaN), p = 1
    assert alt_test(dict.fromkeys(range(5), "x"), people, epsilon=0.0, min_items=5).omega == 0.0
    # fewer items than min_items: reported, not tested
    untested = alt_test(dict.fromkeys(range(5), "x"), people, min_items=6)
    assert (untested.verdict, untested.omega, len(untested.annotators)) == ("untested", None, 3)
    # instances with fewer than min_people annotators or no judge label are left out
    sparse = {"P": {1: "x", 2: "x"}, "Q": {1: "x", 2: "x"}, "R": {1: "x"}}
    assert alt_test({1: "x", 2: "x"}, sparse, min_items=1).items == 1
    assert alt_test({2: "x"}, sparse, min_items=1).items == 0


def reference(judge, people, epsilon, q, min_people, min_items):
    """The procedure as the paper describes it, written out plainly (dicts and loops)."""
    holders = {}
    for person, labels in people.items():
        for i in labels:
            holders.setdefault(i, set()).add(person)
    p_values, advantages = [], []
    for person, labels in people.items():
        instances = [i for i in labels if i in judge and len(holders[i]) >= min_people]
        if len(instances) < min_items:
            continue
        d, wins = [], []
        for i in instances:
            rest = [people[o][i] for o in holders[i] if o != person]
            s_judge = np.mean([judge[i] == label for label in rest])
            s_person = np.mean([labels[i] == label for label in rest])
            d.append(float(s_person >= s_judge) - float(s_judge >= s_person))
            wins.append(float(s_judge >= s_person))
        p_values.append(stats.ttest_1samp(d, epsilon, alternative="less").pvalue)
        advantages.append(np.mean(wins))
    m = len(p_values)
    if m == 0:
        return None, None
    order = np.argsort(p_values)
    harmonic = sum(1 / k for k in range(1, m + 1))
    last = -1
    for k in range(m):
        if p_values[order[k]] <= (k + 1) / m * q / harmonic:
            last = k
    return (last + 1) / m, float(np.mean(advantages))


def simulate(rng, n_items, n_people, accuracy, judge_accuracy, labels=("a", "tie", "b"), coverage=1.0):
    truth = rng.choice(labels, n_items)

    def noisy(p):
        return {i: (truth[i] if rng.random() < p else str(rng.choice([x for x in labels if x != truth[i]])))
                for i in range(n_items) if rng.random() < coverage}

    people = {f"P{k}": noisy(accuracy) for k in range(n_people)}
    return people, noisy(judge_accuracy) if judge_accuracy is not None else {
        i: str(rng.choice(labels)) for i in range(n_items)}


def test_equals_the_plain_reference_on_random_data():
    rng = np.random.default_rng(9)
    verdicts = set()
    for _ in range(20):
        people, judge = simulate(rng, 120, int(rng.integers(3, 7)), rng.uniform(0.5, 0.9), rng.uniform(0.3, 0.95),
                                 coverage=0.9)
        ours = alt_test(judge, people, epsilon=0.15, q=0.05, min_people=3, min_items=30)
        omega, rho = reference(judge, people, 0.15, 0.05, 3, 30)
        assert omega is not None
        assert ours.omega == pytest.approx(omega, abs=1e-12)
        assert ours.rho == pytest.approx(rho, abs=1e-12)
        verdicts.add(ours.verdict)
    assert verdicts == {"passes", "fails"}


def test_simulation_a_judge_like_the_annotators_passes_a_random_judge_fails():
    # five annotators and a judge each give the true label (of a, tie, b) with probability 0.8: the judge is one
    # more annotator, so mean(d) = 0 < epsilon; with 500 items the test has the power to show it (with 200 items
    # and epsilon 0.1 it passes about two times in three: the authors' advice to simulate the sample size)
    rng = np.random.default_rng(2025)
    passed_like, passed_random = 0, 0
    for _ in range(10):
        people, like = simulate(rng, 500, 5, 0.8, 0.8)
        passed_like += alt_test(like, people, epsilon=EPSILONS["crowd"]).verdict == "passes"
        _, random_judge = simulate(rng, 500, 5, 0.8, None)
        result = alt_test(random_judge, people, epsilon=EPSILONS["crowd"])
        passed_random += result.verdict == "passes"
        assert all(a.human_advantage > a.judge_advantage for a in result.annotators)
    assert passed_like == 10 and passed_random == 0


def test_rows_per_criterion_from_judgments():
    rng = np.random.default_rng(4)
    rows = []
    line = 2
    for case in range(40):
        truth = rng.choice(["model_a", "model_b"])
        for person in ("P1", "P2", "P3"):
            winner = truth if rng.random() < 0.85 else ("model_b" if truth == "model_a" else "model_a")
            rows.append(Judgment(f"c{case}", "quality", "A", "B", winner, line, judge=person, judge_kind="human"))
            line += 1
        for run in (1, 2):
            rows.append(Judgment(f"c{case}", "quality", "A", "B", truth, line, judge="gpt", judge_kind="llm", run=run))
            line += 1
    summary, detail = alt_test_rows(build_items(JudgmentTable(tuple(rows)), "gpt"), epsilon=0.1)
    assert [r["criterion"] for r in summary] == ["quality", "overall"]
    quality = summary[0]
    assert (quality["items"], quality["annotators"], quality["tested"]) == (40, 3, 3)
    # the judge always says the truth, each person errs 15% of the time: the judge beats them
    assert quality["verdict"] == "passes" and quality["omega"] == 1.0
    assert [d["annotator"] for d in detail if d["criterion"] == "quality"] == ["P1", "P2", "P3"]
    assert all(d["judge_advantage"] >= d["human_advantage"] for d in detail)


def test_bad_parameters():
    with pytest.raises(ValueError, match="epsilon"):
        alt_test({}, {}, epsilon=1.0)
    with pytest.raises(ValueError, match="min_people"):
        alt_test({}, {}, min_people=1)
    with pytest.raises(ValueError, match="test"):
        alt_test({}, {}, test="z")
