"""The report's prompt-probes section (conventions sec. 23, item 11): when systems are named ``MODEL:STYLE``, the
EGISES grid (models x styles), the probes' rows and summary (:mod:`metaeval.core.icopernicus.probes`), and, with
ratings, the
agreement of the human (HJ) paradox flags with the automatic ones (the paper's Table 9). No Django."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from metaeval.core.icopernicus.probes import (
    ALL_STYLES,
    ProbeRow,
    StyleScore,
    computed_score,
    probe_rows,
    split_system,
    summarise,
    summarise_worsening,
    worsening_rows,
)
from metaeval.core.perseval.measure import SystemScore
from metaeval.core.perseval.pipeline import HJ_PREFIX, HUMAN_PREFIXES

__all__ = ["PROBE_MEASURE", "probes_section"]

#: the measure of iCOPERNICUS's EGISES; the report's first measure when the run has no ``jsd``
PROBE_MEASURE = "jsd"


def _style_scores(scores: Mapping[str, SystemScore]) -> list[StyleScore]:
    """The defined EGISES of every ``MODEL:STYLE`` system, as the decimal of the number the score table prints."""
    out: list[StyleScore] = []
    for system, score in scores.items():
        named = split_system(system)
        styled = computed_score(*named, score.egises) if named is not None else None
        if styled is not None:
            out.append(styled)
    return out


def _floats(record: Mapping[str, object]) -> dict[str, Any]:
    return {key: (float(value) if isinstance(value, Decimal) else value) for key, value in record.items()}


def _row(row: ProbeRow, measure: str) -> dict[str, Any]:
    return {**_floats(row.as_dict()), "measure": measure}


def probes_section(
    scores: Mapping[str, Mapping[str, SystemScore]], measures: Sequence[str]
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]] | None:
    """The section and its tables (``probe_grid``, ``probe_rows``, ``probe_summary``, ``probe_adversarial`` and
    ``probe_adversarial_summary`` when some model has a contrastive style and its ``-adversarial`` variant,
    ``probe_hj_agreement``), or None when no system is named ``MODEL:STYLE`` or there is no automatic measure.
    The probes are the ``reported`` ones, on ``jsd`` when the run has it, else on its first measure; the HJ flags
    use ``hj:<that measure>``. Numbers are floats (the probes command keeps exact decimals)."""
    autos = [label for label in measures if not label.startswith(HUMAN_PREFIXES)]
    if not autos:
        return None
    measure = PROBE_MEASURE if PROBE_MEASURE in autos else autos[0]
    styled = _style_scores(scores.get(measure, {}))
    if not styled:
        return None
    models = list(dict.fromkeys(score.model for score in styled))
    styles = [style for style in ALL_STYLES if any(score.style == style for score in styled)]
    grid = [{"model": s.model, "style": s.style, "egises": float(s.egises), "measure": measure} for s in styled]
    rows = probe_rows(styled)
    summary = [_floats(item.as_dict()) for item in summarise(rows)]
    tables: dict[str, list[dict[str, Any]]] = {
        "probe_grid": grid, "probe_rows": [_row(row, measure) for row in rows], "probe_summary": summary,
    }
    section: dict[str, Any] = {"measure": measure, "models": models, "styles": styles, "grid": grid,
                               "rows": tables["probe_rows"], "summary": summary, "hj_measure": None}
    worsening = worsening_rows(styled)
    if worsening:
        tables["probe_adversarial"] = [{**_floats(row.as_dict()), "measure": measure} for row in worsening]
        tables["probe_adversarial_summary"] = [_floats(item.as_dict()) for item in summarise_worsening(worsening)]
        section["adversarial"] = tables["probe_adversarial"]
        section["adversarial_summary"] = tables["probe_adversarial_summary"]
    hj_label = f"{HJ_PREFIX}{measure}"
    if hj_label in scores:
        human = {(row.model, row.probe): row for row in probe_rows(_style_scores(scores[hj_label]))}
        agreement = []
        for row in rows:
            other = human.get((row.model, row.probe))
            if other is not None:
                agreement.append({"model": row.model, "probe": row.probe, "paradox": row.paradox,
                                  "paradox_hj": other.paradox, "agree": row.paradox == other.paradox,
                                  "delta_pp": float(row.delta_pp), "delta_pp_hj": float(other.delta_pp)})
        tables["probe_hj_agreement"] = agreement
        section["hj_measure"] = hj_label
        section["agreement"] = agreement
    return section, tables
