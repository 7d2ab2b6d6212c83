"""Figure 3: the beta ablation (no Django)."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import numpy as np

from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.studies.data import StudyData, score
from metaeval.core.stats.correlation import correlation_grid


def beta_ablation(
    data: StudyData,
    betas: Iterable[float] = np.linspace(1.0, 2.0, 11),
    params: Params = Params(),
    *,
    vary_hj: bool = True,
) -> list[dict[str, Any]]:
    """Figure 3: how EDP's beta changes the correlation of system PerSEval with PerSEval-HJ.

    For each beta, every system is rescored with ``replace(params, beta=beta)`` under every automatic
    measure. With ``vary_hj`` (the default), the ``hj:`` labels are rescored with it too, because
    PerSEval-HJ uses the same EDP. Otherwise the ``hj:`` labels are scored once with ``params``. Every
    automatic measure is then correlated with every ``hj:`` label over the systems they share
    (:func:`metaeval.core.stats.correlation.correlation_grid`). Only rescoring happens; no distance is computed.

    Each beta is rounded to 12 decimals, so ``np.linspace`` noise does not show: 1.7 reads as 1.7, not
    1.7000000000000002. Returns one row per (beta, automatic measure, hj measure): ``"beta"`` plus the keys
    of :meth:`GridCell.as_dict` (``auto_measure``, ``hj_measure``, ``n``, ``pearson``, ``pearson_p``,
    ``spearman``, ..., ``kendall_p``, the ``*_label`` strengths, ``systems``, ``dropped`` and ``note``).
    """
    if not data.hj:
        raise ValueError("beta_ablation needs human judgments: prepare the study with ratings and options.aux")
    fixed_hj = None if vary_hj else score(data, params, labels=data.hj)
    out: list[dict[str, Any]] = []
    for beta in betas:
        value = float(round(float(beta), 12))
        current = replace(params, beta=value)
        auto = score(data, current, labels=data.measures)
        human = score(data, current, labels=data.hj) if fixed_hj is None else fixed_hj
        cells = correlation_grid(
            {m: {s: v.perseval for s, v in auto[m].items()} for m in data.measures},
            {h: {s: v.perseval for s, v in human[h].items()} for h in data.hj},
        )
        out.extend({"beta": value, **cell.as_dict()} for cell in cells)
    return out
