"""The report's e-DINS section (conventions sec. 22, item 15): DINS, PF and e-DINS per system and the gamma curve
e-DINS(gamma) = DINS + gamma x PF for gamma = 0, 0.1, ..., 1, with the defaults of ``python -m metaeval edins``
(``--oov none``, default normalisation); with the study's ratings, e-DINS-HJ beside it (the command's
``--ratings``) and its correlation with e-DINS over the systems. No Django."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from metaeval.core.edins.measure import edins_scores
from metaeval.core.io.corpus import Corpus, RatingTable
from metaeval.core.perseval.human import plan_human
from metaeval.core.stats.correlation import correlate

__all__ = ["GAMMAS", "edins_section"]

#: the gamma curve's points
GAMMAS = tuple(step / 10 for step in range(11))


def edins_section(
    corpus: Corpus, systems: Sequence[str], ratings: RatingTable | None = None
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The section (``rows`` per system, ``curve`` per system and gamma, ``settings``; with ``ratings`` also
    ``human``: e-DINS vs e-DINS-HJ over the systems) and its tables ``edins`` and ``edins_gamma``; systems in the
    given order, NaN where no document counts. With ``ratings`` each row gains ``dins_hj``, ``pf_hj``,
    ``edins_hj``, ``documents_hj``, ``readers_hj``: the rated pairs' distances, mapped as ``edins --ratings``
    does (sec. 22), replace the summaries' JSDs."""
    rated = None if ratings is None else plan_human(corpus, ratings, compat=False, systems=list(systems)).pairs
    result = edins_scores(corpus, list(systems), gamma=1.0, rated=rated)
    rows: list[dict[str, Any]] = [{"system": s.system, "dins": s.dins, "pf": s.pf, "edins": s.edins,
                                   "documents": s.documents, "readers": s.readers} for s in result.automatic]
    curve = [{"system": s.system, "gamma": gamma, "edins": s.dins + gamma * s.pf}
             for s in result.automatic for gamma in GAMMAS]
    section: dict[str, Any] = {"rows": rows, "curve": curve,
                               "settings": {"gamma": 1.0, "oov": "none", "normalise": "default"}}
    if result.human is not None:
        for row, hj in zip(rows, result.human, strict=True):
            row.update({"dins_hj": hj.dins, "pf_hj": hj.pf, "edins_hj": hj.edins, "documents_hj": hj.documents,
                        "readers_hj": hj.readers})
        agreement = correlate([row["edins"] for row in rows], [row["edins_hj"] for row in rows])
        section["human"] = {"ratings": ratings.source if ratings is not None else "",
                            "correlation": agreement.as_dict()}
    return section, {"edins": rows, "edins_gamma": curve}
