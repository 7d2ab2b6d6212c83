"""Write a preference study's judgments as a judgment file (CSV or JSON Lines; docs/conventions.md sec. 17)."""
from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from survey import exporting, selectors
from survey.models import Study


class Command(BaseCommand):
    help = ("Export a preference study's judgments: case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,"
            "shown_first,doc_id,reader_id (what python -m metaeval pairwise reads); a sentence preference study's: "
            "topic,sentence_a,sentence_b,winner,judge,shown_first,criterion (what python -m metaeval zopf reads); "
            "each row ends with the participant's review,excluded,review_note (the readers leave out excluded = 1).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--study", required=True, help="slug of a preference or sentence preference study")
        parser.add_argument("--format", choices=exporting.FORMATS, default="csv")
        parser.add_argument("--out", help="output file (default: standard output)")
        parser.add_argument("--without-excluded", action="store_true",
                            help="leave out the participants excluded on the participants page")
        parser.add_argument("--source", choices=selectors.JUDGMENT_SOURCES, default="all",
                            help="human: the participants' judgments; llm: the LLM judge runs'; all (default): both, "
                            "participants first")

    def handle(self, *args, study: str, format: str, out: str | None, without_excluded: bool, source: str,
               **options) -> None:
        chosen = Study.objects.filter(slug=study).first()
        if chosen is None:
            known = ", ".join(Study.objects.exclude(kind=Study.Kind.SIMILARITY).values_list("slug", flat=True))
            raise CommandError(f"unknown study {study!r} (A/B studies: {known or 'none'})")
        if not chosen.is_pairwise:
            raise CommandError(f"study {study!r} is a {chosen.kind} study; its ratings: manage.py export_ratings")
        rows, columns = selectors.study_judgment_file(study=chosen, exclude_excluded=without_excluded, source=source)
        if out:
            with open(out, "w", encoding="utf-8", newline="") as fh:
                count = exporting.write_judgments(rows, fh, format, columns)
            self.stderr.write(f"wrote {count} judgments to {out}")
        else:
            count = exporting.write_judgments(rows, self.stdout, format, columns)
            self.stderr.write(f"wrote {count} judgments")
