"""The warnings a correlation grid carries (few systems, saturated, undefined) and their plain-ASCII form for a
terminal."""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from metaeval.core.display.names import method_name
from metaeval.core.display.numbers import FEW_SYSTEMS, SATURATED, _real


def _r(cell: Mapping[str, Any]) -> float | None:
    number = _real(cell.get("r"))
    return None if number is None or math.isnan(number) else number


def cell_flags(cell: Mapping[str, Any]) -> list[str]:
    """Short warnings for one correlation ``{"r", "n", "note"?}``: ``few systems (n = 5)``, ``±1``, ``undefined``."""
    flags = []
    r, n = _r(cell), cell.get("n")
    if r is None:
        flags.append("undefined")
    if isinstance(n, int) and n < FEW_SYSTEMS:
        flags.append(f"few systems (n = {n})")
    if r is not None and abs(r) >= SATURATED:
        flags.append("±1")
    return flags


def correlation_warnings(cells: Iterable[Mapping[str, Any]], method: str) -> list[str]:
    """What a reader of a correlation grid must know, one sentence each: few systems behind the correlations,
    coefficients of ±1 (every cell: the grid is degenerate), undefined cells and why. ``cells`` are
    ``{"r", "n", "note"?}`` for one ``method``; an empty list when nothing is wrong."""
    cells = list(cells)
    if not cells:
        return []
    name = method_name(method)
    warnings: list[str] = []
    total = len(cells)
    small = [cell["n"] for cell in cells if isinstance(cell.get("n"), int) and cell["n"] < FEW_SYSTEMS]
    if small:
        which = "every correlation rests" if len(small) == total else f"{len(small)} of {total} correlations rest"
        warnings.append(
            f"Few systems: {which} on fewer than {FEW_SYSTEMS} systems (n = {min(small)}"
            f"{'' if min(small) == max(small) else f' to {max(small)}'}), so intervals are wide and a p-value "
            f"says little."
        )
    defined = [r for r in (_r(cell) for cell in cells) if r is not None]
    saturated = [r for r in defined if abs(r) >= SATURATED]
    if saturated:
        if len(saturated) == total:
            which = "the only" if total == 1 else "every"
            warnings.append(
                f"Degenerate: {which} {name} is ±1 (|r| ≥ {SATURATED}), so the grid cannot tell the measures apart. "
                f"Usually one system scores far from the others and decides the correlation alone (an outlier), or "
                f"the systems are too few; compare the rank coefficients (Spearman, Kendall)."
            )
        else:
            warnings.append(
                f"{len(saturated)} of {total} {name} values are ±1 (|r| ≥ {SATURATED}): one outlying system can "
                f"decide such a correlation alone."
            )
    undefined = [cell for cell in cells if _r(cell) is None]
    if undefined:
        notes = sorted({str(cell.get("note") or "").strip() for cell in undefined} - {""})
        why = "; ".join(notes) if notes else "a constant score or too few systems"
        which = ("no correlation could" if len(undefined) == total
                 else f"{len(undefined)} of {total} correlations could not")
        warnings.append(f"Undefined: {which} be computed ({why}).")
    return warnings


_ASCII = str.maketrans({"±": "+-", "≥": ">=", "≤": "<=", "−": "-", "–": "-", "ρ": "rho", "τ": "tau", "⚠": "!",
                        "Δ": "delta", "δ": "delta", "ε": "epsilon", "α": "alpha", "β": "beta", "·": "-"})


def ascii_text(text: str) -> str:
    """``text`` with the symbols above in ASCII (``±`` -> ``+-``), for a terminal."""
    return text.translate(_ASCII)


def cells_of(rows: Sequence[Mapping[str, Any]], method: str) -> list[dict[str, Any]]:
    """``{"r", "n", "note"}`` of ``method`` from flat correlation rows (``pearson``, ``pearson_p``, ``n``, ...:
    the correlations table and the command line's grid)."""
    return [{"r": row.get(method), "p": row.get(f"{method}_p"), "n": row.get("n"), "note": row.get("note")}
            for row in rows]
