"""``python -m metaeval power``: how many judgments a study needs (docs/conventions.md sec. 27).

    python -m metaeval power pairwise --win-rate P [P ...] [--alpha 0.05] [--power 0.8] [--tie-rate 0]
    python -m metaeval power elo --gap G [G ...] [--alpha 0.05] [--power 0.8] [--tie-rate 0]
    python -m metaeval power hj --dataset D --pilot RATINGS [--raters 1..K] [--measures M] [--aux X]
                                [--replicates 100] [--n-boot 200] [--seed N]

``pairwise``/``elo``: one row per win rate (gap), first columns exactly
``win_rate,alpha,power,decisive,achieved_power,judgments``: the smallest number of decisive judgments for which the
exact two-sided binomial test of 1/2 at ``alpha`` rejects with probability >= ``power``, the exact power there, and
the judgments with ties (``ceil(decisive / (1 - tie_rate))``). ``hj``: per number of raters per questionnaire, the
expected bootstrap-interval width of each PerSEval-HJ-vs-automatic correlation and the share of replicates whose
interval excludes 0, by resampling the pilot's raters per questionnaire.
"""
from __future__ import annotations

import argparse
import json
import secrets
import sys
from typing import Any

from metaeval.cli.args import add_rater_arguments, at_least, number, rater_choice, say_exclusions
from metaeval.core.io.records import json_safe, write_csv

__all__ = ["POWER_COLUMNS", "add_power_command", "cmd_power", "rater_counts"]

POWER_COLUMNS = ("win_rate", "alpha", "power", "decisive", "achieved_power", "judgments", "tie_rate")


def _probability(text: str) -> float:
    value = number(0, above=True)(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number strictly between 0 and 1")
    return value


def _rate(text: str) -> float:
    value = number(0)(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number >= 0 and below 1")
    return value


def rater_counts(text: str) -> list[int]:
    """``1..K`` (every count from 1 to K, or A..B) or a comma list ``1,2,4``; each at least 1 (argparse type)."""
    text = text.strip()
    try:
        if ".." in text:
            low, high = (int(part) for part in text.split("..", 1))
            counts = list(range(low, high + 1))
        else:
            counts = [int(part) for part in text.split(",")]
    except ValueError:
        counts = []
    if not counts or min(counts) < 1 or len(set(counts)) != len(counts) or len(counts) > 100:
        raise argparse.ArgumentTypeError(f"{text!r} is not 1..K or a list of different counts >= 1 (at most 100)")
    return counts


def _add_test_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--alpha", type=_probability, default=0.05, help="level of the two-sided test (0.05)")
    parser.add_argument("--power", type=_probability, default=0.8, help="target power (0.8)")
    parser.add_argument("--tie-rate", type=_rate, default=0.0, metavar="T",
                        help="expected share of ties, 0 <= T < 1 (default 0): judgments = ceil(decisive / (1 - T))")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")


def add_power_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``power`` (pairwise, elo, hj) to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "power", help="judgments needed: exact binomial power of a system pair, or raters per questionnaire",
        description="Sample size and power for planning a study (docs/conventions.md sec. 27).")
    kinds = parser.add_subparsers(dest="power_kind", required=True)
    pairwise = kinds.add_parser("pairwise", help="decisive judgments for one system pair with a given win rate",
                                description="The smallest n of decisive judgments whose exact two-sided binomial "
                                "test of 1/2 rejects with the target power (docs/conventions.md sec. 27).")
    pairwise.add_argument("--win-rate", type=_probability, nargs="+", action="extend", required=True, metavar="P",
                          help="true win rate among decisive judgments, 0 < P < 1, P != 0.5 (several: one row each)")
    _add_test_arguments(pairwise)
    elo = kinds.add_parser("elo", help="the same for an Elo gap: P = 1 / (1 + 10^(-G/400))",
                           description="As `power pairwise` with the win rate of an Elo gap G: "
                           "P = 1 / (1 + 10^(-G/400)).")
    elo.add_argument("--gap", type=number(-1e6), nargs="+", action="extend", required=True, metavar="G",
                     help="Elo gap between the two systems, not 0 (several: one row each)")
    _add_test_arguments(elo)
    hj = kinds.add_parser("hj", help="raters per questionnaire: expected interval widths from pilot ratings",
                          description="Per number of raters per questionnaire: the expected bootstrap-interval width "
                          "of each PerSEval-HJ-vs-automatic correlation and the probability that it excludes 0, by "
                          "resampling the pilot's raters per questionnaire (docs/conventions.md sec. 27).")
    hj.add_argument("--dataset", required=True, help="consolidated JSON / JSON Lines dataset")
    hj.add_argument("--pilot", required=True, metavar="RATINGS.csv",
                    help="pilot ratings (the survey's export: doc_id,system,uid1,uid2,rating,rater[,study,"
                    "questionnaire,...]); without a questionnaire column a (document, reader pair) is one")
    add_rater_arguments(hj.add_argument_group("raters of --pilot (default: all but those the file marks excluded)"))
    hj.add_argument("--raters", type=rater_counts, default=[1, 2, 3], metavar="1..K",
                    help="raters per questionnaire to plan for: 1..K or a list 1,2,4 (default 1..3)")
    hj.add_argument("--replicates", type=at_least(1), default=100, metavar="N", help="resampled studies per count "
                    "(default 100)")
    hj.add_argument("--n-boot", type=at_least(1), default=200, metavar="N",
                    help="bootstrap samples of each replicate's interval (default 200)")
    hj.add_argument("--confidence", type=_probability, default=0.95, help="interval confidence (0.95)")
    hj.add_argument("--resample", choices=["both", "systems", "documents"], default="both",
                    help="what the interval's bootstrap resamples (default both, as the report)")
    hj.add_argument("--seed", type=at_least(0), metavar="N", help="seed (default: a fresh one, printed on stderr)")
    hj.add_argument("--format", choices=["csv", "json"], default="csv")
    from metaeval.cli.scoring import (
        add_scoring_arguments,  # the score command's options (measures, aux, PerSEval, cache)
    )

    add_scoring_arguments(hj, measures="rouge_l")
    parser.set_defaults(handler=cmd_power)
    return parser


def cmd_power(args: argparse.Namespace) -> int:
    if args.power_kind == "hj":
        return _cmd_hj(args)
    from metaeval.cli.common import UsageError
    from metaeval.core.planning.power import elo_win_rate, sample_size

    rows: list[dict[str, object]] = []
    columns: tuple[str, ...] = POWER_COLUMNS
    values = args.win_rate if args.power_kind == "pairwise" else args.gap
    for value in values:
        p = value if args.power_kind == "pairwise" else elo_win_rate(value)
        try:
            row = sample_size(p, alpha=args.alpha, power=args.power, tie_rate=args.tie_rate).as_row()
        except ValueError as exc:
            what = f"--win-rate {value!r}" if args.power_kind == "pairwise" else f"--gap {value!r}"
            raise UsageError(f"{what}: {exc}") from None
        if args.power_kind == "elo":
            row["elo_gap"] = value
        rows.append(row)
    if args.power_kind == "elo":
        columns = (*POWER_COLUMNS, "elo_gap")
    if args.format == "json":
        document = {"test": "exact two-sided binomial test of 1/2 (scipy.stats.binomtest), ties removed",
                    "judgments": "ceil(decisive / (1 - tie_rate))", "rows": rows}
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(rows, columns, sys.stdout)
    return 0


def _cmd_hj(args: argparse.Namespace) -> int:
    from metaeval.cli.common import UsageError
    from metaeval.cli.scoring import options_from_args, read_rating_rows
    from metaeval.core.io.loaders import load_corpus, load_ratings
    from metaeval.core.measures.cache import open_cache
    from metaeval.core.perseval.pipeline import DEFAULT_AUX
    from metaeval.core.planning.hj_power import COLUMNS, hj_power

    options = options_from_args(args, beta_default=1.0, has_ratings=True)
    if not options.aux:
        options.aux = list(DEFAULT_AUX)
    corpus = load_corpus(args.dataset)
    ratings = load_ratings(args.pilot, raters=rater_choice(args))
    say_exclusions(ratings.exclusions, ratings.source)
    extras = read_rating_rows(args.pilot, rater_choice(args))
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    settings = {"raters": args.raters, "replicates": args.replicates, "n_boot": args.n_boot,
                "confidence": args.confidence, "resample": args.resample, "seed": seed}
    try:
        if args.no_cache:
            result = hj_power(corpus, ratings, extras, options, **settings)
        else:
            with open_cache(args.cache_dir) as cache:
                result = hj_power(corpus, ratings, extras, options, cache=cache, **settings)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.format == "json":
        document = {"dataset": args.dataset, "pilot": ratings.source, "parameters": {**settings,
                    "measures": list(options.measures), "aux": list(options.aux)},
                    "pilot_summary": {"questionnaires": result.questionnaires,
                                      "single_rater_questionnaires": result.single_rater_questionnaires,
                                      "pilot_raters_max": result.pilot_raters_max},
                    "rows": result.rows}
        json.dump(json_safe(document), sys.stdout, indent=2, allow_nan=False)
        sys.stdout.write("\n")
    else:
        write_csv(result.rows, COLUMNS, sys.stdout)
        print(f"seed {seed}; pilot: {result.questionnaires} questionnaires, {result.single_rater_questionnaires} "
              f"rated by one rater, at most {result.pilot_raters_max} raters per questionnaire", file=sys.stderr)
    return 0
