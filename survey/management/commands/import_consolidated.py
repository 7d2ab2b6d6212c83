"""``manage.py import_consolidated FILE``: import a consolidated JSON dataset (all or nothing, idempotent)."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from survey.importers.commands import command_errors, existing_file
from survey.importers.files import consolidated_import


class Command(BaseCommand):
    help = (
        "Import a consolidated JSON dataset ({doc_id, doc_text, doc_summ, m_summary_dict}) as JSON Lines, "
        "concatenated/pretty-printed objects or one array. Re-running it changes nothing; any error writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="the consolidated JSON file")
        parser.add_argument("--dataset", help="dataset name (default: the file name without extension, slugified)")
        parser.add_argument(
            "--missing",
            choices=["error", "drop"],
            default="error",
            help='a reader lacking a "user" summary or a system of its document: fail (default) or import only '
            "what is present",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = existing_file(options["file"])
        with command_errors():
            result = consolidated_import(path, dataset=options["dataset"] or "", missing=options["missing"])
        self.stdout.write(result.describe())
