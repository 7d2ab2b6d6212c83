"""The preference simulator (conventions sec. 27.5): the stopping rule's error rate under the null, coverage,
seeding, the uniform design's balance, and what adaptive assignment saves."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from metaeval.core.io.corpus import DataError
from metaeval.core.planning.confseq import parse_rule
from metaeval.core.planning.simulate import Settings, Truth, read_truth, simulate

ROOT = Path(__file__).resolve().parents[4]
AUPEL = ROOT / "fixtures" / "planning" / "aupel_gaps.csv"


def test_error_rate_under_the_null_stays_below_alpha_when_looking_after_every_set() -> None:
    null = Truth(("A", "B"), (1000.0, 1000.0))
    common = {"rule": parse_rule("separated"), "repetitions": 1000, "seed": 3, "tie_rate": 0.1, "batch": 10,
              "max_judgments": 3000}
    valid = simulate(null, Settings(policy="uniform", **common))  # type: ignore[arg-type]
    assert valid.stopped.mean() <= 0.05  # every stop is wrong here: A and B are equal
    assert (valid.false_separation == valid.stopped).all()
    assert valid.judgments[~valid.stopped].tolist() == [3000] * int((~valid.stopped).sum())
    naive = simulate(null, Settings(policy="uniform", intervals="fixed", **common))  # type: ignore[arg-type]
    assert naive.stopped.mean() > 0.2  # ordinary intervals checked again and again


def test_seeded_and_the_uniform_design_is_balanced() -> None:
    truth = read_truth(AUPEL)
    settings = Settings(policy="uniform", rule=parse_rule("none"), repetitions=20, seed=9, batch=50,
                        max_judgments=900, tie_rate=0.04)
    first = simulate(truth, settings)
    assert first.summary() == simulate(truth, settings).summary()
    assert (first.pair_counts == 20).all()  # 900 judgments over 45 pairs, every pair 20 times in every study
    assert (first.pair_scores <= first.pair_counts).all()
    other = simulate(truth, Settings(**{**settings.__dict__, "seed": 10}))
    assert not np.array_equal(first.pair_scores, other.pair_scores)


def test_width_rule_stops_with_covering_narrow_intervals() -> None:
    truth = read_truth(AUPEL)
    result = simulate(truth, Settings(policy="adaptive", rule=parse_rule("width:0.3"), repetitions=100, seed=4,
                                      batch=100, tie_rate=0.04))
    assert result.stopped.all() and (result.judgments < 100_000).all()
    assert result.covered_all.mean() >= 0.95
    assert result.false_separation.mean() <= 0.05
    rows = result.system_rows()
    assert [row["true_rank"] for row in rows] == list(range(1, 11))
    assert all(row["rank_best_mean"] <= row["true_rank"] + 1 for row in rows)  # type: ignore[operator]
    assert all(row["range_covers_true_rank"] >= 0.95 for row in rows)  # type: ignore[operator]


def test_adjacent_focus_needs_fewer_judgments_than_uniform_for_a_separated_ranking() -> None:
    truth = read_truth(AUPEL)
    common = {"rule": parse_rule("separated"), "repetitions": 30, "seed": 2, "batch": 200, "tie_rate": 0.04}
    uniform = simulate(truth, Settings(policy="uniform", **common))  # type: ignore[arg-type]
    adjacent = simulate(truth, Settings(policy="adaptive", focus="adjacent", **common))  # type: ignore[arg-type]
    assert uniform.stopped.all() and adjacent.stopped.all()
    assert adjacent.judgments.mean() < 0.5 * uniform.judgments.mean()
    assert adjacent.exact.all() and not adjacent.false_separation.any()


def test_curve_records_every_set() -> None:
    truth = Truth(("A", "B", "C"), (1100.0, 1000.0, 900.0))
    result = simulate(truth, Settings(policy="adaptive", rule=parse_rule("none"), repetitions=10, seed=1, batch=30,
                                      max_judgments=100, curve=True))
    assert [row["judgments"] for row in result.curve] == [30.0, 60.0, 90.0, 100.0]
    assert all(0 <= row["ranking_exact"] <= 1 for row in result.curve)


@pytest.mark.parametrize(("text", "message"), [
    ("system,rating\nA,1\n", "truth.csv:1: the header must name the columns system and elo"),
    ("system,elo\nA,1000\nB,x\n", "truth.csv:3: elo 'x' is not a finite number"),
    ("system,elo\nA,1000\nA,900\n", "truth.csv:3: system 'A' is listed twice"),
    ("system,elo\nA,1000\n", "truth.csv: a truth needs at least two systems"),
    ("system,elo\n,1000\nB,3\n", "truth.csv:2: the system name is empty"),
])
def test_truth_file_errors_name_the_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "truth.csv"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(DataError) as caught:
        read_truth(path)
    assert str(caught.value) == message


def test_settings_refuse_bad_values() -> None:
    for bad in ({"policy": "greedy"}, {"focus": "some"}, {"alpha": 1.0}, {"tie_rate": 1.0}, {"batch": 0},
                {"intervals": "wald"}):
        with pytest.raises(ValueError):
            Settings(**{"policy": "uniform", "rule": parse_rule("none"), "repetitions": 1, "seed": 0,
                        **bad})  # type: ignore[arg-type]
