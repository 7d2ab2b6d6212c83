"""``python -m metaeval surrogates``: OpenAI feedback ratings -> surrogate personalized summaries (perseval-tmlr
sec. 6.2; docs/conventions.md sec. 25).

    python -m metaeval surrogates FEEDBACK.jsonl --out dataset.jsonl [--axis overall] [--scale-max 7]
        [--gold-min 7] [--policies A,B] [--policy-pattern REGEX] [--gold-from all|kept] [--gold-order policy|file]
        [--separator " "] [--duplicates first|mean|error] [--min-annotators 2] [--report R.json] [--ratings-out R.csv]

Writes the consolidated dataset (readers = annotators, ``user`` = the combined gold, systems = policies), the
report ``<out>.report.json`` and the ratings ``<out>.ratings.csv`` of the OpenAI PerSEval-HJ variant (``score
--feedback-ratings``); prints what was kept and dropped.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from metaeval.cli.args import at_least, comma_list, number
from metaeval.core.feedback.reader import read_feedback
from metaeval.core.feedback.surrogates import SurrogateOptions, SurrogateResult, build_surrogates

__all__ = ["add_surrogate_options", "add_surrogates_command", "build_from_args", "surrogate_options"]


def _separator(text: str) -> str:
    """The separator as typed, with the escapes ``\\n``, ``\\t`` and ``\\\\`` read as a newline, a tab, a backslash."""
    out, index = [], 0
    while index < len(text):
        pair = text[index:index + 2]
        if pair in ("\\n", "\\t", "\\\\"):
            out.append({"\\n": "\n", "\\t": "\t", "\\\\": "\\"}[pair])
            index += 2
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def add_surrogate_options(parser: Any) -> None:
    """The builder's options (shared with ``manage.py import_feedback``)."""
    parser.add_argument("--axis", default="overall", help="the Likert axis (default overall; accuracy, coverage, "
                        "coherence in the public files)")
    parser.add_argument("--scale-max", type=at_least(2), default=7, metavar="R_MAX",
                        help="ratings are 1..R_MAX (default 7)")
    parser.add_argument("--gold-min", type=number(1), default=7.0, metavar="R",
                        help="the lowest rating that enters the combined gold (default 7: the paper's 'above 6 of 7')")
    parser.add_argument("--policies", type=comma_list, metavar="A,B",
                        help="exact policy names kept as systems (default: every policy)")
    parser.add_argument("--policy-pattern", metavar="REGEX",
                        help="keep the policies this regular expression finds (with --policies: either selects)")
    parser.add_argument("--gold-from", choices=["all", "kept"], default="all",
                        help="the combined gold from every policy's summaries (default) or the kept policies' only")
    parser.add_argument("--gold-order", choices=["policy", "file"], default="policy",
                        help="order of the gold's summaries: by policy name, then text (default), or file order")
    parser.add_argument("--separator", type=_separator, default=" ",
                        help=r"joins the gold's summaries and a surrogate's copies (default one space; \n allowed)")
    parser.add_argument("--duplicates", choices=["first", "mean", "error"], default="first",
                        help="the same (article, annotator, policy) rated twice: the first line (default), the mean "
                        "rating, or stop")
    parser.add_argument("--min-annotators", type=at_least(1), default=2, metavar="N",
                        help="keep an article with at least N annotators with a gold (default 2)")


def surrogate_options(args: argparse.Namespace | dict[str, Any]) -> SurrogateOptions:
    """:class:`~metaeval.core.feedback.surrogates.SurrogateOptions` from parsed arguments (``ValueError`` when
    invalid)."""
    values: dict[str, Any] = args if isinstance(args, dict) else vars(args)
    get = values.__getitem__
    return SurrogateOptions(
        scale_max=get("scale_max"), gold_min=get("gold_min"),
        policies=tuple(get("policies")) if get("policies") is not None else None,
        policy_pattern=get("policy_pattern"), gold_from=get("gold_from"), gold_order=get("gold_order"),
        separator=get("separator"), duplicates=get("duplicates"), min_annotators=get("min_annotators"),
    )


def build_from_args(path: str | Path, args: argparse.Namespace | dict[str, Any]) -> SurrogateResult:
    """Read ``path`` and build the surrogates as ``args`` say (a Namespace or the options dict of a command)."""
    options = surrogate_options(args)
    axis = args["axis"] if isinstance(args, dict) else args.axis
    records = read_feedback(path, axis=axis, scale_max=options.scale_max)
    return build_surrogates(records, options, axis=axis, source=Path(path).name)


def add_surrogates_command(commands: Any) -> None:
    """Add the ``surrogates`` subcommand to the CLI's subparsers."""
    parser = commands.add_parser("surrogates", help="OpenAI feedback ratings -> surrogate personalized summaries "
                                 "(PerSEval sec. 6.2)", description=__doc__.split("\n")[0])
    parser.add_argument("feedback", help="axis-evals JSON Lines file of summarize-from-feedback")
    parser.add_argument("--out", required=True, help="the consolidated dataset to write (JSON Lines)")
    parser.add_argument("--report", help="the report (default <out>.report.json)")
    parser.add_argument("--ratings-out", help="the OpenAI HJ ratings (default <out>.ratings.csv)")
    add_surrogate_options(parser)
    parser.set_defaults(handler=cmd_surrogates)


def cmd_surrogates(args: argparse.Namespace) -> int:
    from metaeval.cli.common import UsageError

    try:
        result = build_from_args(args.feedback, args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    out, report, ratings = result.write(args.out, report=args.report, ratings=args.ratings_out)
    print(result.summary())
    print(f"wrote {out} ({len(result.records)} articles), {report}, {ratings}", file=sys.stderr)
    return 0
