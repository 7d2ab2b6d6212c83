"""``python -m metaeval probes``: iCOPERNICUS prompt-style probes (docs/conventions.md sec. 23).

    python -m metaeval probes SCORES.csv [--probes reported|defined] [--format csv|json] [--out FILE]
    python -m metaeval probes --dataset DATASET.jsonl [--measure jsd] [--missing error|drop]
                              [--permutations 10000] [--n-boot 1000] [--seed N] [--probes ...] [--format ...]

``SCORES.csv``: first columns ``model,style,egises`` (``score --pivot-styles`` writes such a file). With
``--dataset``, the systems named ``MODEL:STYLE`` (STYLE one of the six prompt styles) are scored by the pipeline
(EGISES with ``--measure``, JSD by default) and each row gains a paired sign-flip test and a bootstrap interval
over documents of the per-document DEGRESS difference.

CSV output: the per-model rows (``model,probe,a,b,egises_a,egises_b,delta_pp,paradox`` then, with
``--dataset``, ``documents,mean_diff_pp,p_value,p_exact,ci_low_pp,ci_high_pp``), a blank line, then the summary
table (``probe,a,b,models,paradox_models,mean_drop_pp,pass_models,mean_boost_pp``); when some model has a
contrastive style and its ``-adversarial`` variant, a blank line, the adversarial rows (:data:`ADVERSARIAL_COLUMNS`),
a blank line and their summary. JSON: ``{"rows", "summary", "adversarial", "adversarial_summary",
"conventions"}``.
"""
from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from metaeval.cli.args import at_least
from metaeval.core.icopernicus.prompt_styles import ALL_STYLES, PROBE_MODES
from metaeval.core.io.records import json_safe, write_csv

if TYPE_CHECKING:  # the numeric core: imported where the command runs (see metaeval.cli)
    from metaeval.core.icopernicus.probes import StyleScore
    from metaeval.core.perseval.pipeline import RunResult, ScoreRow

__all__ = ["add_probes_command", "cmd_probes", "pivot_columns", "pivot_rows", "styled_rows"]

PERMUTATIONS = 10_000
N_BOOT = 1000


def pivot_columns() -> tuple[str, ...]:
    """``score --pivot-styles`` columns: the first three are a ``probes`` scores file, then the score table's
    others."""
    from metaeval.core.perseval.pipeline import COLUMNS

    rest = tuple(column for column in COLUMNS if column not in ("egises", "measure"))
    return ("model", "style", "egises", "measure", *rest)


def styled_rows(result: RunResult, measure: str) -> tuple[list[tuple[str, str, ScoreRow]], list[str]]:
    """``(model, style, row)`` for each score row of ``measure`` whose system is named ``MODEL:STYLE``, and the
    names of the systems left out (any other name)."""
    from metaeval.core.icopernicus.probes import split_system

    kept: list[tuple[str, str, ScoreRow]] = []
    left_out: list[str] = []
    for row in result.rows:
        if row.measure != measure:
            continue
        named = split_system(row.system)
        if named is None:
            left_out.append(row.system)
        else:
            kept.append((*named, row))
    return kept, left_out


def pivot_rows(result: RunResult, measure: str) -> tuple[list[dict[str, object]], list[str]]:
    """The ``score --pivot-styles`` table (:func:`pivot_columns`) of ``measure``, and the systems left out."""
    kept, left_out = styled_rows(result, measure)
    return [{"model": model, "style": style, **row.as_dict()} for model, style, row in kept], left_out


def add_probes_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``probes`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "probes", help="iCOPERNICUS prompt-style probes: paradoxes, drops and boosts per model",
        description="iCOPERNICUS probes from a model,style,egises file or a dataset of MODEL:STYLE systems "
        "(docs/conventions.md sec. 23).")
    parser.add_argument("scores", nargs="?", help="CSV whose first columns are model,style,egises "
                        f"(styles: {', '.join(ALL_STYLES)})")
    parser.add_argument("--dataset", help="consolidated JSON / JSON Lines dataset whose systems are named "
                        "MODEL:STYLE (instead of SCORES.csv)")
    parser.add_argument("--probes", choices=PROBE_MODES, default="reported",
                        help="probe pairs: reported (the paper's tables, default) or defined (its sec. 3 text)")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.add_argument("--out", help="output file (default stdout)")
    data = parser.add_argument_group("with --dataset")
    data.add_argument("--measure", help="distance measure of EGISES (default jsd)")
    data.add_argument("--missing", choices=["error", "drop"], help="a missing summary: error (default) or drop")
    data.add_argument("--permutations", type=at_least(1), metavar="N",
                      help=f"sign-flip permutations (default {PERMUTATIONS}; exact enumeration when 2^documents "
                      "<= N)")
    data.add_argument("--n-boot", type=at_least(1), metavar="N", help=f"bootstrap rounds (default {N_BOOT})")
    data.add_argument("--seed", type=at_least(0), metavar="N",
                      help="seed of the permutations and the bootstrap (default: a fresh random seed, printed)")
    parser.set_defaults(handler=cmd_probes)
    return parser


def _dataset_only(args: argparse.Namespace) -> list[str]:
    names = {"measure": "--measure", "missing": "--missing", "permutations": "--permutations",
             "n_boot": "--n-boot", "seed": "--seed"}
    return [flag for name, flag in names.items() if getattr(args, name) is not None]


def _from_dataset(
    args: argparse.Namespace,
) -> tuple[list[StyleScore], dict[tuple[str, str], dict[str, float]], list[str]]:
    """Score the dataset's ``MODEL:STYLE`` systems: their EGISES (the decimal of the printed float), per-document
    DEGRESS per (model, style), and the systems left out."""
    from metaeval.cli.common import UsageError
    from metaeval.core.icopernicus.probes import computed_score, split_system
    from metaeval.core.io.loaders import load_corpus
    from metaeval.core.measures.registry import parse_measures
    from metaeval.core.perseval.pipeline import RunOptions, run_scores

    try:
        measures = parse_measures(args.measure or "jsd")
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if len(measures) != 1:
        raise UsageError("--measure takes one measure")
    corpus = load_corpus(args.dataset)
    systems = [name for name in corpus.systems if split_system(name) is not None]
    if not systems:
        raise UsageError(f"{args.dataset}: no system is named MODEL:STYLE with STYLE one of "
                         f"{', '.join(ALL_STYLES)}")
    result = run_scores(corpus, RunOptions(measures=measures, systems=systems, missing=args.missing or "error"))
    kept, _ = styled_rows(result, measures[0])
    scores: list[StyleScore] = []
    per_document: dict[tuple[str, str], dict[str, float]] = {}
    for model, style, row in kept:
        score = computed_score(model, style, row.score.egises)
        if score is None:
            raise UsageError(f'system "{row.system}": EGISES is undefined (no document with reader pairs)')
        scores.append(score)
        per_document[(model, style)] = {detail.doc_id: detail.degress for detail in row.score.per_document}
    return scores, per_document, [name for name in corpus.systems if name not in systems]


def _conventions(mode: str, settings: Mapping[str, object] | None) -> dict[str, object]:
    from metaeval.core.icopernicus.probes import PROBES

    out: dict[str, object] = {
        "probes": mode,
        "pairs": {probe.name: f"{probe.a} < {probe.b}" for probe in PROBES[mode]},
        "paradox": "EGISES(b) >= EGISES(a), compared exactly as read (a tie is a paradox)",
        "delta_pp": "(EGISES(a) - EGISES(b)) * 100, exact decimal arithmetic",
        "summary": "mean_drop_pp = mean |delta_pp| over paradox models; mean_boost_pp = mean delta_pp over pass "
                   "models; over the models with both styles",
        "adversarial": "worsening_pp = (EGISES(style-adversarial) - EGISES(style)) * 100, worsened iff > 0; "
                       "worsening_pct = worsening_pp / EGISES(style); per model with both",
    }
    if settings is not None:
        out["significance"] = {
            "difference": "per document d = DEGRESS(b) - DEGRESS(a) over the documents where both are defined",
            "test": "paired two-sided sign-flip test of mean(d); exact enumeration when 2^documents <= "
                    "permutations, else (1 + count) / (1 + permutations)",
            "bootstrap": "percentile interval of 100 * mean(d), documents drawn with replacement",
            "confidence": 0.95, **settings,
        }
    return out


def _csv_cell(value: object) -> object:
    return ("true" if value else "false") if isinstance(value, bool) else value


def _json_value(value: object) -> object:
    return float(value) if isinstance(value, Decimal) else value


@dataclass
class ProbesRun:
    """What ``probes`` computes before writing (the notebook API's :func:`metaeval.api.probes` uses it): the four
    tables of its CSV, in order, each as rows and columns."""

    rows: list[dict[str, object]]
    columns: Sequence[str]
    summary: list[dict[str, object]]
    adversarial: list[dict[str, object]]
    adversarial_summary: list[dict[str, object]]
    mode: str
    settings: dict[str, object] | None
    seed: int
    permutations: int
    n_boot: int
    left_out: list[str]


def run_probes(args: argparse.Namespace) -> ProbesRun:
    """Every table ``probes`` writes, from SCORES.csv or ``--dataset``; writes nothing."""
    from metaeval.cli.common import UsageError
    from metaeval.core.icopernicus.probes import (
        ROW_COLUMNS,
        SIGNIFICANCE_COLUMNS,
        probe_rows,
        probe_table,
        read_scores,
        summarise,
        summarise_worsening,
        worsening_rows,
    )

    if (args.scores is None) == (args.dataset is None):
        raise UsageError("probes needs SCORES.csv or --dataset DATASET (one of them)")
    settings: dict[str, object] | None = None
    per_document: dict[tuple[str, str], dict[str, float]] | None = None
    permutations, n_boot = args.permutations or PERMUTATIONS, args.n_boot or N_BOOT
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    left_out: list[str] = []
    if args.dataset is None:
        named = _dataset_only(args)
        if named:
            raise UsageError(f"{', '.join(named)} {'needs' if len(named) == 1 else 'need'} --dataset")
        scores = read_scores(args.scores)
    else:
        scores, per_document, left_out = _from_dataset(args)
        settings = {"measure": args.measure or "jsd", "missing": args.missing or "error",
                    "permutations": permutations, "n_boot": n_boot, "seed": seed, "systems_left_out": left_out}
    rows = probe_rows(scores, args.probes)
    summary = [item.as_dict() for item in summarise(rows, args.probes)]
    table = probe_table(rows, per_document, n_permutations=permutations, n_boot=n_boot, seed=seed)
    worsening = worsening_rows(scores, args.probes)
    adversarial = [row.as_dict() for row in worsening]
    adversarial_summary = [item.as_dict() for item in summarise_worsening(worsening)]
    columns: Sequence[str] = (*ROW_COLUMNS, *SIGNIFICANCE_COLUMNS) if settings is not None else ROW_COLUMNS
    return ProbesRun(rows=table, columns=columns, summary=summary, adversarial=adversarial,
                     adversarial_summary=adversarial_summary, mode=args.probes, settings=settings, seed=seed,
                     permutations=permutations, n_boot=n_boot, left_out=left_out)


def cmd_probes(args: argparse.Namespace) -> int:
    from metaeval.cli.common import open_out
    from metaeval.core.icopernicus.probes import (
        ADVERSARIAL_COLUMNS,
        ADVERSARIAL_SUMMARY_COLUMNS,
        SUMMARY_COLUMNS,
    )

    computed = run_probes(args)
    table, summary, adversarial, columns = computed.rows, computed.summary, computed.adversarial, computed.columns
    adversarial_summary, settings = computed.adversarial_summary, computed.settings
    seed, permutations, n_boot, left_out = computed.seed, computed.permutations, computed.n_boot, computed.left_out
    out = open_out(args.out)
    try:
        if args.format == "json":
            document = {
                "rows": [{key: _json_value(value) for key, value in row.items()} for row in table],
                "summary": [{key: _json_value(value) for key, value in row.items()} for row in summary],
                "adversarial": [{key: _json_value(value) for key, value in row.items()} for row in adversarial],
                "adversarial_summary": [{key: _json_value(value) for key, value in row.items()}
                                        for row in adversarial_summary],
                "conventions": _conventions(args.probes, settings),
            }
            json.dump(json_safe(document), out, indent=2, allow_nan=False)
            out.write("\n")
        else:
            write_csv([{key: _csv_cell(value) for key, value in row.items()} for row in table], columns, out)
            out.write("\n")
            write_csv(summary, SUMMARY_COLUMNS, out)
            if adversarial:
                out.write("\n")
                write_csv([{key: _csv_cell(value) for key, value in row.items()} for row in adversarial],
                          ADVERSARIAL_COLUMNS, out)
                out.write("\n")
                write_csv(adversarial_summary, ADVERSARIAL_SUMMARY_COLUMNS, out)
    finally:
        if out is not sys.stdout:
            out.close()
    if settings is not None:
        note = f"; {len(left_out)} systems not named MODEL:STYLE left out" if left_out else ""
        print(f"seed {seed}, {permutations} permutations, {n_boot} bootstrap rounds{note}", file=sys.stderr)
    return 0
