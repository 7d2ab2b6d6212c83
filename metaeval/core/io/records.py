"""The run record: a run's result as JSON-ready data and CSV tables, as the CLI writes them, the database stores
them (``MetaevalRun``) and the pages and API serve them. No Django."""
from __future__ import annotations

import csv
import math
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from metaeval.core.io.fileio import spreadsheet_safe

if TYPE_CHECKING:
    from metaeval.core.perseval.pipeline import RunResult

__all__ = ["json_safe", "number", "run_document", "table_columns", "write_csv"]


def number(value: object) -> str:
    """CSV cell: full-precision floats, empty for None, text made spreadsheet-safe (a leading ``'`` before ``=``,
    ``+``, ``-``, ``@``: :func:`~metaeval.core.io.fileio.spreadsheet_safe`)."""
    if value is None:
        return ""
    if isinstance(value, float):
        return "nan" if math.isnan(value) else repr(value)
    if isinstance(value, str):
        return spreadsheet_safe(value)
    return str(value)


def write_csv(rows: Sequence[Mapping[str, object]], columns: Sequence[str], handle: TextIO) -> None:
    writer = csv.writer(handle, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow([number(row.get(column)) for column in columns])


def json_safe(value: Any) -> Any:
    """A copy with NaN/inf as None, numpy scalars and arrays as Python values, tuples as lists and string keys."""
    if isinstance(value, Mapping):
        return {str(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(item) for item in value]
    np = sys.modules.get("numpy")  # not imported here: no value is a numpy one before numpy is loaded
    if np is not None and isinstance(value, np.ndarray):
        return json_safe(value.tolist())
    if np is not None and isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def run_document(result: RunResult) -> dict[str, object]:
    """Everything about a run as JSON-ready data (NaN/inf become null)."""
    return json_safe(
        {
            "parameters": result.options.as_dict(),
            "versions": result.versions,
            "timings": result.timings,
            "distances": [vars(stat) for stat in result.stats],
            "scores": result.table(),
            "hj_counts": {
                label: {system: counts.as_dict() for system, counts in by_system.items()}
                for label, by_system in result.hj_counts.items()
            },
            "models": result.models,
            "unavailable": result.unavailable,
            # only for a neural measure run in bfloat16/float16 (older records keep their bytes)
            **({"precision": result.precision} if result.precision else {}),
        }
    )  # type: ignore[return-value]


def table_columns(rows: Sequence[Mapping[str, object]]) -> list[str]:
    """Every key of every row, in first-seen order."""
    return list(dict.fromkeys(key for row in rows for key in row))
