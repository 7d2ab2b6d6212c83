"""``python -m metaeval report``: scores, the HJ variants, correlations and per-document detail in one folder;
``--full`` adds the researcher report."""
from __future__ import annotations

import argparse
import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from metaeval.cli.args import at_least, rater_choice
from metaeval.core.io.records import json_safe, run_document, table_columns, write_csv
from metaeval.core.measures.registry import REPORT_DEFAULT
from metaeval.core.perseval.report_options import REPORT_OPTIONS

if TYPE_CHECKING:  # the numeric core: imported where a command runs (see the module's docstring)
    from metaeval.core.perseval.pipeline import Progress, RunResult
    from metaeval.core.perseval.studies import StudyData


from metaeval.cli.common import UsageError, fmt_cell, sortable
from metaeval.cli.correlate import grid_from_rows, grid_text
from metaeval.cli.scoring import (
    REPORT_BETA,
    _run,
    _study,
    add_report_arguments,
    add_run_arguments,
    options_from_args,
    progress_for,
    read_rating_rows,
)


@dataclass
class ReportRun:
    """What ``report`` computes before writing anything (the notebook API's :func:`metaeval.api.report` returns the
    same): the run, its correlation grid, its files' tables and, with ``--full``, ``report.json``'s document."""

    result: RunResult
    grid: list[dict[str, object]]
    #: ``run.json``'s document
    run: dict[str, Any]
    #: name -> (rows, columns): ``scores``, ``correlations`` (with HJ rows only), ``documents``, ``readers``
    files: dict[str, tuple[list[dict[str, object]], list[str]]]
    document: dict[str, Any] | None = None
    settings: dict[str, Any] | None = None


def run_report(args: argparse.Namespace) -> ReportRun:
    """Score, correlate and (with ``--full``) build the full report, as ``report`` does; writes nothing."""
    options = options_from_args(args, beta_default=REPORT_BETA,
                                has_ratings=bool(args.ratings or args.feedback_ratings))
    settings = full_settings(args)
    with progress_for(args, options, report=settings is not None) as progress:
        data = _study(args, options, progress) if settings is not None else None
        result = data.result if data is not None else _run(args, options, progress)
        assert result is not None
        grid = grid_from_rows(result.table(), "perseval", "perseval") if options.aux else []
        document = (full_document(args, data, settings, progress)
                    if data is not None and settings is not None else None)
    return ReportRun(result=result, grid=grid, run={**run_document(result), "correlations": json_safe(grid)},
                     files=report_tables(result, grid), document=document, settings=settings)


def cmd_report(args: argparse.Namespace) -> int:
    """Scores for every lexical measure, HJ variants, the correlation grid and per-document detail, in one folder."""
    computed = run_report(args)
    full = write_files(args, computed)
    print(summary_text(computed.result, computed.grid))
    print(f"\nWrote {Path(args.out_dir)}/scores.csv, correlations.csv, documents.csv, readers.csv, run.json")
    if full is not None:
        print(full)
    return 0


def report_tables(result: RunResult, grid: Sequence[Mapping[str, object]],
                  ) -> dict[str, tuple[list[dict[str, object]], list[str]]]:
    """The report folder's CSV tables as (rows, columns) by file name (``correlations`` only with a grid)."""
    from metaeval.core.perseval.pipeline import COLUMNS

    tables: dict[str, tuple[list[dict[str, object]], list[str]]] = {"scores": (result.table(), list(COLUMNS))}
    if grid:
        tables["correlations"] = ([dict(cell) for cell in grid], list(grid[0]))
    details = [
        {"system": row.system, "measure": row.measure, **vars(detail)}
        for row in result.rows for detail in row.score.per_document
    ]
    tables["documents"] = (details, list(details[0]) if details else ["system", "measure"])
    readers = [
        {"system": row.system, "measure": row.measure, **vars(detail)}
        for row in result.rows for detail in row.score.per_reader
    ]
    tables["readers"] = (readers, list(readers[0]) if readers else ["system", "measure"])
    return tables


def write_files(args: argparse.Namespace, computed: ReportRun) -> str | None:
    """The report folder's files (and, with the full report, ``report.json`` and ``tables/``); returns the line
    that names the full report's files, or None."""
    folder = Path(args.out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    for name, (rows, columns) in computed.files.items():
        with open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
            write_csv(rows, columns, handle)
    with open(folder / "run.json", "w", encoding="utf-8") as handle:
        json.dump(computed.run, handle, indent=2)
    if computed.document is None or computed.settings is None:
        return None
    return write_full_report(computed.document, computed.settings, folder)


def full_settings(args: argparse.Namespace) -> dict[str, Any] | None:
    """``build_report`` settings from ``report --full`` (a fresh random seed unless ``--seed``); None without it."""
    seed = getattr(args, "seed", None)
    if not getattr(args, "full", False):
        named = ["--seed"] if seed is not None else []
        named += [option.flag for option in REPORT_OPTIONS if getattr(args, option.name, None) is not None]
        if named:
            verb = "needs" if len(named) == 1 else "need"
            raise UsageError(f"{', '.join(named)} {verb} --full (settings of the full report)")
        return None
    settings = report_settings(args)
    settings["seed"] = secrets.randbelow(2**31) if seed is None else seed
    return settings


def report_settings(args: argparse.Namespace) -> dict[str, Any]:
    """Every :data:`~metaeval.core.perseval.report.REPORT_OPTIONS` setting: the flag's value, else the table's
    default."""
    given = {option.name: getattr(args, option.name, None) for option in REPORT_OPTIONS}
    return {option.name: option.default if given[option.name] is None else given[option.name]
            for option in REPORT_OPTIONS}


def full_document(args: argparse.Namespace, data: StudyData, settings: Mapping[str, Any],
                  progress: Progress | None = None) -> dict[str, Any]:
    """``report.json``'s document: :func:`metaeval.core.perseval.report.build_report` on the run's data."""
    from metaeval.core.perseval.report import build_report

    return build_report(
        data, params=data.options.params,
        rating_rows=read_rating_rows(args.ratings, rater_choice(args)) if args.ratings else None,
        excluded_raters=data.ratings.exclusions.raters_left_out if data.ratings is not None else (),
        progress=progress, **settings,
    )


def write_full_report(document: Mapping[str, Any], settings: Mapping[str, Any], folder: Path) -> str:
    """``report.json`` and ``tables/<name>.csv`` per table; returns the line that names them and the seed."""
    with open(folder / "report.json", "w", encoding="utf-8") as handle:
        json.dump(document, handle, indent=2, allow_nan=False)
        handle.write("\n")
    tables = folder / "tables"
    tables.mkdir(exist_ok=True)
    for name, rows in document["tables"].items():
        with open(tables / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
            write_csv(rows, table_columns(rows), handle)
    return f"Wrote {folder}/report.json and {len(document['tables'])} tables in {tables}/ (seed {settings['seed']})"


def summary_text(result: RunResult, grid: Sequence[dict[str, object]]) -> str:
    """A plain-text leaderboard per measure (by PerSEval) and the HJ correlation grid."""
    lines: list[str] = []
    by_measure: dict[str, list[dict[str, object]]] = {}
    for row in result.table():
        by_measure.setdefault(str(row["measure"]), []).append(row)
    beta = result.options.params.beta
    name_width = max([22, *(len(str(row["system"])) + 2 for row in result.table())])
    for measure, rows in by_measure.items():
        lines.append(f"\n{measure}  (PerSEval beta={beta})")
        lines.append(f"  {'system':<{name_width}}{'PerSEval':>10}{'DEGRESS':>10}{'EGISES':>10}{'acc.dist':>10}"
                     f"{'P-Acc':>10}")
        for row in sorted(rows, key=lambda r: -sortable(r["perseval"])):
            lines.append(
                f"  {row['system']!s:<{name_width}}" + "".join(
                    f"{fmt_cell(row[key]):>10}" for key in ("perseval", "degress", "egises", "accuracy", "p_acc")
                )
            )
    if result.models:
        lines.append("\nModels")
        lines.extend(f"  {name}: {text}" for name, text in result.models.items())
    if result.precision:
        from metaeval.core.perseval.precision import PrecisionCheck

        lines.append("\nLow precision (float32 check)")
        lines.extend(f"  {PrecisionCheck(**check).message()}" for check in result.precision.values())  # type: ignore[arg-type]
    if result.unavailable:
        lines.append("\nUnavailable measures (not scored)")
        lines.extend(f"  {name}: {text}" for name, text in result.unavailable.items())
    if grid:
        lines.append("")
        lines.extend(grid_text(grid))
    return "\n".join(lines).lstrip("\n")


_natural = at_least(0)


def add_report_command(commands: Any) -> None:
    report = commands.add_parser("report", help="lexical + neural measures, HJ and correlations into a folder")
    add_run_arguments(report, measures=",".join(REPORT_DEFAULT), beta_default=REPORT_BETA)
    report.set_defaults(report_unavailable=True)
    report.add_argument("--out-dir", default="report", help="folder for the report files (default ./report)")
    full = report.add_argument_group("full report (--full)")
    full.add_argument(
        "--full",
        action="store_true",
        help="also write report.json (bootstrap CIs, permutation tests, beta ablation, stability, raters) and "
        "tables/<name>.csv",
    )
    full.add_argument(
        "--seed", type=_natural, metavar="N", help="seed of every random step (default: a fresh random seed, printed)"
    )
    add_report_arguments(full)
    report.set_defaults(handler=cmd_report)

