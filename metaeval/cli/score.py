"""``python -m metaeval score``: EGISES, DEGRESS, PerSEval and accuracy per system and measure."""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from metaeval.cli.common import UsageError, open_out
from metaeval.cli.scoring import _run, add_run_arguments, options_from_args, progress_for
from metaeval.core.io.records import json_safe, run_document, write_csv

if TYPE_CHECKING:  # the numeric core: imported where the command runs (see metaeval.cli)
    from metaeval.core.perseval.pipeline import RunResult


def run_score(args: argparse.Namespace) -> RunResult:
    """The run of ``score`` (no output written): its :meth:`RunResult.table` is the CSV's rows (the notebook API's
    :func:`metaeval.api.score` calls this too)."""
    options = options_from_args(args, beta_default=1.0, has_ratings=bool(args.ratings or args.feedback_ratings))
    if args.pivot_styles and len(options.measures) != 1:
        raise UsageError("--pivot-styles takes one measure (e.g. --measures jsd)")
    with progress_for(args, options, report=False) as progress:
        return _run(args, options, progress)


def cmd_score(args: argparse.Namespace) -> int:
    from metaeval.cli.probes import pivot_columns, pivot_rows
    from metaeval.core.perseval.pipeline import COLUMNS
    from metaeval.core.perseval.precision import PrecisionCheck

    result = run_score(args)
    options = result.options
    for check in result.precision.values():  # a bfloat16/float16 neural measure: what its float32 check found
        print(f"low precision: {PrecisionCheck(**check).message()}", file=sys.stderr)  # type: ignore[arg-type]
    out = open_out(args.out)
    try:
        if args.pivot_styles:
            rows, left_out = pivot_rows(result, options.measures[0])
            if left_out:
                print(f"--pivot-styles: {len(left_out)} systems not named MODEL:STYLE left out: "
                      f"{', '.join(left_out)}", file=sys.stderr)
            if args.format == "json":
                json.dump(json_safe(rows), out, indent=2, allow_nan=False)
                out.write("\n")
            else:
                write_csv(rows, pivot_columns(), out)
        elif args.format == "json":
            json.dump(run_document(result), out, indent=2)
            out.write("\n")
        else:
            write_csv(result.table(), COLUMNS, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def add_score_command(commands: Any) -> None:
    score = commands.add_parser("score", help="EGISES/DEGRESS/PerSEval/accuracy per system and measure")
    add_run_arguments(score, measures="rouge_l")
    score.add_argument("--format", choices=["csv", "json"], default="csv")
    score.add_argument("--out", help="output file (default stdout)")
    score.add_argument("--pivot-styles", action="store_true",
                       help="one row per system named MODEL:STYLE: model,style,egises,measure,... (the input of "
                       "`probes`; one measure, no hj rows)")
    score.set_defaults(handler=cmd_score)

