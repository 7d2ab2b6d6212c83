"""``manage.py import_topics FILE --dataset NAME``: the topics and source sentences of a sentence preference
(Zopf) study."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from survey.importers.commands import command_errors, existing_file
from survey.importers.topics import topics_import


class Command(BaseCommand):
    help = ("Import topics with their source sentences (a Zopf topics file: JSON Lines {\"topic\", \"sentences\": "
            "[...]}) into a dataset (created when missing), for sentence preference studies. All or nothing; "
            "re-running it changes nothing.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a topics file (.jsonl)")
        parser.add_argument("--dataset", required=True, help="dataset name (created when missing)")

    def handle(self, *args: Any, **options: Any) -> None:
        path = existing_file(options["file"])
        with command_errors():
            result = topics_import(path, dataset=options["dataset"])
        self.stdout.write(result.describe())
