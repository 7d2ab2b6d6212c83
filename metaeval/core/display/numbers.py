"""How a number is shown, on the pages and in the command line's text: fixed decimals, p-values, a missing value, one
cell of a table."""
from __future__ import annotations

import math
import numbers
import re
from decimal import ROUND_HALF_UP, Decimal

from metaeval.core.display.names import measure_name

#: decimals of every number shown (not of p-values)
DECIMALS = 4


#: decimals of a p-value; smaller ones show as "< 0.001"
P_DECIMALS = 3


#: what a missing value (None, NaN) shows as
MISSING = "–"


#: a correlation over fewer systems than this gets the "few systems" warning
FEW_SYSTEMS = 8


#: a correlation with |r| at least this is "±1" (degenerate when every cell of a grid is)
SATURATED = 0.99


def _real(value: object) -> float | None:
    """``value`` as a float when it is a real number (not a bool), else None."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    return float(value)


def _fixed(value: float, decimals: int) -> str:
    """``value`` with ``decimals`` decimals, ties away from zero on the exact binary value (``Number.toFixed``)."""
    if abs(value) >= 1e15:  # beyond Decimal's default 28 digits with the decimals; no tie can occur there
        return f"{value:.{decimals}f}"
    text = str(Decimal(value).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP))
    return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text


def fmt_number(value: object, *, decimals: int = DECIMALS, missing: str = MISSING) -> str:
    """One number for a person: ``0.5475``, ``< 0.0001`` for a tiny positive value (``> -0.0001`` negative), ``0.0000``
    for zero, integers unchanged, ``missing`` for None and NaN, ``inf`` / ``-inf``, yes / no for booleans; any other
    value as ``str``."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = _real(value)
    if number is None:
        return str(value)
    if math.isnan(number):
        return missing
    if math.isinf(number):
        return "inf" if number > 0 else "-inf"
    smallest = 10.0 ** -decimals
    if number != 0 and abs(number) < smallest / 2:
        return f"< {_fixed(smallest, decimals)}" if number > 0 else f"> -{_fixed(smallest, decimals)}"
    return _fixed(number, decimals)


def fmt_p(value: object, *, missing: str = MISSING) -> str:
    """A p-value: ``< 0.001`` below 0.001, otherwise 3 decimals (``0.042``); ``missing`` for None and NaN."""
    number = _real(value)
    if number is None:
        return missing if value is None else str(value)
    if math.isnan(number):
        return missing
    smallest = 10.0 ** -P_DECIMALS
    if number < smallest:
        return f"< {_fixed(smallest, P_DECIMALS)}"
    return _fixed(number, P_DECIMALS)


def is_p_column(column: str) -> bool:
    """Whether a table column holds p-values (``pearson_p``, ``p_value``, ``p``)."""
    return column in ("p", "p_value") or column.endswith("_p")


#: columns that hold a setting as the researcher typed it (shown in the shortest form: beta 1.1, not 1.1000)
SETTING_COLUMNS = frozenset({"beta", "confidence", "level"})


#: columns whose values are measure names (shown as :func:`measure_name` writes them)
MEASURE_COLUMNS = frozenset({"measure", "auto_measure", "hj_measure", "measure_a", "measure_b", "perseval_measure",
                             "accuracy_measure", "metric", "human"})


def fmt_cell(column: str, value: object, *, missing: str = MISSING) -> str:
    """A table cell: measure names in words, p-values with :func:`fmt_p`, settings as typed, lists (``a;b``, as the
    CSV joins them) item by item with ``"; "`` between them, other numbers with :func:`fmt_number`."""
    if column in MEASURE_COLUMNS and isinstance(value, str):
        return measure_name(value)
    if isinstance(value, str):
        return "; ".join(_list_item(item, missing) for item in value.split(";"))
    if is_p_column(column):
        return fmt_p(value, missing=missing)
    number = _real(value)
    if column in SETTING_COLUMNS and number is not None and math.isfinite(number):
        return f"{number:g}"
    return fmt_number(value, missing=missing)


#: a float as Python writes it (``repr``), the way a report's lists are joined (``0.5;2.9e-13;nan``)
_FLOAT = re.compile(r"[-+]?(\d+\.\d*|\.\d+|\d+(?=e))(e[-+]?\d+)?|[-+]?(nan|inf)", re.IGNORECASE)


def _list_item(text: str, missing: str) -> str:
    """One item of a joined list (or a one-item list): a float formatted, anything else (an integer, a word)
    unchanged."""
    return fmt_number(float(text), missing=missing) if _FLOAT.fullmatch(text.strip()) else text
