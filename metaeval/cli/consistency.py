"""``python -m metaeval consistency``: sensitivity and consistency curves of one system pair (AuPEL sec. 5.2).

    python -m metaeval consistency JUDGMENTS.csv --models A,B [--criterion C] --sizes 5,10,20,50
                                   [--repetitions 5000] [--seed N] [--judge-kind KIND[,KIND...]] [--three-valued]
                                   [--format csv|json]

The judgments become games (docs/conventions.md sec. 17: one game per case, criterion and system pair); the games
of the pair (A, B) under a criterion are the pool of cases, each an outcome ``a`` (A won), ``b`` or ``tie``; the
curve draws N cases from that pool (docs/conventions.md sec. 18). Without ``--criterion`` every criterion of the
file where the pair played, sorted, then ``overall``. One row per (criterion, N), first columns exactly
``criterion,n,sensitivity,consistency``.
"""
from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from metaeval.cli.args import add_rater_arguments, at_least, comma_list, rater_choice, say_exclusions
from metaeval.core.io.records import json_safe, write_csv
from metaeval.core.pairwise.judgments import load_judgments, with_judge_kind

__all__ = ["COLUMNS", "add_consistency_command", "cmd_consistency"]

COLUMNS = ("criterion", "n", "sensitivity", "consistency", "repetitions", "with_replacement", "pool", "wins_a",
           "wins_b", "ties")


def _sizes(text: str) -> list[int]:
    try:
        sizes = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        sizes = []
    if not sizes or any(size < 1 for size in sizes):
        raise argparse.ArgumentTypeError(f"{text!r} is not a comma-separated list of sample sizes >= 1")
    return sizes


def _models(text: str) -> tuple[str, str]:
    names = [part.strip() for part in text.split(",")]
    if len(names) != 2 or not all(names) or names[0] == names[1]:
        raise argparse.ArgumentTypeError(f"{text!r} is not two different system names A,B")
    return names[0], names[1]


def add_consistency_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``consistency`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "consistency", help="sensitivity and consistency of a system pair over sample sizes (AuPEL sec. 5.2)",
        description="Sensitivity (a draw of N cases is conclusive) and consistency (two draws agree) of one system "
        "pair, per criterion and sample size (docs/conventions.md sec. 17-18).")
    parser.add_argument("judgments", help="judgment file, as for `pairwise` (CSV or JSON Lines)")
    parser.add_argument("--models", type=_models, required=True, metavar="A,B", help="the two systems")
    parser.add_argument("--criterion", help="one criterion (or overall); default: each where the pair played")
    parser.add_argument("--sizes", type=_sizes, required=True, metavar="N,N,...", help="sample sizes of cases")
    parser.add_argument("--repetitions", type=at_least(1), default=5000, help="draws per size (default 5000)")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level (default 0.05)")
    parser.add_argument("--three-valued", action="store_true",
                        help="consistency = the two draws give the same of A / B / inconclusive")
    parser.add_argument("--seed", type=at_least(0), metavar="N", help="seed (default: a fresh one, printed)")
    parser.add_argument("--judge-kind", metavar="KIND[,KIND...]", help="only judgments of these judge_kind values")
    add_rater_arguments(parser, what="judgment", column="judge")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_consistency)
    return parser


def cmd_consistency(args: argparse.Namespace) -> int:
    from metaeval.core.pairwise.consistency import consistency_curve
    from metaeval.core.pairwise.games import criteria_games, pair_outcomes, play

    table = load_judgments(args.judgments, raters=rater_choice(args))
    say_exclusions(table.exclusions, table.source)
    if args.judge_kind:
        table = with_judge_kind(table, comma_list(args.judge_kind))
    model_a, model_b = args.models
    by_criterion = criteria_games(play(table.judgments))
    if args.criterion is not None:
        if args.criterion not in by_criterion:
            print(f"error: {table.source}: no criterion {args.criterion!r}; the file has "
                  f"{', '.join(by_criterion)}", file=sys.stderr)
            return 2
        by_criterion = {args.criterion: by_criterion[args.criterion]}
    pools = {name: pair_outcomes(games, model_a, model_b) for name, games in by_criterion.items()}
    pools = {name: outcomes for name, outcomes in pools.items() if outcomes}
    if not pools:
        print(f"error: {table.source}: {model_a} and {model_b} never played each other"
              + (f" under {args.criterion}" if args.criterion else ""), file=sys.stderr)
        return 2
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    rows: list[dict[str, object]] = []
    for name, outcomes in pools.items():
        counts = {key: outcomes.count(key) for key in ("a", "b", "tie")}
        for point in consistency_curve(outcomes, args.sizes, repetitions=args.repetitions, seed=seed,
                                       alpha=args.alpha, three_valued=args.three_valued):
            rows.append({"criterion": name, **point.as_dict(), "pool": len(outcomes), "wins_a": counts["a"],
                         "wins_b": counts["b"], "ties": counts["tie"]})
    if args.format == "json":
        document = {
            "source": table.source, "model_a": model_a, "model_b": model_b, "invalid": table.invalid,
            "parameters": {"sizes": args.sizes, "repetitions": args.repetitions, "alpha": args.alpha,
                           "three_valued": args.three_valued, "seed": seed, "judge_kind": args.judge_kind},
            "conventions": {
                "pool": "the pair's games under the criterion (one per case), outcome a / b / tie",
                "draw": "N cases without replacement, with replacement when N exceeds the pool",
                "test": "two-sided binomial test of A's wins out of wins + losses at 0.5, ties dropped",
                "consistency": "three-valued equality" if args.three_valued
                else "both draws conclusive with the same winner",
            },
            "rows": rows,
        }
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, COLUMNS, sys.stdout)
        print(f"seed {seed}, {args.repetitions} repetitions per size", file=sys.stderr)
    return 0
