"""The full report's settings table (:data:`REPORT_OPTIONS`) and the choices it names, kept apart from the
report's numeric code so that ``python -m metaeval report --help``, ``manage.py metaeval_report`` and the run form
read it without loading numpy or scipy. :mod:`metaeval.core.perseval.report` and :mod:`metaeval.core.stats.resampling`
take
them from here (one definition each). No Django."""
from __future__ import annotations

from typing import Literal

from metaeval.core.options import Option
from metaeval.core.perseval.measure import EXPONENT_BOUNDS

__all__ = ["ALTERNATIVES", "BETAS", "CLOSE_PAIRS", "MISSING_SYSTEM_RULES", "REPORT_OPTIONS", "RESAMPLES"]

#: what the correlation bootstrap and the permutation tests resample
RESAMPLES: tuple[Literal["systems", "documents", "both"], ...] = ("systems", "documents", "both")
#: what a bootstrap sample does when a drawn system has no drawn document with a value (the first is the default)
MISSING_SYSTEM_RULES: tuple[str, ...] = ("discard-sample", "drop-system")
#: the alternative hypotheses of the permutation test (the first is the default)
ALTERNATIVES: tuple[str, ...] = ("greater", "two-sided")
#: the lower edges of the pairwise-accuracy view's close-pair buckets of |human difference| (conventions sec. 26)
CLOSE_PAIRS = (0.0, 0.05, 0.1)
#: the EDP betas of the ablation (Figure 3)
BETAS = tuple(round(1.0 + 0.1 * step, 1) for step in range(11))

#: the report's settings: type, bounds or choices, default (build_report's keywords; the CLI's ``report --full``
#: and ``manage.py metaeval_report`` flags, the run form's and the API's ``report`` are built from this table)
REPORT_OPTIONS: tuple[Option, ...] = (
    Option("n_boot", 1000, "bootstrap samples", kind=int, low=1, high=1_000_000),
    Option("resample", "both", "what the correlation bootstrap and the permutation tests resample", kind=str,
           choices=RESAMPLES),
    Option("confidence", 0.95, "confidence level of the intervals", low=0.5, high=0.999),
    Option("betas", BETAS, "EDP betas of the ablation", low=EXPONENT_BOUNDS[0], high=EXPONENT_BOUNDS[1], many=True),
    Option("stability_samples", 10, "subsamples per stability level", kind=int, low=1, high=100_000),
    Option("stability_levels", (80, 60, 40, 20), "stability levels, percent of the documents kept", kind=int,
           low=1, high=100, many=True),
    Option("n_permutations", 1000, "permutations per test", kind=int, low=1, high=1_000_000),
    Option("missing_system", MISSING_SYSTEM_RULES[0],
           "a bootstrap sample in which a drawn system has no drawn document: discard the sample (SacreROUGE's "
           "rule) or correlate it without that system", kind=str, choices=MISSING_SYSTEM_RULES,
           flag_name="--bootstrap-missing"),
    Option("permutation_alternative", ALTERNATIVES[0],
           "permutation tests one-sided per ordered pair (H1: r(A,H) > r(B,H)) or two-sided per unordered pair "
           "(|delta*| >= |delta|)", kind=str, choices=ALTERNATIVES),
    Option("close_pairs", CLOSE_PAIRS,
           "close-pair buckets of the pairwise-accuracy view: the lower edges of |h_i - h_j|, the human measure's "
           "difference between two systems (each bucket runs to the next edge, the last one without bound)",
           low=0, many=True, increasing=True),
)
