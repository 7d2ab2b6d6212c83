"""Rank ranges on the pages (conventions sec. 27.4): a system's best and worst rank as ``1-3`` (``2`` when they
agree), and leaderboards as rows of shown cells, best first, with the systems that share a rank range's overlap
marked as statistically tied."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.core.display.names import measure_name
from metaeval.core.display.numbers import MISSING, _real, fmt_number

__all__ = ["leaderboard_view", "rank_range", "ranked_rows", "tied_bands"]


def _known(value: object) -> bool:
    number = _real(value)
    return number is not None and math.isfinite(number)


def rank_range(best: object, worst: object) -> str:
    """``1-3`` for a system whose rank lies between 1 and 3, ``2`` when best and worst agree, ``—`` when unknown."""
    low, high = _real(best), _real(worst)
    if low is None or high is None:
        return MISSING
    return f"{int(low)}" if int(low) == int(high) else f"{int(low)}-{int(high)}"


def tied_bands(rows: Sequence[Mapping[str, Any]]) -> list[int]:
    """Per row of a leaderboard sorted best first (``rank_best``/``rank_worst``), its band number (1, 2, ...): a
    band starts at a row whose best rank is greater than the worst rank of every row before it, so a band of two or more
    systems is a set that the intervals cannot order (statistically tied)."""
    bands: list[int] = []
    reach = 0  # the worst rank of every row so far
    for row in rows:
        best, worst = int(row.get("rank_best") or 0), int(row.get("rank_worst") or 0)
        bands.append(bands[-1] + 1 if bands and best > reach else (bands[-1] if bands else 1))
        reach = max(reach, worst)
    return bands


def ranked_rows(rows: Sequence[Mapping[str, Any]], *, value: str, low: str, high: str) -> list[dict[str, Any]]:
    """A leaderboard's rows for a page, best first (by ``rank``, then name): ``system``, ``value``,
    ``interval`` (``low to high``), ``rank`` (``1-3``), ``band`` and ``tied`` (whether the band holds another
    system)."""
    ordered = sorted(rows, key=lambda row: (int(row.get("rank") or 0), str(row.get("system"))))
    bands = tied_bands(ordered)
    sizes = {band: bands.count(band) for band in bands}
    shown = []
    for row, band in zip(ordered, bands, strict=True):
        interval = (MISSING if not (_known(row.get(low)) or _known(row.get(high)))
                    else f"{fmt_number(row.get(low))} to {fmt_number(row.get(high))}")
        shown.append({"system": str(row.get("system")), "value": fmt_number(row.get(value)), "interval": interval,
                      "rank": rank_range(row.get("rank_best"), row.get("rank_worst")), "band": band,
                      "tied": sizes[band] > 1})
    return shown


def leaderboard_view(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The PerSEval leaderboard per measure (the report's ``leaderboard`` key): ``measure`` (in words) and its
    :func:`ranked_rows`; empty for a report made before rank ranges."""
    by_measure: dict[str, list[Mapping[str, Any]]] = {}
    for row in report.get("leaderboard") or []:
        if "rank_best" in row:
            by_measure.setdefault(str(row["measure"]), []).append(row)
    return [{"measure": measure_name(measure), "rows": ranked_rows(rows, value="value", low="low", high="high")}
            for measure, rows in by_measure.items()]
