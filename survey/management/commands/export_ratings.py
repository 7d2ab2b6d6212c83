"""Write the ratings of completed assignments in the conventions-doc layout (CSV or JSON Lines)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from survey import exporting, selectors
from survey.models import Study


class Command(BaseCommand):
    help = ("Export ratings: doc_id,system,uid1,uid2,rating first, then rater, study, questionnaire and times, then "
            "the rater's review,excluded,review_note (python -m metaeval leaves out the rows with excluded = 1).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--format", choices=exporting.FORMATS, default="csv")
        parser.add_argument("--study", help="study slug (default: every study)")
        parser.add_argument("--out", help="output file (default: standard output)")

    def handle(self, *args, format: str, study: str | None, out: str | None, **options) -> None:
        chosen = None
        if study:
            chosen = Study.objects.filter(slug=study).first()
            if chosen is None:
                known = ", ".join(Study.objects.values_list("slug", flat=True)) or "none"
                raise CommandError(f"unknown study {study!r} (known: {known})")
        rows = selectors.ratings_export_rows(study=chosen)
        if out:
            with open(out, "w", encoding="utf-8", newline="") as fh:
                count = exporting.write_ratings(rows, fh, format)
            self.stderr.write(f"wrote {count} ratings to {out}")
        else:
            count = exporting.write_ratings(rows, self.stdout, format)
            self.stderr.write(f"wrote {count} ratings")
