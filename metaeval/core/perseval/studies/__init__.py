"""Meta-evaluation studies on top of one scoring run (perseval-tmlr sec. 7-8, Tables 1-8, Figure 3, App. B.2;
docs/conventions.md sec. 8 and 14).

Everything here rescores; nothing recomputes a distance. :func:`prepare_study` runs the ordinary pipeline
(:func:`metaeval.core.perseval.pipeline.run_scores`) once and keeps, per measure and system, the
:class:`~metaeval.core.perseval.measure.DocPairs` the scores come from (:class:`StudyData`). Every study then calls
:func:`score` with other hyper-parameters, on other subsets, or both:

* :func:`benchmark_tables`: Table 1 (PerSEval), Table 7 (EGISES) and Table 8 (P-Acc), with ranks.
* :func:`document_matrix`: per-document values whose mean gives the system value, for bootstrapping.
* :func:`beta_ablation`: Figure 3, the correlation with human judgment as beta varies.
* :func:`stability`: sec. 7.2 and Tables 4 and 6. ``"paper"`` follows Def. 7-8 with documents resampled with
  replacement. ``"authors"`` follows the authors' loop (conventions sec. 8), with pair rows sampled without
  replacement.
* :func:`rank_agreement`: Table 3, the agreement between the EGISES ranking and the PerSEval ranking.
* :func:`borda_kendall` and :func:`borda_vs_hj`: App. B.2 and Table 5, the Borda-Kendall consensus of
  accuracy and PerSEval, correlated with human judgment.

Conventions shared by every function:

* A **ranking** is a list of systems, best first. PerSEval and P-Acc rank higher values first. EGISES (a
  divergence, where lower means more responsive) and accuracy (a distance, sigma(s_j, u_j)) rank lower values
  first. Systems whose value is NaN are left out of a ranking. Equal values keep the input order, which is the
  order of ``scores[measure]``.
* A **rank** (in the tables) is a competition rank: 1 + the number of systems strictly better. Ties share
  the best rank. NaN gets ``None``.
* Correlations come from :func:`metaeval.core.stats.correlation.correlate` (SciPy: Pearson r, Spearman rho and
  Kendall tau-b, with two-sided p-values). Undefined cases give NaN with a ``note``.
* Random draws are seeded. :func:`draw_seed` turns ``(seed, level, index)`` into the seed of one draw, so a
  draw does not depend on which other levels or how many samples were asked for.

No module of this package imports Django. The modules: ``data`` (StudyData, prepare_study, score),
``rankings``, ``tables`` (benchmark tables, per-document values), ``ablation``, ``subsampling`` (stability),
``egises_vs_perseval`` (rank agreement) and ``borda``.
"""
from __future__ import annotations

from metaeval.core.perseval.studies.ablation import beta_ablation
from metaeval.core.perseval.studies.borda import borda_kendall, borda_sums, borda_vs_hj
from metaeval.core.perseval.studies.data import Scores, StudyData, prepare_study, score
from metaeval.core.perseval.studies.egises_vs_perseval import rank_agreement
from metaeval.core.perseval.studies.rankings import average_ranks, ranking, ranks
from metaeval.core.perseval.studies.subsampling import (
    PAPER_LEVELS,
    AuthorsStability,
    PaperStability,
    StabilityRow,
    draw_seed,
    stability,
    stability_summary,
)
from metaeval.core.perseval.studies.tables import DOCUMENT_COLUMNS, TABLE_COLUMNS, benchmark_tables, document_matrix

__all__ = [
    "DOCUMENT_COLUMNS",
    "AuthorsStability",
    "PaperStability",
    "StabilityRow",
    "PAPER_LEVELS",
    "TABLE_COLUMNS",
    "Scores",
    "StudyData",
    "average_ranks",
    "benchmark_tables",
    "beta_ablation",
    "borda_kendall",
    "borda_sums",
    "borda_vs_hj",
    "document_matrix",
    "draw_seed",
    "prepare_study",
    "rank_agreement",
    "ranking",
    "ranks",
    "score",
    "stability",
    "stability_summary",
]
