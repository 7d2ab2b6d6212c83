"""``python -m metaeval``: score, correlate and report on files, no database needed.

    python -m metaeval score DATASET [--measures rouge_l,jsd] [--beta 1.7] [--ratings R.csv --aux rouge_l]
                                     [--compat authors] [--missing error|drop] [--format csv|json] [--out FILE]
                                     [--pivot-styles] [--feedback-ratings R.csv [--feedback-scale raw]]
    python -m metaeval correlate SCORES.csv [--column perseval] [--out FILE]
    python -m metaeval report DATASET (--ratings R.csv | --feedback-ratings F.csv) [--out-dir DIR]
                              [--full [--seed N] [--n-boot N] [--resample both|systems|documents]
                                      [--n-permutations N] [--stability-samples N]]

Neural measures (``bertscore``, ``infolm``) take ``--bertscore-model`` / ``--infolm-model`` (a local folder or a
name in the Hugging Face cache), ``--device``, ``--dtype`` and ``--measure-option NAME.KEY=VALUE``.

Numbers are printed with full float precision (Python's shortest round-trip repr).

**Fast ``--help``: the lazy-import rule.** Every ``--help`` builds the whole parser, so this module, every
``metaeval/cli_*.py`` and what they import at module level must not load the numeric stack (numpy, scipy, pandas,
torch, transformers, nltk, rouge_score, rapidfuzz) nor Django. A command module follows this pattern:

* at module level: the standard library, :mod:`metaeval.cli.args` and the light core modules (``corpus``,
  ``fileio``, ``loaders``, ``options``, ``perseval``, ``records``, ``display``, ``measures.registry``,
  ``pairwise.judgments``, ``judges.*``, ``report_options``, ``prompt_styles``, ``zopf_params`` ...); names
  needed only in annotations go under ``if TYPE_CHECKING:``;
* ``add_<name>_command(commands)`` builds the parser from those only; a default or a list of choices that lives
  in a heavy module moves to a light one beside it (as :mod:`metaeval.core.perseval.report_options` did);
* ``cmd_<name>(args)`` (and its helpers) import the numeric core in their body, where the command runs.

``tests/metaeval/test_cli_help.py`` runs ``python -m metaeval <command> --help`` for every command of the parser
and fails when one of those modules is loaded; ``benchmarks/cli_help_bench.py`` prints the wall times.

Errors (:mod:`metaeval.cli.parser`): a bad option value prints one short usage line and the error; a file that
cannot be read, one line naming it; a bad input file, every problem as ``file:line:`` in line order.
"""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from metaeval.cli.accuracy import add_accuracy_command
from metaeval.cli.agreement import add_agreement_command
from metaeval.cli.alt_test import add_alt_test_command
from metaeval.cli.common import UsageError
from metaeval.cli.consistency import add_consistency_command
from metaeval.cli.correlate import add_correlate_command
from metaeval.cli.edins import add_edins_command
from metaeval.cli.judge import add_judge_command
from metaeval.cli.meta_accuracy import add_meta_accuracy_command
from metaeval.cli.pairwise import add_pairwise_command
from metaeval.cli.parser import CommandLineParser, os_error_text
from metaeval.cli.power import add_power_command
from metaeval.cli.ppi import add_ppi_command
from metaeval.cli.probes import add_probes_command
from metaeval.cli.prompts import add_prompts_command
from metaeval.cli.report import add_report_command
from metaeval.cli.score import add_score_command
from metaeval.cli.simulate import add_simulate_command
from metaeval.cli.surrogates import add_surrogates_command
from metaeval.cli.zopf import add_zopf_command
from metaeval.core.io.corpus import DataError
from metaeval.core.io.fileio import ImporterError

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    from metaeval._version import __version__

    parser = CommandLineParser(prog="python -m metaeval", description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="version", version=f"metaeval {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    add_score_command(commands)
    add_correlate_command(commands)
    add_report_command(commands)
    add_zopf_command(commands)
    add_pairwise_command(commands)
    add_consistency_command(commands)
    add_accuracy_command(commands)
    add_meta_accuracy_command(commands)
    add_judge_command(commands)
    add_edins_command(commands)
    add_prompts_command(commands)
    add_probes_command(commands)
    add_surrogates_command(commands)
    add_power_command(commands)
    add_simulate_command(commands)
    add_agreement_command(commands)
    add_ppi_command(commands)
    add_alt_test_command(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args))
    except OSError as exc:
        print(f"error: {os_error_text(exc)}", file=sys.stderr)
        return 2
    except (UsageError, DataError, ImporterError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:
        from metaeval.core.measures.base import MeasureUnavailable  # loaded by then: the command scored something

        if not isinstance(exc, MeasureUnavailable):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 2
