"""``python -m metaeval pairwise``: Elo and Bradley-Terry leaderboards, or win/tie/loss, from a judgment file.

    python -m metaeval pairwise JUDGMENTS.csv [--k 4 --scale 400 --base 10 --init 1000] [--n-boot 1000]
                                [--seed N] [--judge-kind human|llm|...] [--table ratings|wtl|style]
                                [--style-control [--style-features length,...] [--cases CASES.jsonl]]
                                [--format csv|json]

``--table ratings`` (default): one row per (criterion, system), criteria sorted and ``overall`` last, systems in
order of first appearance in the whole file's game list, ending with the rank and its range from the BT intervals
(``rank,rank_best,rank_worst``: conventions sec. 27); ``--table wtl``: one row per (criterion, system pair).
``--style-control`` appends Bradley-Terry without and with style covariates (the texts' length difference and
the file's feature columns) to the ratings rows and warns when the order changes; ``--table style``: the style
coefficients. Conventions: docs/conventions.md sec. 17 and 29. Numbers are printed with full float precision.
"""
from __future__ import annotations

import argparse
import json
import math
import secrets
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metaeval.cli.args import add_rater_arguments, at_least, comma_list, number, rater_choice, say_exclusions
from metaeval.cli.common import UsageError
from metaeval.core.io.records import json_safe, write_csv
from metaeval.core.pairwise.judgments import load_judgments, with_judge_kind

if TYPE_CHECKING:  # the numeric core: imported where the command runs (see metaeval.cli)
    from metaeval.core.pairwise.elo import EloParams
    from metaeval.core.pairwise.games import Game
    from metaeval.core.pairwise.judgments import JudgmentTable
    from metaeval.core.pairwise.style import StyleBoard

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
    parser.add_argument("--table", choices=["ratings", "wtl", "style"], default="ratings",
                        help="ratings: one row per criterion and system (default); wtl: win/tie/loss per pair; "
                        "style: the style coefficients per criterion (implies --style-control)")
    style = parser.add_argument_group("style control (docs/conventions.md sec. 29)")
    style.add_argument("--style-control", action="store_true",
                       help="add Bradley-Terry with style covariates (columns style_games,bt_nostyle,bt_style,"
                       "bt_style_ci_low,bt_style_ci_high,rank_nostyle,rank_style); needs text_a/text_b, "
                       "length_a/length_b, feature_<name>_a/_b or style_<name> columns, or --cases")
    style.add_argument("--style-features", metavar="NAME[,NAME...]",
                       help="only these covariates (length, a feature_<name> or style_<name> name); default all")
    style.add_argument("--cases", metavar="CASES.jsonl",
                       help="a judge's cases file: the texts' lengths where the judgment file has none")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.set_defaults(handler=cmd_pairwise)
    return parser


def _style_control(args: argparse.Namespace, games: Sequence[Game], params: EloParams,
                   seed: int) -> tuple[StyleBoard, list[str]]:
    """The style leaderboard of ``--style-control``; :class:`UsageError` saying why it cannot be made."""
    from metaeval.cli.agreement import load_style
    from metaeval.core.pairwise.bradley_terry import REGULARISER
    from metaeval.core.pairwise.style import style_leaderboard

    data = load_style(args.judgments, args.cases)
    names = data.names
    if not data:
        raise UsageError(f"{Path(args.judgments).name}: no style features: the file has no text_a,text_b / "
                         "length_a,length_b / feature_<name>_a,feature_<name>_b / style_<name> values (or give "
                         "--cases)")
    if args.style_features:
        wanted = comma_list(args.style_features)
        unknown = [name for name in wanted if name not in names]
        if unknown:
            raise UsageError(f"--style-features: no feature {', '.join(unknown)} (the file has {', '.join(names)})")
        names = wanted
    board = style_leaderboard(games, data, names, params=params, n_boot=args.n_boot, seed=seed,
                              regulariser=REGULARISER)
    return board, names


@dataclass
class PairwiseRun:
    """What ``pairwise`` computes before printing (the notebook API's :func:`metaeval.api.pairwise` uses it)."""

    rows: Sequence[dict[str, object]]
    columns: Sequence[str]
    table: JudgmentTable
    read: int
    games: Sequence[Game]
    seed: int
    params: EloParams
    regularised: dict[str, dict[str, object]]
    style_section: dict[str, object] | None


def run_pairwise(args: argparse.Namespace) -> PairwiseRun:
    """The rows of ``pairwise``'s ``--table`` and what its JSON says about them; prints nothing but the exclusions
    and the style warnings (stderr); :class:`UsageError` for a command line or file that cannot give a table."""
    from metaeval.core.pairwise.bradley_terry import REGULARISER
    from metaeval.core.pairwise.elo import EloParams
    from metaeval.core.pairwise.games import NoGames, require_games, win_tie_loss
    from metaeval.core.pairwise.leaderboard import COLUMNS, leaderboard
    from metaeval.core.pairwise.style import COEFFICIENT_COLUMNS, STYLE_COLUMNS
    from metaeval.core.planning.ranks import RANK_COLUMNS, with_rank_columns

    table = load_judgments(args.judgments, raters=rater_choice(args))
    say_exclusions(table.exclusions, table.source)
    read = len(table.judgments)
    if args.judge_kind:
        table = with_judge_kind(table, comma_list(args.judge_kind))
        if not table.judgments:
            raise UsageError(f"{table.source}: no judgments with judge_kind {args.judge_kind}")
    try:
        games = require_games(table)
    except NoGames as exc:
        raise UsageError(str(exc)) from None
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    params = EloParams(k=args.k, scale=args.scale, base=args.base, init=args.init)
    regularised: dict[str, dict[str, object]] = {}
    style_control = args.style_control or args.table == "style"
    if style_control and args.table == "wtl":
        raise UsageError("--style-control goes with --table ratings or style, not wtl")
    style_section: dict[str, object] | None = None
    if args.table == "wtl":
        rows: Sequence[dict[str, object]] = [row.as_row() for row in win_tie_loss(games)]
        columns: Sequence[str] = WTL_COLUMNS
    else:
        board = leaderboard(games, params, n_boot=args.n_boot, seed=seed, regulariser=REGULARISER)
        rows = with_rank_columns(board.rows, group="criterion", value="bt", low="bt_ci_low", high="bt_ci_high")
        columns, regularised = (*COLUMNS, *RANK_COLUMNS), board.regularised
        if style_control:
            style_board, names = _style_control(args, games, params, seed)
            rows = [{**row, **style_board.rows[(str(row["criterion"]), str(row["system"]))]} for row in rows]
            columns = (*columns, *STYLE_COLUMNS)
            if args.table == "style":
                rows, columns = style_board.coefficients, COEFFICIENT_COLUMNS
            style_section = {"features": names, "coefficients": style_board.coefficients,
                             "order_changes": style_board.order_changes, "notes": style_board.notes}
            for line in style_board.warnings():
                print(line, file=sys.stderr)
    return PairwiseRun(rows=rows, columns=columns, table=table, read=read, games=games, seed=seed, params=params,
                       regularised=regularised, style_section=style_section)


def cmd_pairwise(args: argparse.Namespace) -> int:
    from metaeval.core.pairwise.bootstrap import PERCENTILES
    from metaeval.core.pairwise.bradley_terry import REGULARISER

    computed = run_pairwise(args)
    rows, columns, table, games, seed, params = (computed.rows, computed.columns, computed.table, computed.games,
                                                 computed.seed, computed.params)
    read, regularised, style_section = computed.read, computed.regularised, computed.style_section
    if args.format == "json":
        document: dict[str, Any] = {
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
        if style_section is not None:
            document["style"] = {**style_section, "conventions": {
                "model": "P(a beats b) = sigmoid(theta_a - theta_b + sum_k beta_k z_k), ties half a win each way",
                "covariates": "length: (len_a - len_b) / (len_a + len_b), words; feature_<name>: a - b; "
                              "style_<name>: as given; each divided by its root mean square over the games",
                "games": "the games whose covariates are all known (style_games); bt_nostyle: plain BT on them",
                "bootstrap": "the leaderboard's draws over the style games; percentiles 2.5 / 97.5",
                "coefficient": "beta per root-mean-square unit of the covariate, in log-odds"}}
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, columns, sys.stdout)
        if args.table != "wtl":
            print(f"seed {seed}, {args.n_boot} bootstrap rounds, {table.invalid} invalid judgments left out",
                  file=sys.stderr)
    return 0
