"""The report's e-DINS section (conventions sec. 22, item 15): DINS, PF and e-DINS per system and the gamma curve
e-DINS(gamma) = DINS + gamma x PF for gamma = 0, 0.1, ..., 1, with the defaults of ``python -m metaeval edins``
(``--oov none``, default normalisation). No Django."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metaeval.core.corpus import Corpus
from metaeval.core.edins import edins_scores

__all__ = ["GAMMAS", "edins_section"]

#: the gamma curve's points
GAMMAS = tuple(step / 10 for step in range(11))


def edins_section(corpus: Corpus, systems: Sequence[str]) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The section (``rows`` per system, ``curve`` per system and gamma, ``settings``) and its tables
    ``edins`` and ``edins_gamma``; systems in the given order, NaN where no document counts."""
    result = edins_scores(corpus, list(systems), gamma=1.0)
    rows = [{"system": s.system, "dins": s.dins, "pf": s.pf, "edins": s.edins, "documents": s.documents,
             "readers": s.readers} for s in result.automatic]
    curve = [{"system": s.system, "gamma": gamma, "edins": s.dins + gamma * s.pf}
             for s in result.automatic for gamma in GAMMAS]
    section = {"rows": rows, "curve": curve,
               "settings": {"gamma": 1.0, "oov": "none", "normalise": "default"}}
    return section, {"edins": rows, "edins_gamma": curve}
