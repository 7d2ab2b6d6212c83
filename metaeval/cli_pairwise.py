"""``python -m metaeval pairwise``: Elo and Bradley-Terry leaderboards, or win/tie/loss, from a judgment file.

    python -m metaeval pairwise JUDGMENTS.csv [--k 4 --scale 400 --base 10 --init 1000] [--n-boot 1000]
                                [--seed N] [--judge-kind human|llm|...] [--table ratings|wtl] [--format csv|json]

``--table ratings`` (default): one row per (criterion, system), criteria sorted and ``overall`` last, systems in
order of first appearance in the whole file's game list, ending with the rank and its range from the BT intervals
(``rank,rank_best,rank_worst``: conventions sec. 27); ``--table wtl``: one row per (criterion, system pair).
Conventions: docs/conventions.md sec. 17. Numbers are printed with full float precision.
"""
from __future__ import annotations

import argparse
import json
import math
import secrets
import sys
from collections.abc import Sequence
from typing import Any

from metaeval.cli_args import add_rater_arguments, at_least, comma_list, number, rater_choice, say_exclusions
from metaeval.core.pairwise.bootstrap import PERCENTILES
from metaeval.core.pairwise.bradley_terry import REGULARISER
from metaeval.core.pairwise.elo import EloParams
from metaeval.core.pairwise.games import NoGames, require_games, win_tie_loss
from metaeval.core.pairwise.judgments import load_judgments, with_judge_kind
from metaeval.core.pairwise.leaderboard import COLUMNS, leaderboard
from metaeval.core.planning.ranks import RANK_COLUMNS, with_rank_columns
from metaeval.core.records import json_safe, write_csv

__all__ = ["WTL_COLUMNS", "add_pairwise_command", "cmd_pairwise"]

WTL_COLUMNS = ("criterion", "model_a", "model_b", "win", "tie", "loss", "cases", "wins", "ties", "losses")


def add_pairwise_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``pairwise`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "pairwise", help="online Elo, Bradley-Terry and win/tie/loss from pairwise judgments (AuPEL)",
        description="Elo and Bradley-Terry leaderboards, or win/tie/loss, from a pairwise judgment file "
        "(docs/conventions.md sec. 17).")
    parser.add_argument("judgments", help="judgment file: CSV, or JSON Lines (.jsonl/.json); "
                        "case_id,criterion,model_a,model_b,winner[,judge,judge_kind,run,shown_first,doc_id,reader_id]")
    parser.add_argument("--k", type=number(0, above=True), default=4.0, help="Elo K (default 4)")
    parser.add_argument("--scale", type=number(0, above=True), default=400.0, help="Elo scale (default 400)")
    parser.add_argument("--base", type=number(1, above=True), default=10.0, help="Elo base (default 10)")
    parser.add_argument("--init", type=number(-math.inf), default=1000.0,
                        help="initial Elo, and the mean of BT (default 1000)")
    parser.add_argument("--n-boot", type=at_least(1), default=1000, metavar="N",
                        help="bootstrap rounds (default 1000)")
    parser.add_argument("--seed", type=at_least(0), metavar="N",
                        help="bootstrap seed (default: a fresh random seed, printed on stderr / in the json)")
    parser.add_argument("--judge-kind", metavar="KIND[,KIND...]", help="only judgments of these judge_kind values")
    add_rater_arguments(parser, what="judgment", column="judge")
    parser.add_argument("--table", choices=["ratings", "wtl"], default="ratings",
                        help="ratings: one row per criterion and system (default); wtl: win/tie/loss per pair")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_pairwise)
    return parser


def cmd_pairwise(args: argparse.Namespace) -> int:
    table = load_judgments(args.judgments, raters=rater_choice(args))
    say_exclusions(table.exclusions, table.source)
    read = len(table.judgments)
    if args.judge_kind:
        table = with_judge_kind(table, comma_list(args.judge_kind))
        if not table.judgments:
            print(f"error: {table.source}: no judgments with judge_kind {args.judge_kind}", file=sys.stderr)
            return 2
    try:
        games = require_games(table)
    except NoGames as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    params = EloParams(k=args.k, scale=args.scale, base=args.base, init=args.init)
    regularised: dict[str, dict[str, object]] = {}
    if args.table == "wtl":
        rows: Sequence[dict[str, object]] = [row.as_row() for row in win_tie_loss(games)]
        columns: Sequence[str] = WTL_COLUMNS
    else:
        board = leaderboard(games, params, n_boot=args.n_boot, seed=seed, regulariser=REGULARISER)
        rows = with_rank_columns(board.rows, group="criterion", value="bt", low="bt_ci_low", high="bt_ci_high")
        columns, regularised = (*COLUMNS, *RANK_COLUMNS), board.regularised
    if args.format == "json":
        document = {
            "source": table.source, "table": args.table,
            "judgments": {"read": read, "kept": len(table.judgments), "invalid": table.invalid,
                          "judge_kind": args.judge_kind, "games": len(games),
                          "left_out": table.exclusions.rows_left_out,
                          "raters_left_out": table.exclusions.raters_left_out},
            "parameters": {"k": params.k, "scale": params.scale, "base": params.base, "init": params.init,
                           "n_boot": args.n_boot, "seed": seed},
            "conventions": {
                "game": "non-invalid judgments of one (case, criterion, system pair); more wins wins, equal is a tie",
                "order": "games by the file line of their first non-invalid judgment; overall = every criterion",
                "elo": "online, file order, both players from their pre-game ratings",
                "bootstrap": "numpy default_rng(seed).integers(0, games, size=(games, n_boot)); column r = round r",
                "percentiles": f"numpy.percentile {list(PERCENTILES)}, method linear",
                "bradley_terry": "MLE, ties half a win each way, scale*log_base(p) with mean init",
                "ranks": "rank: 1 + systems with a higher bt; rank_best: 1 + systems whose BT interval lies wholly "
                         "above; rank_worst: systems - those whose BT interval lies wholly below (Chatbot Arena)",
                "regulariser": {"virtual_half_wins_each_way": REGULARISER,
                                "when": "the comparison graph is not strongly connected",
                                "used": regularised},
            },
            "rows": rows,
        }
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, columns, sys.stdout)
        if args.table == "ratings":
            print(f"seed {seed}, {args.n_boot} bootstrap rounds, {table.invalid} invalid judgments left out",
                  file=sys.stderr)
    return 0
