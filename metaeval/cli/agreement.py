"""``python -m metaeval agreement``: how far an LLM judge agrees with the people of a judgment file.

    python -m metaeval agreement JUDGMENTS.csv --judge NAME [--human-kind human] [--cases CASES.jsonl]
                                 [--format csv|json]

One row per criterion (sorted) and ``overall`` (every criterion's items), first columns exactly
``criterion,judge,items,accuracy,cohen_kappa``: over the items (case, criterion, system pair) that have both a game
of the people and a game of judge NAME (its runs pooled by the game rule), the share whose outcomes (A wins / tie /
B wins) are equal and Cohen's kappa over those three outcomes; then the people's own agreement (the ceiling), the
judge's position and self-consistency, and its length bias where the texts are known (judgment-file columns
``text_a,text_b`` or ``length_a,length_b``, or ``--cases``). Conventions: docs/conventions.md sec. 28.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from metaeval.cli.args import add_rater_arguments, rater_choice, say_exclusions

if TYPE_CHECKING:
    from metaeval.core.judges.items import ItemSet
    from metaeval.core.pairwise.features import StyleData

__all__ = ["add_agreement_command", "add_judge_arguments", "cmd_agreement", "load_items", "load_style"]


def add_judge_arguments(parser: argparse.ArgumentParser) -> None:
    """The judgment file, ``--judge``, ``--human-kind`` and which raters to read (``--exclude-raters``,
    ``--include-excluded``) (shared by agreement, ppi and alt-test)."""
    parser.add_argument("judgments", help="judgment file, as for `pairwise` (CSV or JSON Lines), with both the "
                        "people's and the judge's judgments")
    parser.add_argument("--judge", required=True, metavar="NAME",
                        help="the judge: judgments whose judge column is NAME (and whose judge_kind is not the human "
                        "kind)")
    parser.add_argument("--human-kind", default="human", metavar="KIND",
                        help="judge_kind of the people's judgments (default human)")
    add_rater_arguments(parser, what="judgment", column="judge")


def load_items(args: argparse.Namespace) -> ItemSet | None:
    """The judgment file's items for ``--judge`` / ``--human-kind``; None after printing the error when the judge
    or the people are missing (a bad file raises ImporterError, which ``main`` reports)."""
    from metaeval.core.judges.items import JudgeNotFound, build_items
    from metaeval.core.pairwise.judgments import load_judgments

    table = load_judgments(args.judgments, raters=rater_choice(args))
    say_exclusions(table.exclusions, table.source)
    try:
        return build_items(table, args.judge, human_kind=args.human_kind)
    except JudgeNotFound as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def load_style(judgments: str, cases: str | None) -> StyleData:
    """The texts' lengths and other style features: the judgment file's columns, then ``cases`` for what they
    leave unknown."""
    from metaeval.core.judges.cases import load_cases
    from metaeval.core.pairwise.features import load_style_data, style_data_from_cases

    data = load_style_data(judgments)
    if cases:
        from pathlib import Path

        data = data.merged(style_data_from_cases(load_cases(cases), Path(cases).name))
    return data


def add_agreement_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``agreement`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "agreement", help="agreement of an LLM judge with people: accuracy, Cohen's kappa, ceiling, biases",
        description="Per criterion: accuracy and Cohen's kappa of a judge's games against the people's, the "
        "people's own agreement, the judge's position and self-consistency and length bias "
        "(docs/conventions.md sec. 28).")
    add_judge_arguments(parser)
    parser.add_argument("--cases", metavar="CASES.jsonl",
                        help="the judge's cases file (text_a/text_b): the texts' lengths for the length bias, where "
                        "the judgment file has none")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_agreement)
    return parser


def cmd_agreement(args: argparse.Namespace) -> int:
    from metaeval.core.io.records import json_safe, write_csv
    from metaeval.core.judges.agreement import COLUMNS, agreement_rows, confusion_rows

    items = load_items(args)
    if items is None:
        return 2
    style = load_style(args.judgments, args.cases)
    rows = agreement_rows(items, style)
    overall = rows[-1]
    if not overall["items"]:
        print(f"error: {items.source}: no item (case, criterion, system pair) has both a game of the people "
              f"({args.human_kind!r}) and a game of judge {args.judge!r}", file=sys.stderr)
        return 2
    if args.format == "json":
        document = {
            "source": items.source, "judge": args.judge, "human_kind": args.human_kind,
            "judgments": {"human": items.human_judgments, "judge": items.judge_judgments, "invalid": items.invalid},
            "conventions": {
                "item": "one (case, criterion, unordered system pair); oriented as its first valid judgment names it",
                "game": "each source's judgments of an item pooled: more wins wins, equal is a tie (sec. 17)",
                "accuracy": "share of items whose judge outcome (a, tie, b) equals the people's",
                "cohen_kappa": "(p_o - p_e) / (1 - p_e) over the three outcomes, as sklearn's cohen_kappa_score",
                "decisive_accuracy": "accuracy over the items where neither outcome is a tie",
                "human_human": "items with 2+ human judgments: mean share of agreeing pairs of human judgments",
                "judge_human": "the same items: mean share of human judgments equal to the judge's outcome",
                "position_consistency": "all the judge's items with runs in both orders: the two orders' pooled "
                                        "outcomes agree (position, first-shown and self-consistency: the judge's "
                                        "items, people or not)",
                "judge_first_shown": "share of the judge's non-tie judgments that chose the text shown first",
                "self_consistency": "items with 2+ judge runs: mean share of agreeing pairs of runs",
                "judge_longer": "items with known, unequal lengths: mean score of the longer text in the judge's "
                                "game (1 win, 0.5 tie, 0 loss); human_longer the same in the people's",
                "overall": "the items of every criterion together",
            },
            "rows": rows,
            "confusion": confusion_rows(items),
        }
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, COLUMNS, sys.stdout)
        print(f"judge {args.judge}: {overall['items']} items with both games; {items.human_judgments} human and "
              f"{items.judge_judgments} judge judgments, {items.invalid} invalid left out", file=sys.stderr)
    return 0
