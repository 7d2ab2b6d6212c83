"""``python -m metaeval correlate``: the human-judgment correlation grid (Table 2) from a scores file."""
from __future__ import annotations

import argparse
import math
import sys
import textwrap
from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.cli.common import UsageError, open_out, read_scores, with_p
from metaeval.core.display import ascii_text, cells_of, correlation_warnings
from metaeval.core.io.records import write_csv


def grid_from_rows(rows: Sequence[Mapping[str, object]], column: str, hj_column: str) -> list[dict[str, object]]:
    """Table 2: every automatic measure against every human measure (``hj:`` and the OpenAI variant's
    ``hj-openai:``), over the systems both scored."""
    from metaeval.core.perseval.pipeline import HUMAN_PREFIXES
    from metaeval.core.stats.correlation import correlation_grid

    auto: dict[str, dict[str, float]] = {}
    human: dict[str, dict[str, float]] = {}
    for row in rows:
        measure = str(row["measure"])
        is_human = measure.startswith(HUMAN_PREFIXES)
        target = human if is_human else auto
        key = hj_column if is_human else column
        value = row.get(key)
        number = math.nan if value in (None, "") else float(value)  # type: ignore[arg-type]  # CSV text or a number
        target.setdefault(measure, {})[str(row["system"])] = number
    if not auto or not human:
        raise UsageError("correlation needs automatic rows and hj:<aux> or hj-openai:<aux> rows (score with "
                         "--ratings or --feedback-ratings, and --aux)")
    return [cell.as_dict(flat=True) for cell in correlation_grid(auto, human)]


def cmd_correlate(args: argparse.Namespace) -> int:
    grid = grid_from_rows(read_scores(args.scores), args.column, args.hj_column or args.column)
    out = open_out(args.out)
    try:
        write_csv(grid, list(grid[0]) if grid else [], out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def grid_text(grid: Sequence[Mapping[str, object]]) -> list[str]:
    """The HJ correlation grid for a terminal: each coefficient with its two-sided p-value, n (the systems
    correlated), then the warnings of :func:`~metaeval.core.display.correlation_warnings` (few systems, +-1,
    undefined), in ASCII."""
    methods = (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall", "Kendall tau"))
    auto_width = max(len("automatic"), *(len(str(cell["auto_measure"])) for cell in grid)) + 2
    hj_width = max(len("human judgment"), *(len(str(cell["hj_measure"])) for cell in grid)) + 2
    cells = [[with_p(cell.get(method), cell.get(f"{method}_p")) for method, _ in methods] for cell in grid]
    width = max(len(name) for _, name in methods)
    width = max(width, *(len(text) for row in cells for text in row)) + 3
    lines = [
        "Human-judgment correlation of PerSEval (two-sided p-value in brackets; n = systems correlated)",
        "  " + "automatic".ljust(auto_width) + "human judgment".ljust(hj_width)
        + "".join(name.ljust(width) for _, name in methods) + "n",
    ]
    for cell, texts in zip(grid, cells, strict=True):
        lines.append("  " + str(cell["auto_measure"]).ljust(auto_width) + str(cell["hj_measure"]).ljust(hj_width)
                     + "".join(text.ljust(width) for text in texts) + str(cell["n"]))
    warnings = dict.fromkeys(
        ascii_text(text) for method, _ in methods for text in correlation_warnings(cells_of(grid, method), method)
    )
    lines.extend(textwrap.fill(text, 110, initial_indent="  warning: ", subsequent_indent="    ") for text in warnings)
    return lines


def add_correlate_command(commands: Any) -> None:
    correlate = commands.add_parser("correlate", help="HJ correlation grid from a scores CSV")
    correlate.add_argument("scores", help="CSV written by `score` with automatic and hj:<aux> (or hj-openai:<aux>) "
                           "rows")
    correlate.add_argument("--column", default="perseval", help="score column of the automatic rows")
    correlate.add_argument("--hj-column", help="score column of the hj rows (default: --column)")
    correlate.add_argument("--out", help="output file (default stdout)")
    correlate.set_defaults(handler=cmd_correlate)

