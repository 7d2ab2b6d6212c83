"""Stored scoring runs: what was scored (dataset, study, options, data hash) and what came out.

A run is written by :mod:`metaeval.services` only: :func:`~metaeval.services.run_execute` (at once, from
``manage.py metaeval_run``) or :func:`~metaeval.services.run_enqueue` then a Celery worker's
:func:`~metaeval.services.run_process` (the researcher pages and the API), which holds a lease on the run while
it works (``worker``, ``lease_expires_at``, ``attempts``). The JSON result fields hold exactly
:func:`metaeval.core.io.records.run_document` of the run's result (NaN and infinities as null).
"""
from __future__ import annotations

from django.conf import settings
from django.db import models


class JudgmentSet(models.Model):
    """A pairwise judgment file (docs/conventions.md sec. 17) kept as uploaded, for report runs' pairwise section.

    Written only by :func:`metaeval.services.judgment_set_import`, which parses the whole file first (every problem
    as ``file:line: field``) and stores nothing when any is found. ``content`` is the file's bytes, gzip-compressed;
    the counts are those of the parse, for the pages."""

    name = models.SlugField(max_length=100, unique=True, help_text="How runs and the API name it.")
    description = models.TextField(blank=True)
    file_name = models.CharField(
        max_length=255, help_text="The uploaded file's name (its extension picks CSV or JSON Lines)."
    )
    sha256 = models.CharField(max_length=64, help_text="SHA-256 of the file's bytes as uploaded.")
    content = models.BinaryField(help_text="The file's bytes, gzip-compressed.")
    judgments = models.PositiveIntegerField(help_text="Rows read, invalid ones included.")
    invalid = models.PositiveIntegerField(help_text="Rows whose winner is invalid (never played).")
    games = models.PositiveIntegerField(help_text="Games: one per case, criterion and system pair.")
    criteria = models.JSONField(default=list, help_text="The criteria, sorted, overall last.")
    systems = models.JSONField(default=list, help_text="The systems, in order of first appearance.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        verbose_name = "pairwise judgment set"

    def __str__(self) -> str:
        return f"{self.name} ({self.judgments} judgments)"


class MetaevalRun(models.Model):
    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    class Kind(models.TextChoices):
        SCORES = "scores", "Scores"
        REPORT = "report", "Report"

    dataset = models.ForeignKey("survey.Dataset", on_delete=models.PROTECT, related_name="metaeval_runs")
    study = models.ForeignKey(
        "survey.Study",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="metaeval_runs",
        help_text="The study whose ratings gave the HJ variants (none: automatic measures only).",
    )
    judgment_set = models.ForeignKey(
        JudgmentSet,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="runs",
        help_text="kind=report: pairwise judgments whose section the report adds (conventions sec. 17, item 11).",
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True, help_text="When a worker took the run.")
    finished_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.SCORES)
    progress = models.JSONField(
        default=dict, blank=True, help_text='{"step": str, "done": int, "total": int, "messages": [the last 20]}'
    )
    excluded_raters = models.JSONField(
        default=list, blank=True, help_text='Rater ids (as exported, e.g. "P12") whose ratings the run left out.'
    )
    parameters = models.JSONField(default=dict, help_text="RunOptions.as_dict(): measures, aux, EDP/P-Acc params...")
    seed = models.BigIntegerField(null=True, blank=True, help_text="Seed of any random choice (sampling studies).")
    versions = models.JSONField(default=dict, blank=True)
    timings = models.JSONField(default=dict, blank=True, help_text="Seconds per step.")
    scores = models.JSONField(default=list, blank=True, help_text="The score table, one object per row.")
    hj_counts = models.JSONField(default=dict, blank=True, help_text="hj:<aux> -> system -> rated/skipped pairs.")
    distances = models.JSONField(default=list, blank=True, help_text="Per-measure distance computation stats.")
    measure_models = models.JSONField(
        default=dict, blank=True, help_text="Neural measure -> the model it used, in words."
    )
    unavailable = models.JSONField(
        default=dict, blank=True, help_text="Measure -> why it could not run here (e.g. its model is missing)."
    )
    report = models.JSONField(
        default=dict,
        blank=True,
        help_text="kind=report: metaeval.core.perseval.report.build_report's document (tables, figures).",
    )
    error = models.TextField(blank=True)
    attempts = models.PositiveSmallIntegerField(default=0, help_text="How many times a worker took the run.")
    worker = models.CharField(max_length=200, blank=True, help_text="The Celery worker running (or that ran) it.")
    lease_expires_at = models.DateTimeField(
        null=True, blank=True,
        help_text="While running: the worker's heartbeat renews this; past it the run is retried or failed.",
    )
    cancel_requested = models.BooleanField(default=False, help_text="A researcher asked to stop the running run.")
    data_hash = models.CharField(
        max_length=64,
        blank=True,
        help_text="SHA-256 of the corpus texts and ratings used (metaeval.selectors.data_hash).",
    )

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name = "meta-evaluation run"

    def __str__(self) -> str:
        return f"run {self.pk} on {self.dataset.name} ({self.status})"

    @property
    def is_live(self) -> bool:
        """Queued or running: not finished (done, failed or cancelled) yet."""
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class RunShard(models.Model):
    """One share of a run's distance work: pairs ``start:stop`` of one measure's unique text pairs, in the run's
    plan order (``metaeval.sharding``). Any worker may claim a pending shard (a conditional UPDATE), computes it
    into the shared distance cache under a lease, and marks it done; a shard whose lease ran out goes back to
    pending. ``checksum`` (BLAKE2b of the shard's pair digests) lets a worker verify that it rebuilt the same pairs."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RUNNING = "running", "Running"
        DONE = "done", "Done"

    run = models.ForeignKey(MetaevalRun, on_delete=models.CASCADE, related_name="shards")
    measure = models.CharField(max_length=40)
    index = models.PositiveIntegerField()
    start = models.PositiveIntegerField()
    stop = models.PositiveIntegerField()
    checksum = models.CharField(max_length=32)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    worker = models.CharField(max_length=200, blank=True)
    cache = models.CharField(max_length=300, blank=True, help_text="The cache the worker wrote to, in words.")
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    computed = models.PositiveIntegerField(default=0, help_text="Pairs computed (the rest were cached already).")
    seconds = models.FloatField(default=0.0)

    class Meta:
        ordering = ["run", "measure", "index"]
        constraints = [
            models.UniqueConstraint(fields=["run", "measure", "index"], name="run_shard_once"),
        ]

    def __str__(self) -> str:
        return f"run {self.run_id} {self.measure} shard {self.index} ({self.status})"
