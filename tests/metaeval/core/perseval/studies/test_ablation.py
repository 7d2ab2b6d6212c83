"""metaeval.core.perseval.studies: Figure 3, the beta ablation."""
from __future__ import annotations

import pytest

from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.studies import beta_ablation, score
from metaeval.core.stats.correlation import correlation_grid
from tests.metaeval.core.perseval.studies.hand_case import tiny_data


def test_beta_ablation_only_rescores(demo_data, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("a distance was computed")

    monkeypatch.setattr("metaeval.core.perseval.pipeline.compute", forbidden)
    monkeypatch.setattr("metaeval.core.measures.distances.compute", forbidden)
    monkeypatch.setattr("metaeval.core.perseval.pipeline.get_measure", forbidden)
    rows = beta_ablation(demo_data)
    betas = sorted({row["beta"] for row in rows})
    assert len(betas) == 11 and betas[0] == 1.0 and betas[-1] == 2.0 and 1.7 in betas
    assert len(rows) == 11 * 2 * 1
    # beta = 1.7 is the run's beta: its correlations are those of the run's own scores
    run = demo_data.result.scores()
    expected = correlation_grid({m: run[m] for m in ("rouge_l", "jsd")}, {"hj:rouge_l": run["hj:rouge_l"]})
    at = [row for row in rows if row["beta"] == 1.7]
    for row, cell in zip(at, expected, strict=True):
        assert (row["auto_measure"], row["hj_measure"]) == (cell.auto_measure, cell.hj_measure)
        assert row["pearson"] == cell.correlation.pearson and row["kendall"] == cell.correlation.kendall
    first = [row["pearson"] for row in rows if row["beta"] == 1.0]
    assert first != [row["pearson"] for row in at]  # beta matters


def test_beta_ablation_can_hold_hj_fixed(demo_data):
    rows = beta_ablation(demo_data, betas=[1.7], params=Params(beta=1.0), vary_hj=False)
    auto = score(demo_data, Params(beta=1.7), labels=["rouge_l", "jsd"])
    human = score(demo_data, Params(beta=1.0), labels=["hj:rouge_l"])
    cells = correlation_grid(
        {m: {s: v.perseval for s, v in auto[m].items()} for m in auto},
        {h: {s: v.perseval for s, v in human[h].items()} for h in human},
    )
    assert [row["spearman"] for row in rows] == [cell.correlation.spearman for cell in cells]
    assert [row["pearson"] for row in rows] == [cell.correlation.pearson for cell in cells]
    with pytest.raises(ValueError):
        beta_ablation(tiny_data())
