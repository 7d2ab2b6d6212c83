"""Resampling statistics for system-level correlations: bootstrap confidence intervals and permutation tests
(docs/conventions.md sec. 12-13, which also says which rules are SacreROUGE's and which are options).

The methods are those of Deutsch, Dror and Roth (2021), "A Statistical Analysis of Summarization Evaluation Metrics
Using Resampling Methods" (TACL; implemented in SacreROUGE), applied to the system-level correlation of
:mod:`metaeval.core.stats.correlation` (paper Table 2). The code is ours; only the definitions follow that paper.

Input
-----
Every measure is a matrix ``values[S, D]``: one row per system, one column per document, NaN where the system has
no value for the document, with optional non-negative ``weights[S, D]`` (the shape ``studies.document_matrix``
produces). The system score (:func:`system_scores`) is the NaN-skipping weighted mean over documents::

    score[s] = sum_d w[s, d] * v[s, d] / sum_d w[s, d]      (sums over the documents d where v[s, d] is not NaN)

with ``w = 1`` when ``weights`` is None (plain ``nanmean``). A system with no non-NaN value, or whose weights sum
to 0, scores NaN. The matrices of the measures being compared must share the same systems (rows) and documents
(columns) in the same order; :func:`align` builds such matrices from ``(systems, doc_ids, values, weights)``.

Systems whose full-data score is NaN in any of the compared measures are left out before resampling (they are the
pairs :func:`~metaeval.core.stats.correlation.correlate` drops from the point estimate), so the bootstrap and the
permutation test work on the systems the point estimate uses.

Bootstrap (:func:`bootstrap_correlation`)
-----------------------------------------
One bootstrap sample draws, with replacement and independently,

* ``systems``:   row indices ``i_1..i_S`` from the S systems (documents unchanged);
* ``documents``: column indices ``j_1..j_D`` from the D documents (systems unchanged);
* ``both``:      both of the above (rows first, then columns), the sample being ``values[rows][:, cols]``.

It recomputes each measure's system scores over the sampled documents (a document drawn k times counts k times:
``score*[s] = sum_k w[s, j_k] v[s, j_k] / sum_k w[s, j_k]`` over the draws with a non-NaN value) and the
correlation ``r*`` over the sampled systems (a system drawn twice is two pairs). When a drawn system has no drawn
document with a value (its ``score*`` is NaN on either side), the whole sample is discarded
(``missing_system="discard-sample"``, the default and SacreROUGE's behaviour: its system-level correlation of a
NaN score is undefined and skipped); ``"drop-system"`` instead correlates that sample over the other systems.
``n_incomplete`` counts such samples and ``n_discarded`` those left out. Samples whose correlation is undefined
(fewer than 3 pairs with a finite score on both sides, or a constant side) are dropped too; ``n_valid`` counts
the others. The interval is the percentile interval of the valid ``r*``::

    low, high = quantile(r*, (1 - c) / 2), quantile(r*, (1 + c) / 2)     (numpy's linear interpolation)

for confidence ``c`` (SacreROUGE's ``np.percentile`` is the same). The ``estimate`` is the full-data
correlation (SciPy's, as in ``correlate``).

Permutation test (:func:`permutation_test`)
-------------------------------------------
Tests whether automatic measure A correlates with the human judgments H better than measure B does::

    H0: r(A, H) <= r(B, H)      against      H1: r(A, H) > r(B, H)     (alternative="greater", one-sided)
    H0: r(A, H) =  r(B, H)      against      H1: r(A, H) != r(B, H)    (alternative="two-sided")
    delta = r(A, H) - r(B, H)

Because A and B may be on different scales (ROUGE in [0, 1], BERTScore near 0.85), each of A and B is first
z-scored over all its non-NaN cells (``standardize=True``; population sd, as SacreROUGE's ``standardize``).
``delta`` is computed from these z-scored matrices, exactly as the permuted deltas are: mathematically an affine
map leaves the correlations unchanged, but in floating point z-scoring can merge system scores that differ by
~1e-16 (relative) into ties, and the observed statistic must come from the distribution it is compared with.
Under H0 the two measures are exchangeable, so each permutation swaps A's and B's values (and their weights) at
random with probability 1/2, independently

* ``both``:      per (system, document) cell;
* ``systems``:   per system (a whole row: equivalently the two system scores are swapped);
* ``documents``: per document (a whole column, for every system);

recomputes both measures' system scores and ``delta* = r(A*, H) - r(B*, H)`` (H is never permuted). With
``n`` valid permutations (those where both correlations are defined)::

    p = (1 + #{delta* >= delta}) / (1 + n)            (greater)
    p = (1 + #{|delta*| >= |delta|}) / (1 + n)        (two-sided, SacreROUGE's two-tailed test)

(the +1 counts the observed assignment, so p is never 0; ``>=`` allows a tolerance of 1e-12 for rounding in the
incremental sums). The two-sided p is not twice the smaller one-sided p.

Correlations
------------
Pearson's r, Spearman's rho (Pearson's r of average ranks) and Kendall's tau-b, vectorised over samples by
:func:`batch_correlation`; for one sample they agree with ``scipy.stats`` to rounding. Kendall's tau-b over the
``n0 = n(n - 1)/2`` pairs i < j is ``sum sign(x_i - x_j) sign(y_i - y_j) / sqrt((n0 - n1)(n0 - n2))``, where n1 and
n2 count the pairs tied in x and in y.

Randomness
----------
Every random function takes ``seed`` and draws from ``np.random.default_rng(seed)``: the same inputs, seed and NumPy
version give the same result. For a given seed, :func:`bootstrap_correlation` and :func:`correlation_with_ci` draw
the same samples, so the three methods' intervals of :func:`correlation_with_ci` come from paired samples.

Split by concern: ``base``, ``bootstrap``, ``permutation``."""
from __future__ import annotations

from metaeval.core.stats.resampling.base import (
    METHODS,
    MIN_PAIRS,
    NAN,
    Alternative,
    Method,
    MissingSystem,
    Resample,
    Seed,
    align,
    batch_correlation,
    system_scores,
)
from metaeval.core.stats.resampling.bootstrap import (
    BootstrapCI,
    bootstrap_correlation,
    bootstrap_replicates,
    correlation_with_ci,
    document_draws,
    draw_counts,
    system_score_intervals,
)
from metaeval.core.stats.resampling.permutation import (
    PermutationResult,
    permutation_test,
)

__all__ = [
    "Alternative",
    "BootstrapCI",
    "METHODS",
    "MIN_PAIRS",
    "Method",
    "MissingSystem",
    "NAN",
    "PermutationResult",
    "Resample",
    "Seed",
    "align",
    "batch_correlation",
    "bootstrap_correlation",
    "bootstrap_replicates",
    "correlation_with_ci",
    "document_draws",
    "draw_counts",
    "permutation_test",
    "system_score_intervals",
    "system_scores",
]
