"""The contract every distance measure fulfils.

A measure turns text pairs ``(a, b)`` into distances, in the argument order of the conventions (sec. 3):
``(summary, document)``, ``(summary_j, summary_k)``, ``(system summary, user summary)``. Measures work on
batches so they can tokenise each unique text once and vectorise; the engine gives them each unique pair
once and caches results on disk under :meth:`Measure.cache_key`.
"""
from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

import numpy as np


def round_like_python(values: np.ndarray, digits: int) -> np.ndarray:
    """Python's ``round(x, digits)`` element by element: the decimal nearest to the exact binary value, ties to
    even, as the authors' distance functions round (``np.round`` scales by 10**digits first and can differ)."""
    array = np.asarray(values, dtype=np.float64)
    # each distinct value (by its bits: -0.0 and every NaN kept apart) rounded once: a batch of distances of a few
    # hundred thousand pairs holds a few ten thousand distinct scores
    distinct, where = np.unique(np.ascontiguousarray(array).view(np.int64), return_inverse=True)
    rounded = np.array([round(x, digits) for x in distinct.view(np.float64).tolist()], dtype=np.float64)
    return rounded[where.reshape(array.shape)]


class MeasureUnavailable(RuntimeError):
    """A measure cannot run here (missing data or model); the message says how to provide it."""


class Measure(ABC):
    """A distance measure. Subclasses set ``name``, ``version`` and ``options`` and implement :meth:`distances`."""

    name: str = ""
    #: bump when the numbers a measure produces change, so cached values are not reused
    version: str = "1"
    #: True in ``--compat authors`` mode: the authors' tokenisation, quirks and rounding
    compat: bool = False

    @property
    def options(self) -> Mapping[str, object]:
        """Everything besides the texts that decides the numbers (part of the cache key)."""
        return {}

    @property
    def cache_key(self) -> str:
        """Identity of the numbers this measure produces: name, version, mode and options."""
        return json.dumps(
            {"name": self.name, "version": self.version, "compat": self.compat, "options": dict(self.options)},
            sort_keys=True,
            separators=(",", ":"),
        )

    @property
    def label(self) -> str:
        return f"{self.name} (authors)" if self.compat else self.name

    #: measures with the same (non-empty) ``fusion`` compute a batch's distances together (shared tokens and n-gram
    #: counts; :func:`~metaeval.core.measures.distances.fused_distances`), the numbers of each one's :meth:`distances`
    fusion: str = ""

    def prepare(self) -> None:  # noqa: B027 - an optional hook: most measures need nothing loaded
        """Load what the measure needs (imports, data, models) once, before worker processes fork."""

    @abstractmethod
    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """``float64`` array with ``sigma(a, b)`` for each pair, in order. NaN where the measure is undefined."""

    def __call__(self, a: str, b: str) -> float:
        """One pair (convenience; batch with :meth:`distances`)."""
        return float(self.distances([(a, b)])[0])

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.cache_key}>"

