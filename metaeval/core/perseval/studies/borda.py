"""Appendix B.2 and Table 5: the Borda-Kendall consensus of PerSEval and accuracy, against human judgment
(no Django)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.core.perseval.pipeline import HUMAN_PREFIXES
from metaeval.core.perseval.studies.data import Scores
from metaeval.core.perseval.studies.rankings import average_ranks, is_finite, rank_correlation_fields, ranking
from metaeval.core.stats.correlation import correlate


def borda_kendall(rankings: Sequence[Sequence[str]]) -> list[str]:
    """Borda-Kendall consensus of rankings of the same systems (App. B.2).

    Each ranking lists the systems best first, so a system's rank eta^l_n in ranking l is its position + 1.
    sum_n = sum over l of eta^l_n, and the consensus orders the systems by increasing sum_n:
    BK(eta^1, ..., eta^L) = argsort(sum_1, ..., sum_N). Equal sums keep the order of the **first** ranking.
    Table 5 puts the PerSEval ranking first, so a tie goes to PerSEval's order. Raises ``ValueError`` unless
    every ranking holds the same systems exactly once.
    """
    if not rankings:
        raise ValueError("borda_kendall needs at least one ranking")
    first = list(rankings[0])
    if len(set(first)) != len(first):
        raise ValueError("a ranking lists a system twice")
    for other in rankings[1:]:
        if len(other) != len(first) or set(other) != set(first):
            raise ValueError("every ranking must hold the same systems")
    sums = {system: 0 for system in first}
    for ranked in rankings:
        for position, system in enumerate(ranked):
            sums[system] += position + 1
    tie = {system: position for position, system in enumerate(first)}
    return sorted(first, key=lambda system: (sums[system], tie[system]))


def borda_sums(rank_maps: Sequence[Mapping[str, float]]) -> dict[str, float]:
    """sum_n = sum over l of eta^l_n (App. B.2) for the systems ranked in every map."""
    common = set(rank_maps[0]).intersection(*rank_maps[1:]) if rank_maps else set()
    return {system: float(sum(ranks_[system] for ranks_ in rank_maps)) for system in rank_maps[0] if system in common}


def borda_vs_hj(
    scores: Scores,
    hj_label: str,
    *,
    perseval_measures: Sequence[str] | None = None,
    accuracy_measures: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """Table 5: does adding an accuracy leaderboard to PerSEval agree better with human judgment?

    The human ranking orders the systems by the PerSEval of ``hj_label`` (PerSEval-HJ), highest first.
    ``perseval_measures`` and ``accuracy_measures`` default to every non-``hj:`` measure in ``scores``. For
    each PerSEval measure X, the rows are:

    * ``accuracy_measure=None`` (``"PSE-X"``): PerSEval-X alone, correlated by its values (so this column
      equals Table 2's cell, as in the paper).
    * One row per accuracy measure Y (``"BK(PSE-X, Y)"``): the Borda-Kendall consensus of the PerSEval-X
      ranking and the accuracy-Y ranking (App. B.2): sum_n = eta^PSE_n + eta^acc_n with average ranks for
      tied values. The accuracy is Y's mean sigma(s_j, u_j), a distance, so the lowest ranks first (the order
      of the accuracy score 1 - sigma). The consensus is correlated by -sum_n, **ties kept**: the paper's
      Table 5 Kendall values (e.g. 0.46 = 20/sqrt(45*42) over 10 systems) are tau-b with tied Borda sums.

    Systems are those with finite values in every ranking involved and in the human one. Correlations are
    Spearman rho and Kendall tau-b against the PerSEval-HJ values, with p-values. Rows carry
    ``perseval_measure``, ``accuracy_measure``, ``aggregate``, ``ranking`` (best first; equal sums in PerSEval
    order), ``hj_ranking``, ``systems``, ``n``, ``spearman``, ``spearman_p``, ``kendall``, ``kendall_p``,
    ``note`` and, for consensus rows, ``borda_sums`` (in ``ranking`` order).
    """
    automatic = [m for m in scores if not m.startswith(HUMAN_PREFIXES)]
    pse_measures = automatic if perseval_measures is None else list(perseval_measures)
    acc_measures = automatic if accuracy_measures is None else list(accuracy_measures)
    human = {s: v.perseval for s, v in scores[hj_label].items() if is_finite(v.perseval)}
    out: list[dict[str, Any]] = []

    def compare(order: list[str], values: Mapping[str, float]) -> dict[str, Any]:
        """``values``: higher is better; ties stay ties (tau-b), as in the paper's Table 5."""
        corr = correlate([values[s] for s in order], [human[s] for s in order])
        return {
            "ranking": order,
            "hj_ranking": ranking({s: human[s] for s in order}, higher_is_better=True),
            "systems": sorted(order),
            **rank_correlation_fields(corr),
        }

    for x in pse_measures:
        perseval = {s: v.perseval for s, v in scores[x].items() if s in human and is_finite(v.perseval)}
        alone = ranking(perseval, higher_is_better=True)
        out.append({"perseval_measure": x, "accuracy_measure": None, "aggregate": f"PSE-{x}",
                    **compare(alone, perseval)})
        for y in acc_measures:
            accuracy = {s: v.accuracy for s, v in scores[y].items() if s in perseval and is_finite(v.accuracy)}
            both = {s: perseval[s] for s in accuracy}
            sums = borda_sums([average_ranks(both, higher_is_better=True),
                               average_ranks(accuracy, higher_is_better=False)])
            consensus = sorted(ranking(both, higher_is_better=True), key=lambda system: sums[system])
            out.append({"perseval_measure": x, "accuracy_measure": y, "aggregate": f"BK(PSE-{x}, {y})",
                        **compare(consensus, {system: -total for system, total in sums.items()}),
                        "borda_sums": [sums[system] for system in consensus]})
    return out
