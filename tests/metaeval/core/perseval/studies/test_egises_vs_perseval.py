"""metaeval.core.perseval.studies: Table 3, the EGISES ranking against the PerSEval ranking."""
from __future__ import annotations

import pytest

from metaeval.core.perseval.studies import rank_agreement
from tests.metaeval.core.perseval.studies.hand_case import fake


def test_rank_agreement_by_hand():
    scores = {"m": {"A": fake(0.1, 0.4), "B": fake(0.2, 0.2), "C": fake(0.3, 0.3), "D": fake(0.4, 0.1),
                    "E": fake(float("nan"), 0.9)}}
    result = rank_agreement(scores, "m")
    assert result["egises_ranking"] == ["A", "B", "C", "D"]  # lowest EGISES first
    assert result["perseval_ranking"] == ["A", "C", "B", "D"]
    assert result["systems"] == ["A", "B", "C", "D"] and result["n"] == 4
    assert result["spearman"] == pytest.approx(0.8)  # 1 - 6 * 2 / (4 * 15)
    assert result["kendall"] == pytest.approx(2 / 3)  # one discordant pair (B, C) of six
