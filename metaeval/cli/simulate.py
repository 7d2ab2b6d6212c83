"""``python -m metaeval simulate preference``: simulated preference studies under a Bradley-Terry truth, with the
platform's assignment policies and anytime-valid stopping rules (docs/conventions.md sec. 27).

    python -m metaeval simulate preference --truth TRUTH.csv --policy uniform|adaptive --stop RULE
                                           --repetitions R --seed S [--tie-rate 0] [--alpha 0.05] [--batch 50]
                                           [--max-judgments 100000] [--focus all|adjacent] [--floor 0.1]
                                           [--table summary|systems|curve] [--format csv|json]

TRUTH.csv has the columns ``system,elo``. RULE: ``separated`` (every adjacent pair of the ranking separated),
``width:W`` (every pair's interval narrower than W on the win-rate scale) or ``none`` (spend the budget).
``--table summary`` (default): one row, with the judgments used, ranking errors, the rate of false separations
and the coverage of the reported intervals; ``systems``: each system's rank range; ``curve``: the ranking's
accuracy after every set of judgments.
"""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from metaeval.cli.args import at_least, number
from metaeval.core.io.records import json_safe, write_csv

__all__ = ["add_simulate_command", "cmd_simulate"]


def _stop_rule(text: str) -> object:
    from metaeval.core.planning.confseq import parse_rule

    try:
        return parse_rule(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _fraction(text: str) -> float:
    value = number(0)(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number >= 0 and below 1")
    return value


def add_simulate_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``simulate`` (``preference``) to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "simulate", help="simulated studies: assignment policies and stopping rules under a known truth",
        description="Simulated studies under a known truth (docs/conventions.md sec. 27).")
    kinds = parser.add_subparsers(dest="simulate_kind", required=True)
    preference = kinds.add_parser(
        "preference", help="preference (A/B) studies under a Bradley-Terry truth",
        description="Preference studies whose judgments are drawn from a Bradley-Terry truth (with ties), run with "
        "the uniform or adaptive assignment and an anytime-valid stopping rule (docs/conventions.md sec. 27).")
    preference.add_argument("--truth", required=True, metavar="TRUTH.csv", help="CSV with the columns system,elo")
    preference.add_argument("--policy", choices=["uniform", "adaptive"], required=True,
                            help="uniform: every pair in turn; adaptive: Chatbot Arena's rule from the BT fit")
    preference.add_argument("--stop", type=_stop_rule, required=True, metavar="RULE",
                            help="separated, width:W (0 < W <= 1) or none")
    preference.add_argument("--repetitions", type=at_least(1), required=True, metavar="R", help="simulated studies")
    preference.add_argument("--seed", type=at_least(0), required=True, metavar="S", help="seed of every draw")
    preference.add_argument("--tie-rate", type=_fraction, default=0.0, metavar="T", help="share of ties (default 0)")
    preference.add_argument("--alpha", type=number(0, above=True), default=0.05,
                            help="error rate of all the intervals together (default 0.05)")
    preference.add_argument("--batch", type=at_least(1), default=50, metavar="N",
                            help="judgments per set: the rule is checked and the policy updated after each (50)")
    preference.add_argument("--max-judgments", type=at_least(1), default=100_000, metavar="N",
                            help="budget of one study (default 100000)")
    preference.add_argument("--focus", choices=["all", "adjacent"], default="all",
                            help="adaptive: weigh every pair (Chatbot Arena, default) or only the pairs adjacent in "
                            "the current ranking (the others keep the floor)")
    preference.add_argument("--floor", type=_fraction, default=None, metavar="F",
                            help="adaptive: share of the probability spread evenly over the pairs (default 0.1)")
    preference.add_argument("--t-opt", type=number(0, above=True), default=None, metavar="T",
                            help="judgments per pair at which the confidence sequences are tightest (default 500)")
    preference.add_argument("--intervals", choices=["sequence", "fixed"], default="sequence",
                            help="sequence: anytime-valid (default); fixed: ordinary intervals re-checked after "
                            "every set, to see why not")
    preference.add_argument("--table", choices=["summary", "systems", "curve"], default="summary")
    preference.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_simulate)
    return parser


def cmd_simulate(args: argparse.Namespace) -> int:
    from metaeval.cli.common import UsageError
    from metaeval.core.planning.adaptive import DEFAULT_FLOOR
    from metaeval.core.planning.confseq import DEFAULT_T_OPT
    from metaeval.core.planning.simulate import Settings, read_truth, simulate

    if not args.alpha < 1:
        raise UsageError("--alpha must be below 1")
    truth = read_truth(args.truth)
    try:
        settings = Settings(policy=args.policy, rule=args.stop, repetitions=args.repetitions, seed=args.seed,
                            alpha=args.alpha, tie_rate=args.tie_rate, batch=args.batch,
                            max_judgments=args.max_judgments,
                            floor=DEFAULT_FLOOR if args.floor is None else args.floor,
                            t_opt=DEFAULT_T_OPT if args.t_opt is None else args.t_opt, focus=args.focus,
                            intervals=args.intervals, curve=args.table == "curve")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    result = simulate(truth, settings)
    tables: dict[str, list[dict[str, object]]] = {
        "summary": [result.summary()], "systems": result.system_rows(),
        "curve": [dict(row) for row in result.curve]}
    rows = tables[args.table]
    if args.format == "json":
        document = {"truth": {"systems": list(truth.systems), "elo": list(truth.elo)},
                    "summary": result.summary(), "systems": result.system_rows(), "curve": result.curve}
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, list(rows[0]) if rows else [], sys.stdout)
    return 0
