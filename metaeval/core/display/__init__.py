"""How a report's numbers and names are shown to a person: one number format, one p-value format, human names for
measures and table columns, table captions, and the warnings a correlation needs (few systems, degenerate).

Display only: nothing here changes a number. ``report.json``, the tables' CSV and JSON and the command line's CSV
keep full precision; the report page, its figures (built in Python: ``metaeval.core.display.figures``, so the
hover texts are these strings too) and the command line's summary show these strings. No Django: the command line
and the pages share it.

Numbers: 4 decimals, rounded half away from zero on the exact binary value (as JavaScript's ``toFixed``), so
``0.54745...`` shows as ``0.5475``; a value that would show as 0.0000 without being 0 shows as ``< 0.0001`` (or
``> -0.0001``), never as ``2.963e-12``. p-values: 3 decimals, below 0.001 as ``< 0.001``. Missing (None, NaN) as
``–``. Integers as they are, booleans as yes / no.

Split by concern: ``numbers``, ``names``, ``warnings``, ``page``, ``pairs`` (the pairwise-accuracy views),
``figures`` (every report figure, with plotly)."""
from __future__ import annotations

from metaeval.core.display.names import (
    FEEDBACK_HJ_PREFIX,
    HEADINGS,
    HJ_PREFIX,
    MEASURE_NAMES,
    METHOD_NAMES,
    TABLE_HEADINGS,
    TABLES,
    caption,
    column_heading,
    measure_name,
    method_name,
)
from metaeval.core.display.numbers import (
    DECIMALS,
    FEW_SYSTEMS,
    MEASURE_COLUMNS,
    MISSING,
    P_DECIMALS,
    SATURATED,
    SETTING_COLUMNS,
    fmt_cell,
    fmt_number,
    fmt_p,
    is_p_column,
)
from metaeval.core.display.page import (
    OVERALL,
    correlation_view,
    criterion_name,
    edins_view,
    figure_texts,
    pairwise_view,
    probes_view,
    table_view,
)
from metaeval.core.display.pairs import bucket_name, judge_accuracy_view, judges_vs_people_view, pair_accuracy_view
from metaeval.core.display.ranks import leaderboard_view, rank_range, ranked_rows, tied_bands
from metaeval.core.display.warnings import (
    ascii_text,
    cell_flags,
    cells_of,
    correlation_warnings,
)

__all__ = [
    "DECIMALS",
    "FEEDBACK_HJ_PREFIX",
    "FEW_SYSTEMS",
    "HEADINGS",
    "HJ_PREFIX",
    "MEASURE_COLUMNS",
    "MEASURE_NAMES",
    "METHOD_NAMES",
    "MISSING",
    "OVERALL",
    "P_DECIMALS",
    "SATURATED",
    "SETTING_COLUMNS",
    "TABLES",
    "TABLE_HEADINGS",
    "ascii_text",
    "bucket_name",
    "caption",
    "cell_flags",
    "cells_of",
    "column_heading",
    "correlation_view",
    "correlation_warnings",
    "criterion_name",
    "edins_view",
    "figure_texts",
    "fmt_cell",
    "fmt_number",
    "fmt_p",
    "is_p_column",
    "judge_accuracy_view",
    "judges_vs_people_view",
    "leaderboard_view",
    "measure_name",
    "method_name",
    "pair_accuracy_view",
    "pairwise_view",
    "probes_view",
    "rank_range",
    "ranked_rows",
    "table_view",
    "tied_bands",
]
