"""The notebook API: the commands of ``python -m metaeval`` as functions that return pandas DataFrames.

Each function runs its command's own code (:mod:`metaeval.cli`: the same argument parser, defaults, checks and
computing function), so a DataFrame has exactly the columns of the command's CSV output, in order, with the same
numbers (full precision; an empty CSV cell is NaN). Keyword arguments are the command's flags with ``_`` for ``-``
(``n_boot=200`` is ``--n-boot 200``; a list is a comma-separated value, ``True`` a flag), checked as on the
command line (a bad one raises :class:`ValueError` with the command's message).

Inputs are paths or in-memory objects: a dataset is a path, a :class:`~metaeval.core.io.corpus.Corpus` or a list
of consolidated records (dicts); ratings, judgments and scores are a path or a DataFrame with the file's columns.
An in-memory table is read through the same reader as a file (written to a temporary CSV first), so it is checked
the same way and its problems are reported with the same messages (naming ``ratings.csv`` etc. and the line).

>>> import metaeval
>>> scores = metaeval.score("fixtures/demo/consolidated.jsonl", measures=["rouge_l"], no_cache=True)
>>> list(scores.columns[:6])
['system', 'measure', 'egises', 'degress', 'perseval', 'accuracy']
"""
from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias

import pandas as pd

from metaeval.core.io.corpus import Corpus
from metaeval.core.io.records import table_columns

if TYPE_CHECKING:
    import plotly.graph_objects as go

__all__ = ["Report", "correlate", "edins", "pairwise", "probes", "report", "score"]

#: a dataset: a consolidated JSON / JSON Lines file, a Corpus, or its records
Dataset: TypeAlias = str | os.PathLike[str] | Corpus | Sequence[Mapping[str, Any]]
#: a table: a CSV file, or a DataFrame with its columns
Table: TypeAlias = str | os.PathLike[str] | pd.DataFrame

# flags that write files or draw progress: the functions return the data instead
_NOT_HERE = frozenset({"out", "out_dir", "format", "verbose", "no_progress", "full", "pivot_styles", "dataset"})


def _cell(value: object) -> object:
    """A cell as the CSV reads back: a Decimal as its float, an empty text as missing (NaN, as an empty cell)."""
    if isinstance(value, Decimal):
        return float(value)
    return None if value == "" else value


def _frame(rows: Sequence[Mapping[str, object]], columns: Sequence[str]) -> pd.DataFrame:
    """The rows as a DataFrame with the CSV's columns in order."""
    return pd.DataFrame([[_cell(row.get(column)) for column in columns] for row in rows], columns=list(columns))


class _Inputs(contextlib.ExitStack):
    """Paths for the command line: a path as it is, an in-memory input written to a temporary file (removed at
    exit) under the file name the messages will use."""

    def __init__(self) -> None:
        super().__init__()
        self._folder: Path | None = None

    def _file(self, name: str) -> Path:
        if self._folder is None:
            self._folder = Path(self.enter_context(tempfile.TemporaryDirectory(prefix="metaeval-")))
        return self._folder / name

    def table(self, value: Table | None, name: str) -> str | None:
        if value is None or isinstance(value, str | os.PathLike):
            return None if value is None else os.fspath(value)
        if not isinstance(value, pd.DataFrame):
            raise TypeError(f"{name}: a path or a pandas DataFrame, not {type(value).__name__}")
        path = self._file(name)
        value.to_csv(path, index=False)
        return str(path)

    def dataset(self, value: Dataset) -> tuple[str, Corpus | None]:
        """The dataset argument for the parser, and the Corpus to put in its place after parsing."""
        if isinstance(value, str | os.PathLike):
            return os.fspath(value), None
        if isinstance(value, Corpus):
            return value.source or "dataset", value
        if isinstance(value, Sequence) and all(isinstance(record, Mapping) for record in value):
            path = self._file("dataset.jsonl")
            path.write_text("".join(json.dumps(record) + "\n" for record in value), encoding="utf-8")
            return str(path), None
        raise TypeError(f"dataset: a path, a Corpus or a list of records, not {type(value).__name__}")


def _flags(options: Mapping[str, Any]) -> list[str]:
    argv: list[str] = []
    for name, value in options.items():
        if name in _NOT_HERE:
            raise TypeError(f"{name}: not an argument of the notebook API (it returns the data instead)")
        if value is None or value is False:
            continue
        flag = "--" + name.replace("_", "-")
        if value is True:
            argv.append(flag)
        else:  # --flag=VALUE: a value that starts with "-" (init=-5) stays a value
            text = ",".join(str(item) for item in value) if isinstance(value, list | tuple) else str(value)
            argv.append(f"{flag}={text}")
    return argv


def _args(command: str, positional: Sequence[str], options: Mapping[str, Any],
          extra: Sequence[str] = ()) -> argparse.Namespace:
    """The command's parsed arguments, as ``python -m metaeval COMMAND ...`` would have them; ValueError with the
    parser's message for a bad one."""
    from metaeval.cli import build_parser

    argv = [command, *positional, *extra, *_flags(options)]
    errors = io.StringIO()
    try:
        with contextlib.redirect_stderr(errors):
            return build_parser().parse_args(argv)
    except SystemExit:
        lines = [line for line in errors.getvalue().splitlines() if "error:" in line]
        message = lines[-1].split("error:", 1)[1].strip() if lines else errors.getvalue().strip()
        raise ValueError(f"metaeval.{command}: {message}") from None


def _dataset_args(command: str, dataset: Dataset, files: _Inputs, options: Mapping[str, Any],
                  extra: Sequence[str] = ()) -> argparse.Namespace:
    given, corpus = files.dataset(dataset)
    args = _args(command, [given], options, extra)
    if corpus is not None:
        args.dataset = corpus  # load_corpus returns a Corpus as it is
    return args


def score(dataset: Dataset, measures: Sequence[str] | str = ("rouge_l",), ratings: Table | None = None,
          aux: Sequence[str] | str | None = None, *, compat: str | None = None, **options: Any) -> pd.DataFrame:
    """``python -m metaeval score``: one row per system and measure (and ``hj:<aux>`` rows with ratings).

    ``options``: the command's other flags, e.g. ``beta=1.7``, ``missing="drop"``, ``systems=[...]``,
    ``feedback_ratings=...``, ``cache_dir=...`` or ``no_cache=True``, ``device="cuda"``.

    >>> frame = metaeval.score("fixtures/demo/consolidated.jsonl", measures=["rouge_l", "jsd"],
    ...                        ratings="fixtures/demo/ratings.csv", aux=["rouge_l"], no_cache=True)
    >>> sorted(set(frame["measure"]))
    ['hj:rouge_l', 'jsd', 'rouge_l']
    >>> len(frame)
    30
    """
    from metaeval.cli.score import run_score
    from metaeval.core.perseval.pipeline import COLUMNS

    with _Inputs() as files:
        args = _dataset_args("score", dataset, files, {
            "measures": measures, "ratings": files.table(ratings, "ratings.csv"), "aux": aux, "compat": compat,
            **{name: files.table(value, f"{name}.csv") if name == "feedback_ratings" else value
               for name, value in options.items()}}, ["--no-progress"])
        result = run_score(args)
    return _frame(result.table(), COLUMNS)


def correlate(scores: Table, *, column: str = "perseval", hj_column: str | None = None) -> pd.DataFrame:
    """``python -m metaeval correlate``: every automatic measure against every human one (Table 2), from
    :func:`score`'s frame (or its CSV) with ``hj:<aux>`` rows.

    >>> frame = metaeval.score("fixtures/demo/consolidated.jsonl", measures=["rouge_l"],
    ...                        ratings="fixtures/demo/ratings.csv", aux=["rouge_l"], no_cache=True)
    >>> grid = metaeval.correlate(frame)
    >>> grid[["auto_measure", "hj_measure", "n"]].values.tolist()
    [['rouge_l', 'hj:rouge_l', 10]]
    """
    from metaeval.cli.common import read_scores
    from metaeval.cli.correlate import grid_from_rows

    with _Inputs() as files:
        args = _args("correlate", [str(files.table(scores, "scores.csv"))],
                     {"column": column, "hj_column": hj_column})
        grid = grid_from_rows(read_scores(args.scores), args.column, args.hj_column or args.column)
    return _frame(grid, list(grid[0]) if grid else [])


@dataclass
class Report:
    """What ``python -m metaeval report --full`` writes, in memory.

    ``tables``: ``tables/<name>.csv`` as DataFrames; ``json``: ``report.json``'s document; ``run``: ``run.json``'s;
    ``files``: the folder's ``scores``, ``correlations`` (with ratings), ``documents`` and ``readers`` CSVs;
    :attr:`figures`: the report page's figures; :meth:`to_html`: the platform's self-contained offline report.
    """

    tables: dict[str, pd.DataFrame]
    json: dict[str, Any]
    run: dict[str, Any]
    files: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: the dataset's name (its file's, or the Corpus's source), for the HTML page's header
    dataset: str = ""

    @property
    def scores(self) -> pd.DataFrame:
        """``scores.csv``: as :func:`score` returns it."""
        return self.files["scores"]

    @property
    def figures(self) -> dict[str, go.Figure]:
        """Every figure of the report page by its element id (plotly ``Figure`` objects, from the one definition the
        page and the offline HTML use: :func:`metaeval.core.perseval.figures.report_figures`); ``id@option`` for
        each option of a figure the page switches (``fig-heatmap@kendall``)."""
        from metaeval.core.perseval.figures import report_figures

        return report_figures(self.json)

    def to_html(self, path: str | os.PathLike[str]) -> Path:
        """Write the report as one self-contained HTML file (plotly.js, the drawing script and the data inside;
        works offline): the page the platform's "Download the report (HTML)" gives, rendered from the same
        template. Needs Django (``pip install 'metaeval[html]'``). Returns the path."""
        try:
            import django  # noqa: F401
        except ImportError:
            raise ImportError("Report.to_html renders the platform's report template with Django, which is not "
                              "installed: pip install 'metaeval[html]'") from None
        from metaeval.report_page import standalone_report_html

        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(standalone_report_html(self.json, self.run, self.dataset), encoding="utf-8")
        return target


def report(dataset: Dataset, ratings: Table | None = None, *, seed: int | None = None,
           measures: Sequence[str] | str | None = None, aux: Sequence[str] | str | None = None,
           **options: Any) -> Report:
    """``python -m metaeval report --full``: scores, the HJ variants, correlations and the researcher report
    (bootstrap intervals, permutation tests, the beta ablation, stability, raters ...) as a :class:`Report`.

    ``seed``: of every random step (default: a fresh one, in ``report.json["parameters"]["seed"]``);
    ``measures``: default the command's (every lexical and neural measure; one whose model is missing is listed
    as unavailable); ``options``: the command's other flags (``n_boot=200``, ``resample="systems"``,
    ``feedback_ratings=...``, ``no_cache=True`` ...).

    >>> rep = metaeval.report("fixtures/demo/consolidated.jsonl", ratings="fixtures/demo/ratings.csv", seed=7,
    ...                       measures=["rouge_l", "jsd"], aux=["rouge_l"], n_boot=50, n_permutations=50,
    ...                       stability_samples=5, no_cache=True)
    >>> rep.json["parameters"]["seed"], "table_perseval" in rep.tables
    (7, True)
    >>> list(rep.files)
    ['scores', 'correlations', 'documents', 'readers']
    >>> rep.figures["fig-leaderboard"].layout.title.text is not None
    True
    """
    from metaeval.cli.report import run_report

    with _Inputs() as files:
        args = _dataset_args("report", dataset, files, {
            "ratings": files.table(ratings, "ratings.csv"), "seed": seed, "measures": measures, "aux": aux,
            **{name: files.table(value, f"{name}.csv") if name == "feedback_ratings" else value
               for name, value in options.items()}}, ["--full", "--no-progress"])
        computed = run_report(args)
    assert computed.document is not None  # --full
    return Report(
        tables={name: _frame(rows, table_columns(rows)) for name, rows in computed.document["tables"].items()},
        json=computed.document, run=computed.run,
        files={name: _frame(rows, columns) for name, (rows, columns) in computed.files.items()},
        dataset=_dataset_name(dataset),
    )


def _dataset_name(dataset: Dataset) -> str:
    """The dataset's name as the report's header gives it: the file's name, the Corpus's source, or "records"."""
    if isinstance(dataset, str | os.PathLike):
        return Path(dataset).name
    return dataset.source if isinstance(dataset, Corpus) else "records"


def pairwise(judgments: Table, *, seed: int | None = None, table: str = "ratings", **options: Any) -> pd.DataFrame:
    """``python -m metaeval pairwise``: Elo and Bradley-Terry per criterion and system with bootstrap intervals
    and ranks (``table="wtl"``: win/tie/loss per pair; ``"style"``: the style coefficients). The seed used is in
    ``frame.attrs["seed"]``. ``options``: ``k``, ``scale``, ``base``, ``init``, ``n_boot``, ``judge_kind``,
    ``style_control``, ``exclude_raters`` ...

    >>> board = metaeval.pairwise("fixtures/demo/judgments.csv", seed=1, n_boot=50)
    >>> list(board.columns[:3]), board.attrs["seed"]
    (['criterion', 'system', 'elo'], 1)
    """
    from metaeval.cli.pairwise import run_pairwise

    with _Inputs() as files:
        args = _args("pairwise", [str(files.table(judgments, "judgments.csv"))],
                     {"seed": seed, "table": table, **options})
        computed = run_pairwise(args)
    frame = _frame(computed.rows, computed.columns)
    frame.attrs["seed"] = computed.seed
    return frame


def edins(dataset: Dataset, *, gamma: float = 1.0, ratings: Table | None = None, **options: Any) -> pd.DataFrame:
    """``python -m metaeval edins``: e-DINS = DINS + gamma * PF per system (lower is better), and with
    ``ratings`` the human variant (``*_hj`` columns). ``options``: ``oov``, ``normalise``, ``systems`` ...

    >>> frame = metaeval.edins("fixtures/demo/consolidated.jsonl")
    >>> list(frame.columns)
    ['system', 'dins', 'pf', 'edins', 'documents', 'readers']
    """
    from metaeval.cli.edins import columns_of, edins_document

    with _Inputs() as files:
        args = _dataset_args("edins", dataset, files,
                             {"gamma": gamma, "ratings": files.table(ratings, "ratings.csv"), **options})
        document = edins_document(args)
    return _frame(document["systems"], columns_of(document))


def probes(scores: Table | None = None, *, dataset: Dataset | None = None, **options: Any) -> pd.DataFrame:
    """``python -m metaeval probes``: the iCOPERNICUS prompt-style probes per model, from a ``model,style,egises``
    table (``score(..., pivot_styles)``'s file, or a DataFrame) or a ``dataset`` whose systems are named
    ``MODEL:STYLE`` (then with a sign-flip test and a bootstrap interval per row). The CSV's other tables are in
    ``frame.attrs``: ``summary``, ``adversarial``, ``adversarial_summary`` (DataFrames) and ``seed``.
    ``options``: ``probes="defined"``, ``measure``, ``permutations``, ``n_boot``, ``seed`` ...

    >>> import pandas as pd
    >>> table = pd.DataFrame({"model": ["m"] * 2, "style": ["0-shot", "2-shot-wo-hist"], "egises": [0.30, 0.25]})
    >>> frame = metaeval.probes(table)
    >>> frame[["model", "probe", "a", "b", "paradox"]].values.tolist()
    [['m', 'PX-1', '0-shot', '2-shot-wo-hist', False]]
    """
    from metaeval.cli.probes import run_probes
    from metaeval.core.icopernicus.probes import ADVERSARIAL_COLUMNS, ADVERSARIAL_SUMMARY_COLUMNS, SUMMARY_COLUMNS

    with _Inputs() as files:
        positional: list[str] = [] if scores is None else [str(files.table(scores, "scores.csv"))]
        if dataset is not None:
            given, corpus = files.dataset(dataset)
            args = _args("probes", positional, options, ["--dataset", given])
            if corpus is not None:
                args.dataset = corpus
        else:
            args = _args("probes", positional, options)
        computed = run_probes(args)
    frame = _frame(computed.rows, computed.columns)
    frame.attrs.update(
        summary=_frame(computed.summary, SUMMARY_COLUMNS),
        adversarial=_frame(computed.adversarial, ADVERSARIAL_COLUMNS),
        adversarial_summary=_frame(computed.adversarial_summary, ADVERSARIAL_SUMMARY_COLUMNS),
        seed=computed.seed,
    )
    return frame

