"""Import jobs: an upload too large to import inside the web request (``IMPORT_INLINE_MAX_BYTES``) is stored here,
gzip'd, and imported by a Celery worker (``survey.import_jobs``) under a lease like the runs', with its progress
and outcome on the job page."""
from __future__ import annotations

from django.conf import settings
from django.db import models


class ImportJob(models.Model):
    """One import of uploaded files on a worker: a file judge's judgments into a study, a judgment set, or a
    dataset (the admin's). All or nothing: ``problems`` lists why nothing was stored (``file:line: ...``)."""

    class Kind(models.TextChoices):
        JUDGE_FILE = "judge_file", "Judgments made elsewhere (file judge)"
        JUDGMENT_SET = "judgment_set", "Judgment set"
        DATASET = "dataset", "Dataset file"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    kind = models.CharField(max_length=20, choices=Kind.choices)
    study = models.ForeignKey("survey.Study", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="import_jobs", help_text="kind judge_file: the study it imports into.")
    options = models.JSONField(default=dict, blank=True,
                               help_text="The form's other fields (judgment set name, dataset name, ...).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    step = models.CharField(max_length=200, blank=True, help_text="What the worker is doing.")
    done = models.PositiveBigIntegerField(default=0)
    total = models.PositiveBigIntegerField(default=0)
    problems = models.JSONField(default=list, blank=True, help_text="Why nothing was stored, one line each.")
    result = models.JSONField(default=dict, blank=True, help_text='{"message": ..., "links": [[label, url]]}')
    worker = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)  # read by the lease; jobs are not cancelled
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"import job {self.pk} ({self.kind}, {self.status})"

    @property
    def is_live(self) -> bool:
        return self.status in (self.Status.QUEUED, self.Status.RUNNING)


class ImportUpload(models.Model):
    """One uploaded file of a job (``role``: ``file``, or ``news`` / ``test`` for PENS), gzip'd; its content is
    emptied once the job ends."""

    job = models.ForeignKey(ImportJob, on_delete=models.CASCADE, related_name="uploads")
    role = models.CharField(max_length=20)
    name = models.CharField(max_length=255, help_text="The uploaded file's base name (messages quote it).")
    size = models.PositiveBigIntegerField(help_text="Bytes, before compression.")
    content = models.BinaryField(help_text="gzip of the file; empty once the job has ended.")

    class Meta:
        ordering = ["job", "id"]
        constraints = [models.UniqueConstraint(fields=["job", "role"], name="import_upload_role_once")]

    def __str__(self) -> str:
        return f"{self.name} ({self.role} of job {self.job_id})"
