"""``manage.py metaeval_report --dataset NAME [--study SLUG] [scoring options] [--seed N] [--n-boot N] ...``

Builds a full report run (scores, Table 2 with bootstrap CIs, permutation tests, beta ablation, stability, Borda-
Kendall, rater agreement) in this process and prints where to see it; ``--queue`` leaves it to a worker instead.
"""
from __future__ import annotations

import argparse
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from metaeval import services
from metaeval.cli import UsageError, add_scoring_arguments, options_from_args
from metaeval.management.commands.metaeval_run import DEFAULT_AUX, _dataset, _study
from metaeval.models import MetaevalRun


class Command(BaseCommand):
    help = "Build a full meta-evaluation report run for a dataset and a study's ratings (seeded, stored)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--dataset", required=True, help="name of the dataset")
        parser.add_argument("--study", help="slug of a study of that dataset (its ratings give the HJ variants)")
        add_scoring_arguments(parser, measures="rouge_l,rouge_su4,bleu4,jsd")
        parser.add_argument("--seed", type=int, help="seed of every random draw (default: a fresh one, stored)")
        parser.add_argument("--n-boot", type=int, default=1000, help="bootstrap samples (default 1000)")
        parser.add_argument("--resample", choices=["both", "systems", "documents"], default="both")
        parser.add_argument("--n-permutations", type=int, default=1000, help="permutations per test (default 1000)")
        parser.add_argument("--stability-samples", type=int, default=10, help="samples per level (default 10)")
        parser.add_argument(
            "--bootstrap-missing", dest="missing_system", choices=["discard-sample", "drop-system"],
            default="discard-sample",
            help="a bootstrap sample in which a drawn system has no drawn document: discard it (SacreROUGE's rule, "
            "default) or correlate it without that system",
        )
        parser.add_argument("--permutation-alternative", choices=["greater", "two-sided"], default="greater",
                            help="one-sided per ordered pair (default) or two-sided per unordered pair")
        parser.add_argument("--exclude-raters", default="", help="comma-separated rater ids (P12,P15) to leave out")
        parser.add_argument("--queue", action="store_true", help="only queue it (a metaeval_worker runs it)")
        parser.add_argument(
            "--unless-exists", action="store_true",
            help="do nothing when a finished report run of this dataset, study and seed exists (make demo)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        dataset = _dataset(options["dataset"])
        study = _study(options["study"], dataset) if options["study"] else None
        try:
            run_options = options_from_args(argparse.Namespace(**options), beta_default=1.7,
                                            has_ratings=study is not None)
        except UsageError as exc:
            raise CommandError(str(exc)) from exc
        if study is not None and not run_options.aux:
            run_options.aux = list(DEFAULT_AUX)
        run_options.skip_unavailable = True
        if options["unless_exists"]:
            existing = MetaevalRun.objects.filter(
                kind=MetaevalRun.Kind.REPORT, status=MetaevalRun.Status.DONE, dataset=dataset, study=study,
                seed=options["seed"],
            ).order_by("-pk").first()
            if existing is not None:
                self.stdout.write(f"report run {existing.pk} exists (seed {existing.seed}): "
                                  f"/research/runs/{existing.pk}/report/")
                return
        excluded = [part.strip() for part in options["exclude_raters"].split(",") if part.strip()]
        settings = {key: options[key] for key in ("n_boot", "resample", "n_permutations", "stability_samples",
                                                  "missing_system", "permutation_alternative")}
        try:
            run = services.run_enqueue(dataset=dataset, study=study, options=run_options, seed=options["seed"],
                                       exclude_raters=excluded, kind=MetaevalRun.Kind.REPORT, report=settings)
        except ValueError as exc:
            raise CommandError(str(exc)) from exc
        if options["queue"]:
            self.stdout.write(f"queued report run {run.pk}")
            return
        progress = (lambda message: self.stderr.write(message)) if options["verbosity"] > 1 else None
        run = services.run_process(run.pk, cache_dir=options["cache_dir"], use_cache=not options["no_cache"],
                                   progress=progress)
        if run.status != MetaevalRun.Status.DONE:
            raise CommandError(f"report run {run.pk} failed: {run.error}")
        self.stdout.write(f"report run {run.pk} done (seed {run.seed}): /research/runs/{run.pk}/report/")
