"""The Zopf utility's fixed parameters (docs/conventions.md sec. 18), apart from :mod:`metaeval.core.pairwise.zopf` so
that
``python -m metaeval zopf --help`` shows them without loading numpy. No Django."""
from __future__ import annotations

__all__ = ["ALPHA", "MAX_ITERATIONS", "TOLERANCE"]

#: pseudo-count of a never-compared sentence pair in the comparison matrix
ALPHA = 0.01
#: Bradley-Terry MM iterations stop when no strength moves by more than this
TOLERANCE = 1e-10
#: ... or after this many iterations
MAX_ITERATIONS = 10_000
