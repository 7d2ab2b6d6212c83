"""``manage.py import_judgments NAME FILE``: store a pairwise judgment file as a judgment set (all or nothing)."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metaeval import services
from survey.importers.commands import command_errors, existing_file


class Command(BaseCommand):
    help = (
        "Store a pairwise judgment file (CSV, or JSON Lines for .jsonl/.json: case_id,criterion,model_a,model_b,"
        "winner[,judge,judge_kind,run,shown_first,doc_id,reader_id]) as a judgment set that report runs can add "
        "(docs/conventions.md sec. 17). Any problem stores nothing and is named as file:line: field."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name", help="the set's name (letters, digits, - and _)")
        parser.add_argument("file", help="the judgment file")
        parser.add_argument("--description", default="", help="a note shown with the set")

    def handle(self, *args: Any, **options: Any) -> None:
        path = existing_file(options["file"])
        with command_errors():
            try:
                stored = services.judgment_set_import(
                    name=options["name"], data=path.read_bytes(), file_name=path.name,
                    description=options["description"],
                )
            except ValueError as exc:  # a bad or taken name, or no game (NoGames)
                raise CommandError(str(exc)) from exc
        self.stdout.write(f"{stored.name}: {stored.judgments} judgments ({stored.invalid} invalid), {stored.games} "
                          f"games, criteria {', '.join(stored.criteria)}, systems {', '.join(stored.systems)}")
