"""``python -m metaeval alt-test``: may the judge replace the people? (the alternative annotator test, Calderon,
Reichart and Dror, ACL 2025).

    python -m metaeval alt-test JUDGMENTS.csv --judge NAME [--human-kind human] [--epsilon 0.1] [--q 0.05]
                                [--min-people 3] [--min-items 30] [--test t|wilcoxon] [--table criteria|annotators]
                                [--format csv|json]

``--table criteria`` (default): one row per criterion (sorted) and ``overall``, columns
``criterion,judge,epsilon,items,annotators,tested,rejected,omega,rho,verdict``: over the items with a judge game
and at least ``--min-people`` people (told apart by their ``judge`` id), each annotator with ``--min-items`` items
is left out in turn and tested; omega is the share of tested annotators the judge beats after the
Benjamini-Yekutieli correction, and the verdict ``passes`` when omega >= 0.5. ``--table annotators``: one row per
criterion and annotator. Conventions: docs/conventions.md sec. 28.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from metaeval.cli.agreement import add_judge_arguments, load_items
from metaeval.cli.args import at_least, number

__all__ = ["add_alt_test_command", "cmd_alt_test"]


def add_alt_test_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``alt-test`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "alt-test", help="the alternative annotator test: may an LLM judge replace the people? (Calderon et al.)",
        description="Leave-one-annotator-out test of whether a judge represents the other people at least as well "
        "as each person does, less a margin epsilon; the winning rate and verdict per criterion "
        "(docs/conventions.md sec. 28).")
    add_judge_arguments(parser)
    parser.add_argument("--epsilon", type=number(0), default=0.1,
                        help="the cost-benefit margin, in [0, 1): the authors advise 0.2 for experts, 0.15 for "
                        "skilled annotators, 0.1 for crowd workers (default 0.1)")
    parser.add_argument("--q", type=number(0, above=True), default=0.05,
                        help="false discovery rate of the Benjamini-Yekutieli correction (default 0.05)")
    parser.add_argument("--min-people", type=at_least(2), default=3, metavar="N",
                        help="items need N people or more (default 3)")
    parser.add_argument("--min-items", type=at_least(2), default=30, metavar="N",
                        help="an annotator is tested on N items or more (default 30, the authors')")
    parser.add_argument("--test", choices=["t", "wilcoxon"], default="t",
                        help="t: one-sided one-sample t-test (default, the authors'); wilcoxon: signed-rank test")
    parser.add_argument("--table", choices=["criteria", "annotators"], default="criteria")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_alt_test)
    return parser


def cmd_alt_test(args: argparse.Namespace) -> int:
    from metaeval.core.io.records import json_safe, write_csv
    from metaeval.core.judges.alt_test import ANNOTATOR_COLUMNS, COLUMNS, EPSILONS, alt_test_rows

    if not 0 <= args.epsilon < 1:
        print(f"error: --epsilon must lie in [0, 1), not {args.epsilon:g}", file=sys.stderr)
        return 2
    if not 0 < args.q < 1:
        print(f"error: --q must lie strictly between 0 and 1, not {args.q:g}", file=sys.stderr)
        return 2
    items = load_items(args)
    if items is None:
        return 2
    rows, detail = alt_test_rows(items, epsilon=args.epsilon, q=args.q, min_people=args.min_people,
                                 min_items=args.min_items, test=args.test)
    if not rows[-1]["items"]:
        print(f"error: {items.source}: no item has a game of judge {args.judge!r} and {args.min_people} or more "
              f"people with a judge id ({args.human_kind!r})", file=sys.stderr)
        return 2
    if args.format == "json":
        document = {
            "source": items.source, "judge": args.judge, "human_kind": args.human_kind,
            "parameters": {"epsilon": args.epsilon, "q": args.q, "min_people": args.min_people,
                           "min_items": args.min_items, "test": args.test},
            "advised_epsilon": EPSILONS,
            "conventions": {
                "label": "a person's own game on the item (their judgments pooled), the judge's game (its runs pooled)",
                "alignment": "S(x) = share of the other annotators of the item whose label equals x",
                "indicators": "W_f = [S(judge) >= S(person)], W_h = [S(person) >= S(judge)]",
                "test": "H0: mean(W_h - W_f) >= epsilon; scipy ttest_1samp(d, epsilon, alternative='less')",
                "correction": "Benjamini-Yekutieli at q over the tested annotators of one row",
                "omega": "rejected / tested; passes when omega >= 0.5",
                "rho": "mean over tested annotators of mean(W_f) (average advantage probability)",
            },
            "rows": rows,
            "annotators": detail,
        }
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    elif args.table == "annotators":
        write_csv(detail, ANNOTATOR_COLUMNS, sys.stdout)
    else:
        write_csv(rows, COLUMNS, sys.stdout)
        untested = sum(1 for row in detail if row["p_value"] is None)
        if untested:
            print(f"{untested} annotator rows have fewer than {args.min_items} items and are not tested "
                  "(--min-items; --test wilcoxon for small samples)", file=sys.stderr)
    return 0
