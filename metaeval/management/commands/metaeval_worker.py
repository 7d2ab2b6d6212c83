"""``manage.py metaeval_worker [--run ID | --once] [--interval S]``: score queued runs (those the researcher pages
start).

``--run ID`` takes that run (what the pages launch per run); ``--once`` takes every queued run, then exits; with
neither it keeps polling for queued runs every ``--interval`` seconds (default 2) until Ctrl-C. Two workers never
take the same run (the queued -> running change is one conditional UPDATE).
"""
from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import close_old_connections

from metaeval import services
from metaeval.models import MetaevalRun


class Command(BaseCommand):
    help = "Score queued metaeval runs: one (--run ID), all queued then exit (--once), or poll until Ctrl-C."

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group()
        which.add_argument("--run", type=int, metavar="ID", help="process this queued run")
        which.add_argument("--once", action="store_true", help="process every queued run, then exit")
        parser.add_argument("--interval", type=float, default=2.0, help="seconds between polls (default 2)")
        parser.add_argument("--cache-dir", help="distance cache folder (default $METAEVAL_CACHE_DIR or the user cache)")
        parser.add_argument("--no-cache", action="store_true", help="neither read nor write the distance cache")

    def handle(self, *args: Any, **options: Any) -> None:
        process = {"cache_dir": options["cache_dir"], "use_cache": not options["no_cache"]}
        if options["verbosity"] > 1:
            process["progress"] = lambda message: self.stderr.write(message)
        if options["run"] is not None:
            try:
                run = services.run_process(options["run"], **process)
            except MetaevalRun.DoesNotExist as exc:
                raise CommandError(f"no metaeval run {options['run']}") from exc
            except services.RunNotQueued as exc:
                raise CommandError(str(exc)) from exc
            self._report(run)
            return
        if options["once"]:
            for run in services.run_process_queued(**process):
                self._report(run)
            return
        self.stderr.write(f"waiting for queued metaeval runs (every {options['interval']:g} s; Ctrl-C to stop)")
        try:
            while True:
                close_old_connections()
                for run in services.run_process_queued(**process):
                    self._report(run)
                time.sleep(options["interval"])
        except KeyboardInterrupt:
            self.stderr.write("stopped")

    def _report(self, run: MetaevalRun) -> None:
        if run.status == MetaevalRun.Status.DONE:
            self.stdout.write(f"metaeval run {run.pk}: done ({len(run.scores)} score rows, data {run.data_hash[:12]})")
        else:
            self.stdout.write(f"metaeval run {run.pk}: {run.status}: {run.error}")
