"""``manage.py import_summaries FILE --dataset NAME``: add or update model summaries of an existing dataset."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandParser

from survey.importers import store
from survey.importers.commands import command_errors, existing_file
from survey.importers.records import DatasetRecords
from survey.importers.summaries import check_references, parse_summaries
from survey.models import System

KINDS = [kind for kind in System.Kind.values if kind != System.Kind.REFERENCE]


class Command(BaseCommand):
    help = (
        "Import model summaries (CSV or JSON Lines with doc_id, reader_id, system, text) into an existing "
        "dataset. Re-running it changes nothing; any error writes nothing."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", help="a .csv or .jsonl/.json file")
        parser.add_argument("--dataset", required=True, help="name of an existing dataset")
        parser.add_argument("--kind", choices=KINDS, help="set this kind on every system in the file")
        parser.add_argument("--variant", default="",
                            help="the variant (e.g. a prompt style such as c-2-shot-w-hist) of every row without a "
                            "variant column value: the system is stored as SYSTEM:VARIANT, the variant on it")

    def handle(self, *args: Any, **options: Any) -> None:
        path = existing_file(options["file"])
        name, kind = options["dataset"], options["kind"]
        with command_errors():
            store.dataset_name_check(name)
            summaries = parse_summaries(path, variant=options["variant"].strip())
            doc_ids, reader_ids = store.dataset_keys(name=name)
            check_references(summaries, file=path.name, dataset=name, doc_ids=doc_ids, reader_ids=reader_ids)
            kinds = {s.system: kind for s in summaries} if kind else {}
            records = DatasetRecords(summaries=summaries, system_kinds=kinds)
            result = store.dataset_import(name=name, records=records, create_dataset=False)
        self.stdout.write(result.describe())
