"""``python -m metaeval ppi``: each system's score from the people's games, and prediction-powered from the judge's.

    python -m metaeval ppi JUDGMENTS.csv --judge NAME [--human-kind human] [--alpha 0.05] [--format csv|json]

One row per criterion (sorted, then ``overall``) and system, first columns exactly
``criterion,system,labeled,unlabeled,human,human_low,human_high,ppi,ppi_low,ppi_high,ppi_plus,ppi_plus_low,
ppi_plus_high`` (then ``lambda``, PPI++'s weight, and ``judge_only``, the judge's own mean): the system's score =
mean over the items it plays of 1 (its side wins), 0.5 (tie), 0 (loses); labelled items have a game of the
people and of judge NAME, unlabelled ones the judge's only; items without a judge game are left out. Intervals are
two-sided CLT intervals at level 1 - alpha. Conventions: docs/conventions.md sec. 28.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from metaeval.cli.agreement import add_judge_arguments, load_items
from metaeval.cli.args import number

__all__ = ["add_ppi_command", "cmd_ppi"]


def add_ppi_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``ppi`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "ppi", help="system scores from a few human games and many judge games (prediction-powered inference)",
        description="Per criterion and system: the human-only score with its CLT interval, the prediction-powered "
        "estimate (PPI) and the power-tuned one (PPI++) (docs/conventions.md sec. 28).")
    add_judge_arguments(parser)
    parser.add_argument("--alpha", type=number(0, above=True), default=0.05,
                        help="1 - the intervals' level, in (0, 1) (default 0.05: 95%% intervals)")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_ppi)
    return parser


def cmd_ppi(args: argparse.Namespace) -> int:
    from metaeval.core.io.records import json_safe, write_csv
    from metaeval.core.judges.ppi import COLUMNS, interval_widths, ppi_rows

    if not 0 < args.alpha < 1:
        print(f"error: --alpha must lie strictly between 0 and 1, not {args.alpha:g}", file=sys.stderr)
        return 2
    items = load_items(args)
    if items is None:
        return 2
    rows = ppi_rows(items, args.alpha)
    overall = [row for row in rows if row["criterion"] == "overall"]
    labelled = sum(1 for item in items.items if item.judge_outcome is not None and item.human_outcome is not None)
    if not labelled:
        print(f"error: {items.source}: no item (case, criterion, system pair) has both a game of the people "
              f"({args.human_kind!r}) and a game of judge {args.judge!r}, so nothing is labelled", file=sys.stderr)
        return 2
    if args.format == "json":
        document = {
            "source": items.source, "judge": args.judge, "human_kind": args.human_kind, "alpha": args.alpha,
            "judgments": {"human": items.human_judgments, "judge": items.judge_judgments, "invalid": items.invalid},
            "conventions": {
                "score": "per item the system plays: 1 its side wins the game, 0.5 tie, 0 loses",
                "labeled": "items with a game of the people and of the judge; unlabeled: the judge's only",
                "human": "mean of the people's scores on the labelled items, +- z sd / sqrt(n) (sd divisor n)",
                "ppi": "mean(Yhat_unlabeled) + mean(Y - Yhat); +- z sqrt(sd(Yhat_u)^2/N + sd(Y - Yhat)^2/n)",
                "ppi_plus": "the same with lambda Yhat, lambda = clip(cov(Y, Yhat) / ((1 + n/N) var(all Yhat)), 0, 1)"
                            " as ppi_py; 0 when the judge's outcomes do not vary",
                "undefined": "no interval for n < 2; no PPI without unlabelled items",
                "reference": "ppi-python (ppi_py) classical_mean_ci, ppi_mean_ci(lam=1), ppi_mean_ci(lam=None)",
            },
            "mean_widths_overall": interval_widths(overall),
            "rows": rows,
        }
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, COLUMNS, sys.stdout)
        widths = interval_widths(overall)
        if widths["human"] is not None:
            print(f"judge {args.judge}: {labelled} labelled items; overall mean interval width: human "
                  f"{widths['human']:.4f}, PPI {widths['ppi']:.4f}, PPI++ {widths['ppi_plus']:.4f}", file=sys.stderr)
    return 0
