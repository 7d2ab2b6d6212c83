"""``manage.py import_feedback FEEDBACK.jsonl --dataset NAME``: build the surrogate dataset of OpenAI feedback
ratings (docs/conventions.md sec. 25) and import it (all or nothing)."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metaeval.cli.surrogates import add_surrogate_options, build_from_args
from survey.importers.commands import command_errors, existing_file
from survey.importers.files import surrogates_import


class Command(BaseCommand):
    help = (
        "Build surrogate personalized summaries from a summarize-from-feedback axis-evals file (PerSEval sec. 6.2) "
        "and import them as a dataset: readers = annotators, user = combined gold, systems = policies. Any error "
        "writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the axis-evals JSON Lines file")
        parser.add_argument("--dataset", required=True, help="dataset name (a slug)")
        parser.add_argument("--report", help="also write the kept/dropped report (JSON) here")
        parser.add_argument("--ratings-out", help="also write the ratings of the OpenAI HJ variant (CSV) here")
        add_surrogate_options(parser)

    def handle(self, *args: Any, **options: Any) -> None:
        path = existing_file(options["file"])
        with command_errors():
            try:
                result = build_from_args(path, options)
            except ValueError as exc:
                raise CommandError(str(exc)) from exc
            if not result.records:
                raise CommandError(f"no article kept, nothing imported\n{result.summary()}")
            imported = surrogates_import(result, dataset=options["dataset"], source=path.name)
        with command_errors():
            if options["report"]:
                result.write_report(options["report"])
            if options["ratings_out"]:
                result.write_ratings(options["ratings_out"])
        self.stdout.write(result.summary())
        self.stdout.write(imported.describe())
