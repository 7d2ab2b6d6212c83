"""``manage.py import_pens --news news.tsv --test personalized_test.tsv``: import the PENS test users."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from survey.importers import store
from survey.importers.commands import command_errors, existing_file
from survey.importers.pens import parse_pens


class Command(BaseCommand):
    help = (
        "Import PENS: the news referenced by personalized_test.tsv become documents, each user a reader (with "
        "click history) and each rewritten title a 'user' summary. Re-running it changes nothing; any error "
        "writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--news", required=True, help="PENS news.tsv")
        parser.add_argument("--test", required=True, help="PENS personalized_test.tsv")
        parser.add_argument("--dataset", default="pens", help='dataset name (default "pens")')

    def handle(self, *args: Any, **options: Any) -> None:
        news, test = existing_file(options["news"]), existing_file(options["test"])
        with command_errors():
            name = store.dataset_name_check(options["dataset"])
            records = parse_pens(news, test)
            result = store.dataset_import(name=name, records=records, source=f"PENS: {news.name} + {test.name}")
        self.stdout.write(result.describe())
