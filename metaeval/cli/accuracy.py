"""``python -m metaeval accuracy``: agreement of pairwise judgments with an assumed truth ranking (AuPEL sec. 5.1).

    python -m metaeval accuracy JUDGMENTS.csv --truth gold,xxl,xl [--criterion C] [--tie-credit 0|0.5]
                                [--n-boot 1000] [--seed N] [--judge-kind KIND[,KIND...]] [--format csv|json]

One row per criterion (sorted) and ``overall`` (every criterion's judgments), first columns exactly
``criterion,accuracy,ci_low,ci_high,judgments,cases,skipped``: the share of the non-invalid judgments between two
different systems of the truth that prefer the higher-ranked one (a tie scores ``--tie-credit``, 0 by default) and
its cluster-bootstrap 95 % interval over cases (docs/conventions.md sec. 18). Judgments, not games: every judgment
counts once. ``invalid`` judgments are left out and counted in the json.
"""
from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from metaeval.cli.args import add_rater_arguments, at_least, comma_list, number, rater_choice, say_exclusions
from metaeval.core.io.records import json_safe, write_csv
from metaeval.core.pairwise.judgments import OVERALL, load_judgments, with_judge_kind

__all__ = ["COLUMNS", "add_accuracy_command", "cmd_accuracy"]

COLUMNS = ("criterion", "accuracy", "ci_low", "ci_high", "judgments", "cases", "skipped")


def _truth(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",")]
    if len(names) < 2 or not all(names) or len(set(names)) != len(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not two or more different system names, best first")
    return names


def add_accuracy_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``accuracy`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "accuracy", help="agreement of pairwise judgments with an assumed truth ranking (AuPEL sec. 5.1)",
        description="Share of judgments that prefer the better system of an assumed truth ranking, per criterion, "
        "with a cluster-bootstrap 95%% interval over cases (docs/conventions.md sec. 18).")
    parser.add_argument("judgments", help="judgment file, as for `pairwise` (CSV or JSON Lines)")
    parser.add_argument("--truth", type=_truth, required=True, metavar="A,B,...", help="systems, best first")
    parser.add_argument("--criterion", help="one criterion (or overall); default: every criterion, then overall")
    parser.add_argument("--tie-credit", type=number(0), default=0.0, metavar="X",
                        help="score of a tie judgment, 0 (default: a tie agrees with no ranking) to 1")
    parser.add_argument("--n-boot", type=at_least(1), default=1000, metavar="N", help="bootstrap rounds (1000)")
    parser.add_argument("--seed", type=at_least(0), metavar="N", help="seed (default: a fresh one, printed)")
    parser.add_argument("--judge-kind", metavar="KIND[,KIND...]", help="only judgments of these judge_kind values")
    add_rater_arguments(parser, what="judgment", column="judge")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_accuracy)
    return parser


def cmd_accuracy(args: argparse.Namespace) -> int:
    from metaeval.core.pairwise.accuracy import truth_accuracy

    table = load_judgments(args.judgments, raters=rater_choice(args))
    say_exclusions(table.exclusions, table.source)
    if args.judge_kind:
        table = with_judge_kind(table, comma_list(args.judge_kind))
    if not 0 <= args.tie_credit <= 1:
        print("error: --tie-credit must lie between 0 and 1", file=sys.stderr)
        return 2
    valid = table.valid()
    by_criterion: dict[str, list[tuple[str, str, str, str]]] = {}
    for judgment in valid:
        by_criterion.setdefault(judgment.criterion, []).append(
            (judgment.case_id, judgment.model_a, judgment.model_b, judgment.winner))
    groups = {name: by_criterion[name] for name in sorted(by_criterion)}
    groups[OVERALL] = [item for rows in groups.values() for item in rows]
    if args.criterion is not None:
        if args.criterion not in groups:
            print(f"error: {table.source}: no criterion {args.criterion!r}; the file has {', '.join(groups)}",
                  file=sys.stderr)
            return 2
        groups = {args.criterion: groups[args.criterion]}
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    rows: list[dict[str, object]] = []
    for name, judgments in groups.items():
        try:
            result = truth_accuracy(judgments, args.truth, tie_credit=args.tie_credit, n_boot=args.n_boot, seed=seed)
        except ValueError as exc:  # no judgment between two systems of the truth under this criterion
            print(f"error: {table.source}: {name}: {exc}", file=sys.stderr)
            return 2
        rows.append({"criterion": name, "accuracy": result.accuracy, "ci_low": result.low, "ci_high": result.high,
                     "judgments": result.judgments, "cases": result.cases, "skipped": result.skipped})
    if args.format == "json":
        document = {
            "source": table.source, "truth": args.truth, "invalid": table.invalid,
            "parameters": {"tie_credit": args.tie_credit, "n_boot": args.n_boot, "seed": seed,
                           "judge_kind": args.judge_kind},
            "conventions": {
                "unit": "one non-invalid judgment between two different systems of the truth",
                "score": "1 when it prefers the higher-ranked system, 0 the lower, tie_credit for a tie",
                "interval": "cluster bootstrap over cases, numpy default_rng(seed), percentiles 2.5 / 97.5",
                "overall": "every criterion's judgments together, clustered by case",
            },
            "rows": rows,
        }
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, COLUMNS, sys.stdout)
        print(f"seed {seed}, {args.n_boot} bootstrap rounds, {table.invalid} invalid judgments left out",
              file=sys.stderr)
    return 0
