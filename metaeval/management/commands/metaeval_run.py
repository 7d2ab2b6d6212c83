"""``manage.py metaeval_run --dataset NAME [--study SLUG] [scoring options]``: score a stored dataset, store the run.

Takes the scoring options of ``python -m metaeval score`` (the same argument definitions) and prints the same
CSV or JSON; the ratings for the HJ variants come from ``--study`` instead of ``--ratings``.
"""
from __future__ import annotations

import argparse
import io
import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metaeval import services
from metaeval.cli.common import UsageError
from metaeval.cli.scoring import add_scoring_arguments, options_from_args
from metaeval.core.io.corpus import DataError
from metaeval.core.io.fileio import ImporterError
from metaeval.core.io.records import run_document, write_csv
from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.cache import open_cache
from metaeval.core.perseval.pipeline import COLUMNS, DEFAULT_AUX, RunResult
from metaeval.management.lookups import dataset_named, study_of


class Command(BaseCommand):
    help = (
        "Score a dataset (EGISES/DEGRESS/PerSEval/accuracy per system and measure; HJ variants from a study's "
        "ratings), store the run and print the score table as `python -m metaeval score` does."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="name of the dataset to score")
        parser.add_argument("--study", help="slug of a study of that dataset whose ratings give the HJ variants")
        add_scoring_arguments(parser)
        parser.add_argument("--format", choices=["csv", "json"], default="csv")
        parser.add_argument("--out", help="output file (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = dataset_named(options["dataset"])
        study = study_of(options["study"], dataset) if options["study"] else None
        if options["aux"] and study is None:
            raise CommandError("--aux needs --study (the HJ variants use that study's ratings)")
        try:
            run_options = options_from_args(
                argparse.Namespace(**options), beta_default=1.0, has_ratings=study is not None
            )
        except UsageError as exc:
            raise CommandError(str(exc)) from exc
        if study is not None and not run_options.aux:
            run_options.aux = list(DEFAULT_AUX)
        progress = (lambda event: self.stderr.write(str(event))) if options["verbosity"] > 1 else None
        try:
            with nullcontext(None) if options["no_cache"] else open_cache(options["cache_dir"]) as opened:
                run, result = services.run_execute_with_result(
                    dataset=dataset, study=study, options=run_options, cache=opened, progress=progress
                )
        except (DataError, ImporterError, MeasureUnavailable, OSError) as exc:
            raise CommandError("; ".join([str(exc), *getattr(exc, "__notes__", [])])) from exc
        text = _render(result, options["format"])
        if options["out"]:
            path = Path(options["out"])
            try:
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text, encoding="utf-8")
            except OSError as exc:
                raise CommandError(f"cannot write {path}: {exc.strerror or exc} (stored run {run.pk})") from exc
        else:
            self.stdout.write(text, ending="")
        self.stderr.write(f"stored metaeval run {run.pk} ({len(run.scores)} score rows, data {run.data_hash[:12]})")


def _render(result: RunResult, format: str) -> str:
    """Exactly what ``python -m metaeval score --format FORMAT`` prints."""
    out = io.StringIO()
    if format == "json":
        json.dump(run_document(result), out, indent=2)
        out.write("\n")
    else:
        write_csv(result.table(), COLUMNS, out)
    return out.getvalue()
