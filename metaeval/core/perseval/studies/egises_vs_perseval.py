"""Table 3: the EGISES ranking against the PerSEval ranking (no Django)."""
from __future__ import annotations

from typing import Any

from metaeval.core.perseval.studies.data import Scores
from metaeval.core.perseval.studies.rankings import is_finite, rank_correlation_fields, ranking
from metaeval.core.stats.correlation import correlate


def rank_agreement(scores: Scores, measure: str) -> dict[str, Any]:
    """Table 3: how far the EGISES ranking of a measure agrees with its PerSEval ranking.

    EGISES is a divergence, so the EGISES ranking puts the lowest EGISES first. PerSEval puts the highest
    first. This is the paper's orientation: Table 3 reports positive inter-correlations (Spearman 0.85-0.997,
    Kendall 0.70-0.99), and BigBird-Pegasus tops both Table 7 (lowest EGISES) and Table 1 (highest
    PerSEval). With either ranking reversed the coefficients would be negative. The coefficients correlate
    -EGISES (= DEGRESS - 1) with PerSEval over the systems where both are finite. Spearman rho and Kendall
    tau-b depend only on ranks, so this equals correlating the two rankings. A value below 1 is the paper's
    "EGISES paradox": EDP reorders the models.

    Returns ``measure``, ``systems``, ``egises_ranking``, ``perseval_ranking`` (best first), ``n``,
    ``spearman``, ``spearman_p``, ``kendall``, ``kendall_p`` and ``note``.
    """
    by_system = scores[measure]
    systems = [s for s, v in by_system.items() if is_finite(v.egises) and is_finite(v.perseval)]
    egises = {s: by_system[s].egises for s in systems}
    perseval = {s: by_system[s].perseval for s in systems}
    corr = correlate([-egises[s] for s in systems], [perseval[s] for s in systems])
    return {
        "measure": measure,
        "systems": systems,
        "egises_ranking": ranking(egises, higher_is_better=False),
        "perseval_ranking": ranking(perseval, higher_is_better=True),
        **rank_correlation_fields(corr),
    }
