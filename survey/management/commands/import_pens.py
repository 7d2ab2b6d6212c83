"""``manage.py import_pens --news news.tsv --test personalized_test.tsv``: import the PENS test users."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from survey.importers.commands import command_errors, existing_file
from survey.importers.files import PENS_DEFAULT_DATASET, pens_import


class Command(BaseCommand):
    help = (
        "Import PENS: the news referenced by personalized_test.tsv become documents, each user a reader (with "
        "click history) and each rewritten title a 'user' summary. Re-running it changes nothing; any error "
        "writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--news", required=True, help="PENS news.tsv")
        parser.add_argument("--test", required=True, help="PENS personalized_test.tsv")
        parser.add_argument(
            "--dataset", default=PENS_DEFAULT_DATASET, help=f'dataset name (default "{PENS_DEFAULT_DATASET}")'
        )

    def handle(self, *args: Any, **options: Any) -> None:
        news, test = existing_file(options["news"]), existing_file(options["test"])
        with command_errors():
            result = pens_import(news, test, dataset=options["dataset"])
        self.stdout.write(result.describe())
