"""``manage.py metaeval_report --dataset NAME [--study SLUG] [scoring options] [--seed N] [--n-boot N] ...``

Builds a full report run (scores, Table 2 with bootstrap CIs, permutation tests, beta ablation, stability, Borda-
Kendall, rater agreement) in this process and prints where to see it; ``--queue`` leaves it to a worker instead.
"""
from __future__ import annotations

import argparse
import os
import socket
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metaeval import selectors, services
from metaeval.cli.args import at_least
from metaeval.cli.common import UsageError
from metaeval.cli.report import report_settings
from metaeval.cli.scoring import REPORT_BETA, add_report_arguments, add_scoring_arguments, options_from_args
from metaeval.core.options import SEED_MAX
from metaeval.core.perseval.pipeline import DEFAULT_AUX
from metaeval.management.lookups import dataset_named, study_of
from metaeval.models import MetaevalRun


class Command(BaseCommand):
    help = "Build a full meta-evaluation report run for a dataset and a study's ratings (seeded, stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="name of the dataset")
        parser.add_argument("--study", help="slug of a study of that dataset (its ratings give the HJ variants)")
        add_scoring_arguments(parser, measures="rouge_l,rouge_su4,bleu4,jsd", beta_default=REPORT_BETA)
        parser.add_argument("--seed", type=at_least(0, SEED_MAX),
                            help="seed of every random draw (default: a fresh one, stored)")
        add_report_arguments(parser)
        parser.add_argument("--exclude-raters", default="", help="comma-separated rater ids (P12,P15) to leave out")
        parser.add_argument("--judgments", metavar="NAME",
                            help="a pairwise judgment set (manage.py import_judgments) whose section the report adds")
        parser.add_argument("--queue", action="store_true",
                            help="send it to a Celery worker instead of running it here")
        parser.add_argument(
            "--unless-exists", action="store_true",
            help="do nothing when a finished report run of this dataset, study and seed exists (make demo)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = dataset_named(options["dataset"])
        study = study_of(options["study"], dataset) if options["study"] else None
        try:
            run_options = options_from_args(argparse.Namespace(**options), beta_default=REPORT_BETA,
                                            has_ratings=study is not None)
        except UsageError as exc:
            raise CommandError(str(exc)) from exc
        if study is not None and not run_options.aux:
            run_options.aux = list(DEFAULT_AUX)
        run_options.skip_unavailable = True
        judgment_set = None
        if options["judgments"]:
            judgment_set = selectors.judgment_sets().filter(name=options["judgments"]).first()
            if judgment_set is None:
                known = ", ".join(selectors.judgment_sets().values_list("name", flat=True)) or "none"
                raise CommandError(f'unknown judgment set "{options["judgments"]}" (known: {known})')
        if options["unless_exists"]:
            existing = MetaevalRun.objects.filter(
                kind=MetaevalRun.Kind.REPORT, status=MetaevalRun.Status.DONE, dataset=dataset, study=study,
                seed=options["seed"], judgment_set=judgment_set,
            ).order_by("-pk").first()
            if existing is not None:
                self.stdout.write(f"report run {existing.pk} exists (seed {existing.seed}): "
                                  f"/research/runs/{existing.pk}/report/")
                return
        excluded = [part.strip() for part in options["exclude_raters"].split(",") if part.strip()]
        settings = report_settings(argparse.Namespace(**options))
        try:
            run = services.run_enqueue(dataset=dataset, study=study, options=run_options, seed=options["seed"],
                                       exclude_raters=excluded, kind=MetaevalRun.Kind.REPORT, report=settings,
                                       judgment_set=judgment_set)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["queue"]:
            services.run_launch(run)
            self.stdout.write(f"queued report run {run.pk}: /research/runs/{run.pk}/")
            return
        progress = (lambda event: self.stderr.write(str(event))) if options["verbosity"] > 1 else None
        run = services.run_process(run.pk, worker=f"metaeval_report:{socket.gethostname()}:{os.getpid()}",
                                   cache_dir=options["cache_dir"], use_cache=not options["no_cache"],
                                   progress=progress)
        if run.status != MetaevalRun.Status.DONE:
            raise CommandError(f"report run {run.pk} failed: {run.error}")
        self.stdout.write(f"report run {run.pk} done (seed {run.seed}): /research/runs/{run.pk}/report/")
