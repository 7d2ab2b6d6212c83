"""The corpus: datasets of documents, readers (with their reading histories), systems and their summaries, and a
topic's source sentences; the rating scale and criteria every study shares."""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import models

REFERENCE_SYSTEM = "user"


RATING_MIN = 1


RATING_MAX = 6


DEFAULT_SCALE_LABELS = [
    "Almost different",
    "Very dissimilar",
    "Somewhat dissimilar",
    "Somewhat similar",
    "Very similar",
    "Almost same",
]


def default_scale_labels() -> list[str]:
    return list(DEFAULT_SCALE_LABELS)


#: the criteria of a preference study (AuPEL sec. 3.2), each with the question participants see (our wording)
DEFAULT_CRITERIA = [
    {"name": "quality", "question": "Which text reads better: more fluent and more coherent?"},
    {"name": "relevance", "question": "Which text fits the article better?"},
    {"name": "personalization", "question": "Which text sounds more like it was written by the reader whose "
                                            "own headlines are shown?"},
]


#: the one question of a sentence preference study (Zopf sec. 3)
SENTENCE_CRITERION = {"name": "importance", "question": "Which sentence holds more important information?"}


def default_criteria() -> list[dict[str, str]]:
    return [dict(criterion) for criterion in DEFAULT_CRITERIA]


#: the longest criterion name: what a judgment's criterion column holds (Judgment, JudgeJudgment)
CRITERION_MAX = 50


def validate_criteria(value: object) -> None:
    """Preference criteria: a non-empty list of {"name": a slug, "question": text}, names unique and not the
    pooled criterion ``overall``."""
    if not isinstance(value, list) or not value:
        raise ValidationError(f"criteria must be a non-empty list of {{name, question}} objects; got {value!r}")
    names: list[str] = []
    for number, entry in enumerate(value, 1):
        if not isinstance(entry, dict) or set(entry) != {"name", "question"}:
            raise ValidationError(f"criterion {number}: give exactly name and question; got {entry!r}")
        name, question = entry["name"], entry["question"]
        if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_-" for c in name):
            raise ValidationError(f"criterion {number}: name {name!r} must be letters, digits, - or _")
        if name == "overall":
            raise ValidationError(f"criterion {number}: 'overall' is the pooled criterion; choose another name")
        if len(name) > CRITERION_MAX:  # every judgment of the study stores it
            raise ValidationError(f"criterion {number}: the name is longer than {CRITERION_MAX} characters")
        if not isinstance(question, str) or not question.strip():
            raise ValidationError(f"criterion {number}: the question must be non-empty text")
        if "\x00" in question:  # PostgreSQL stores none (a DataError)
            raise ValidationError(f"criterion {number}: the question holds a NUL character")
        names.append(name)
    if len(set(names)) != len(names):
        raise ValidationError("criteria: each name once")


def validate_scale_labels(value: object) -> None:
    """The one rating scale: exactly one non-empty label per point of RATING_MIN..RATING_MAX (1..6). The
    database constraint on ratings, the questionnaire and the PerSEval-HJ distance all use that scale, so a
    study with another number of labels is refused here rather than scored on a wrong scale."""
    points = RATING_MAX - RATING_MIN + 1
    if not isinstance(value, list) or not all(isinstance(label, str) and label.strip() for label in value):
        raise ValidationError(f"scale_labels must be a list of {points} non-empty labels (text); got {value!r}")
    if len(value) != points:
        raise ValidationError(
            f"scale_labels must have exactly {points} labels, one per rating from {RATING_MIN} to {RATING_MAX} "
            f"(the rating scale is fixed); got {len(value)}"
        )
    nul = [str(point) for point, label in enumerate(value, RATING_MIN) if "\x00" in label]
    if nul:  # PostgreSQL stores none (a DataError)
        raise ValidationError(f"scale label {', '.join(nul)} holds a NUL character")


class Dataset(models.Model):
    name = models.SlugField(max_length=100, unique=True)
    description = models.TextField(blank=True)
    source = models.CharField(max_length=200, blank=True, help_text="Where the data came from (file, import).")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Document(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="documents")
    external_id = models.CharField(max_length=100)
    headline = models.TextField(blank=True)
    body = models.TextField()
    category = models.CharField(max_length=100, blank=True)
    topic = models.CharField(max_length=100, blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "external_id"], name="document_unique_id")]

    def __str__(self) -> str:
        return f"{self.external_id} [{self.dataset}]: {self.headline[:60]}"


class Reader(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="readers")
    external_id = models.CharField(max_length=100)
    history = models.JSONField(default=list, blank=True, help_text="Ordered list of clicked document ids.")
    profile = models.TextField(blank=True)

    class Meta:
        ordering = ["dataset", "id"]
        constraints = [models.UniqueConstraint(fields=["dataset", "external_id"], name="reader_unique_id")]

    def __str__(self) -> str:
        return f"{self.external_id} [{self.dataset}]"


class System(models.Model):
    class Kind(models.TextChoices):
        REFERENCE = "reference", "Reference (readers' own summaries)"
        PERSONALIZED = "personalized", "Personalized"
        GENERIC = "generic", "Generic"
        LLM = "llm", "LLM"
        UNSPECIFIED = "unspecified", "Unspecified"

    name = models.CharField(max_length=100, unique=True)
    kind = models.CharField(max_length=20, choices=Kind.choices, default=Kind.UNSPECIFIED)
    variant = models.CharField(max_length=100, blank=True, help_text="E.g. a prompt style.")
    description = models.TextField(blank=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return f"{self.name} ({self.variant})" if self.variant else self.name


class Summary(models.Model):
    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="summaries")
    reader = models.ForeignKey(Reader, on_delete=models.CASCADE, related_name="summaries")
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="summaries")
    text = models.TextField()

    class Meta:
        ordering = ["document", "reader", "system"]
        verbose_name_plural = "summaries"
        constraints = [
            models.UniqueConstraint(fields=["document", "reader", "system"], name="summary_unique_triple")
        ]

    def __str__(self) -> str:
        return f"{self.document.external_id}/{self.reader.external_id}/{self.system.name}"


class TopicSentence(models.Model):
    """A source sentence of a topic (Zopf's S*): a topic is stored as a :class:`Document` (its ``external_id`` the
    topic id, its body the sentences one per line) and its sentences in order (``import_topics``)."""

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="sentences")
    position = models.PositiveIntegerField(help_text="0-based index in the topic (the Zopf files' sentence index).")
    text = models.TextField()

    class Meta:
        ordering = ["document", "position"]
        constraints = [models.UniqueConstraint(fields=["document", "position"], name="topic_sentence_unique_position")]

    def __str__(self) -> str:
        return f"{self.document.external_id}[{self.position}]: {self.text[:60]}"
