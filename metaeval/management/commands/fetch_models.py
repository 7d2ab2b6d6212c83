"""``manage.py fetch_models [NAME ...] [--cache-dir DIR]``: download the neural measures' models for offline use."""
from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metaeval.core.measures.models import AUTHORS_BERTSCORE, AUTHORS_INFOLM, ModelFetchError, fetch_models


class Command(BaseCommand):
    help = (
        "Download Hugging Face models for the neural measures (InfoLM, BERTScore) into the Hugging Face cache and "
        f"print their local folders. With no names: the authors' models {AUTHORS_INFOLM} (InfoLM) and "
        f"{AUTHORS_BERTSCORE} (BERTScore). The measures themselves never download: on a machine without internet, "
        "run this command on one with internet, copy the cache folder it fills (--cache-dir, or $HF_HOME/hub) "
        "to the offline machine and set HF_HUB_CACHE to it (or HF_HOME to its parent); or pass a model folder "
        "with --infolm-model / --bertscore-model."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "names",
            nargs="*",
            metavar="NAME",
            help=f"hub model names (default: {AUTHORS_INFOLM} {AUTHORS_BERTSCORE})",
        )
        parser.add_argument(
            "--cache-dir",
            help="the Hugging Face hub cache to fill (default: HF_HUB_CACHE, else $HF_HOME/hub)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        names = list(options["names"]) or [AUTHORS_INFOLM, AUTHORS_BERTSCORE]
        progress = (lambda message: self.stderr.write(message)) if options["verbosity"] > 1 else None
        try:
            paths = fetch_models(names, cache_dir=options["cache_dir"], progress=progress)
        except ModelFetchError as exc:
            raise CommandError(str(exc)) from exc
        for name, path in zip(names, paths, strict=True):
            self.stdout.write(f"{name}\t{path}")
