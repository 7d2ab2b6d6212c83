"""LLM judges: the endpoints the operator makes available, the runs over a preference study and their judgments."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models

from survey.models.corpus import CRITERION_MAX
from survey.models.studies import PreferenceItem, Study


class JudgeRun(models.Model):
    """An LLM judge's pass over a preference study's items (AuPEL sec. 3.4; docs/conventions.md sec. 21): every
    item judged ``runs`` times per criterion, half of the runs with each system's text first. ``kind`` ``openai``
    and ``transformers`` run on a Celery worker (``survey.judge_runs``), resumable; ``file`` holds judgments made
    elsewhere and imported. Its judgments (:class:`JudgeJudgment`) are exported with the participants'."""

    class Kind(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible endpoint"
        TRANSFORMERS = "transformers", "Local causal LM (transformers)"
        FILE = "file", "Imported judgment file"

    class Status(models.TextChoices):
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        CANCELLED = "cancelled", "Cancelled"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="judge_runs")
    kind = models.CharField(max_length=20, choices=Kind.choices)
    name = models.CharField(max_length=200, help_text="The judge column of the exported judgments.")
    judge_settings = models.JSONField(
        default=dict, blank=True,
        help_text="The judge's settings (base URL, model, API key variable name, temperature, ...); never a key.",
    )
    criteria = models.JSONField(default=list)
    runs = models.PositiveSmallIntegerField(default=40, help_text="Judgments per item and criterion (even).")
    templates = models.JSONField(default=dict, blank=True, help_text="Prompt templates {criterion: {system, user}}.")
    templates_sha256 = models.CharField(max_length=64, blank=True)
    source_file = models.CharField(max_length=255, blank=True, help_text="kind file: the imported file's name.")
    source_sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.QUEUED)
    total = models.PositiveIntegerField(default=0, help_text="Judgments the run asks for in all.")
    done = models.PositiveIntegerField(default=0, help_text="Judgments stored so far.")
    error = models.TextField(blank=True)
    worker = models.CharField(max_length=200, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    lease_expires_at = models.DateTimeField(null=True, blank=True)
    cancel_requested = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["study", "-created_at", "-id"]

    def __str__(self) -> str:
        return f"judge run {self.pk} ({self.name}, {self.study.slug})"


class JudgeJudgment(models.Model):
    """One judge answer: which of an item's two texts is better on one criterion, in repeat ``run``; ``invalid``
    when the reply could not be read or the call failed (``raw`` and ``error`` keep why)."""

    class Winner(models.TextChoices):
        MODEL_A = "model_a", "model_a"
        MODEL_B = "model_b", "model_b"
        TIE = "tie", "tie"
        INVALID = "invalid", "invalid"

    judge_run = models.ForeignKey(JudgeRun, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(PreferenceItem, on_delete=models.PROTECT, related_name="judge_judgments")
    criterion = models.CharField(max_length=CRITERION_MAX)
    run = models.PositiveSmallIntegerField()
    winner = models.CharField(max_length=10, choices=Winner.choices)
    shown_first = models.CharField(max_length=10, choices=[("model_a", "model_a"), ("model_b", "model_b")],
                                   blank=True)
    raw = models.TextField(blank=True)
    error = models.TextField(blank=True)
    seconds = models.FloatField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["judge_run", "id"]
        constraints = [
            models.UniqueConstraint(fields=["judge_run", "item", "criterion", "run"], name="judge_judgment_once"),
        ]

    def __str__(self) -> str:
        return f"{self.item} [{self.criterion} #{self.run}]: {self.winner}"


class JudgeEndpoint(models.Model):
    """A judge that the operator makes available to researchers (docs/conventions.md sec. 21, item 8): an
    OpenAI-compatible endpoint (base URL, the models researchers may pick, the NAME of the workers' environment
    variable holding its key) or a local model folder on the workers. Researchers choose an endpoint for a judge
    run and tune only the sampling settings; they never type a URL, a variable name or a path. Edited in the admin
    by staff with the model's permissions; checked by :func:`survey.judge_endpoints.endpoint_problems`."""

    class Kind(models.TextChoices):
        OPENAI = "openai", "OpenAI-compatible endpoint"
        TRANSFORMERS = "transformers", "Local causal LM (transformers)"

    name = models.SlugField(max_length=100, unique=True, help_text="What researchers choose, e.g. openai-gpt4o.")
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.OPENAI)
    description = models.CharField(max_length=300, blank=True, help_text="Shown to researchers beside the name.")
    enabled = models.BooleanField(default=True, help_text="Researchers can start runs on it (running ones go on).")
    base_url = models.CharField(max_length=500, blank=True, verbose_name="Base URL",
                                help_text="openai: e.g. https://api.openai.com/v1 (then POST .../chat/completions)")
    model_choices = models.TextField(blank=True, verbose_name="Models",
                                     help_text="openai: the model names researchers may pick, one per line; the first "
                                     "is the default.")
    api_key_env = models.CharField(
        max_length=100, blank=True, verbose_name="API key variable",
        help_text="openai: the NAME of the workers' environment variable holding the key, matching "
        "JUDGE_API_KEY_ENV_PATTERN (default: ending in _API_KEY); empty for a server without authentication.")
    allow_private = models.BooleanField(
        default=False, verbose_name="Allow private network addresses",
        help_text="openai: let requests reach loopback, private and link-local addresses (a model served on this "
        "machine or the local network). Off: only public addresses, checked on every connection.")
    model_path = models.CharField(max_length=500, blank=True, verbose_name="Model folder",
                                  help_text="transformers: a folder on the workers (config.json, weights, tokenizer)")
    device = models.CharField(max_length=20, blank=True, default="cpu", help_text="transformers: cpu, cuda or cuda:N")
    max_concurrency = models.PositiveSmallIntegerField(
        default=4, validators=[MinValueValidator(1), MaxValueValidator(64)],
        help_text="openai: the most requests at once a run may send.")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name

    @property
    def model_names(self) -> list[str]:
        """The models researchers may pick (openai), in the order given."""
        return list(dict.fromkeys(line.strip() for line in self.model_choices.splitlines() if line.strip()))

    def clean(self) -> None:
        from survey.judge_policy import address_problem, endpoint_problems

        problems = endpoint_problems(self)
        if self.kind == self.Kind.OPENAI and not problems.get("base_url") and not self.allow_private:
            refused = address_problem(self)
            if refused:
                problems["base_url"] = refused
        if problems:
            raise ValidationError(problems)
