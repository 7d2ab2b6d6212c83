"""Survey data model: datasets of documents, readers and summaries; studies of blind questionnaires.

A questionnaire shows one document's summary pairs for two readers (j, k): the readers' own reference
summaries (system ``user``) and, for each of a group of systems, that system's summaries for j and k.
Participants claim questionnaires through assignments; each questionnaire has ``raters_per_questionnaire``
slots, and a slot is held by at most one unreleased assignment (a database constraint).

A *preference* study (AuPEL, issue 15) uses the same questionnaires, slots and assignments: a questionnaire is one
case (a document and a reader: ``reader_j`` and ``reader_k`` are both that reader) with a few system pairs
(:class:`PreferenceItem`), and the participant answers one forced choice per pair and criterion
(:class:`Judgment`). The 1-6 similarity ratings (:class:`Item`, :class:`Rating`) stay as they are.
"""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

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


class Study(models.Model):
    class Status(models.TextChoices):
        DRAFT = "draft", "Draft"
        OPEN = "open", "Open"
        CLOSED = "closed", "Closed"

    class PairMode(models.TextChoices):
        ALL = "all", "All reader pairs"
        SAMPLE = "sample", "A sample of M reader pairs per document"
        READERS = "readers", "A sample of K readers per document, all their pairs (iCOPERNICUS: K = 3)"

    class Kind(models.TextChoices):
        SIMILARITY = "similarity", "Similarity of summary pairs (1-6 ratings)"
        PREFERENCE = "preference", "Preference between two systems' texts (A/B per criterion)"
        SENTENCE_PREFERENCE = "sentence_preference", "Preference between two sentences of a topic (Zopf)"

    class IdenticalPairs(models.TextChoices):
        SHOW = "show", "Show them (the papers' protocol)"
        AUTO = "auto", "Do not show; record the top of the scale automatically"
        OMIT = "omit", "Do not show; leave them unrated (missing)"

    slug = models.SlugField(max_length=100, unique=True)
    title = models.CharField(max_length=200)
    dataset = models.ForeignKey(Dataset, on_delete=models.PROTECT, related_name="studies")
    kind = models.CharField(
        max_length=20, choices=Kind.choices, default=Kind.SIMILARITY,
        help_text="similarity: rate summary pairs 1-6 (PerSEval-HJ); preference: choose the better of two systems' "
        "texts per criterion (AuPEL; win/tie/loss, Elo, Bradley-Terry); sentence_preference: choose the sentence "
        "of a topic that holds more important information (Zopf; import the topics with import_topics).",
    )
    systems = models.ManyToManyField(System, related_name="studies", blank=True)
    instructions = models.TextField(blank=True)
    disclaimer = models.TextField(blank=True)
    scale_labels = models.JSONField(default=default_scale_labels, validators=[validate_scale_labels])
    systems_per_questionnaire = models.PositiveSmallIntegerField(default=5, validators=[MinValueValidator(1)])
    raters_per_questionnaire = models.PositiveSmallIntegerField(default=2, validators=[MinValueValidator(1)])
    assignment_timeout_minutes = models.PositiveIntegerField(default=60, validators=[MinValueValidator(1)])
    pair_mode = models.CharField(max_length=10, choices=PairMode.choices, default=PairMode.ALL)
    pairs_per_document = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="Pair mode 'sample': M reader pairs per document; 'readers': K readers.",
    )
    reference_first = models.BooleanField(
        default=False,
        help_text="Similarity studies: show the readers' own pair first and the systems' pairs in design order "
        "(iCOPERNICUS App. E.2 fixed order); off: every participant gets their own shuffled order.",
    )
    seed = models.BigIntegerField(default=0)
    identical_pairs = models.CharField(
        max_length=10,
        choices=IdenticalPairs.choices,
        default=IdenticalPairs.SHOW,
        help_text="Pairs whose two texts are the same after collapsing whitespace: shown, rated automatically at the "
        "top of the scale without being shown, or left out (missing).",
    )
    attention_checks = models.PositiveSmallIntegerField(
        default=0,
        validators=[MaxValueValidator(3)],
        help_text="Known-answer pairs added to each questionnaire (a text with itself, or two unrelated texts); "
        "scored on the participants page, never exported as ratings.",
    )
    criteria = models.JSONField(
        default=default_criteria, validators=[validate_criteria],
        help_text='Preference studies: [{"name": ..., "question": ...}], one forced choice per criterion.',
    )
    allow_tie = models.BooleanField(
        default=False, help_text="Preference studies: offer 'About the same' besides A and B (off: forced choice)."
    )
    cases_per_pair = models.PositiveSmallIntegerField(
        default=20, validators=[MinValueValidator(1)],
        help_text="Preference studies: cases (document, reader) on which each pair of systems is compared.",
    )
    pairs_per_questionnaire = models.PositiveSmallIntegerField(
        default=3, validators=[MinValueValidator(1)],
        help_text="Preference studies: system pairs per questionnaire (all of one case).",
    )
    gold_rate = models.FloatField(
        default=0.0, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Preference studies: known-answer pairs per questionnaire, as a share of its pairs (at least one "
        "when above 0): the reader's own headline against another reader's, on the personalization criterion.",
    )
    gold_threshold = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0.0), MaxValueValidator(1.0)],
        help_text="Preference studies: participants whose share of gold pairs answered right is below this are "
        "flagged, and the participants page can exclude them all from every statistic (reversible).",
    )
    pairs_per_topic = models.PositiveSmallIntegerField(
        default=200, validators=[MinValueValidator(1)],
        help_text="Sentence preference studies: distinct sentence pairs drawn per topic (Zopf: 200).",
    )
    examples_shown = models.PositiveSmallIntegerField(
        default=3, validators=[MaxValueValidator(10)],
        help_text="Preference studies: the reader's own headlines on other articles shown as their examples.",
    )
    show_article = models.BooleanField(
        default=False, help_text="Show the news article above the pairs (off: participants rate the texts alone)."
    )
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.DRAFT)
    completion_url = models.URLField(
        max_length=500,
        blank=True,
        help_text="Crowd platform return URL; '{code}' and '{pid}' are replaced by the completion code and id.",
    )
    created_at = models.DateTimeField(auto_now_add=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "studies"

    def __str__(self) -> str:
        return self.title

    def save(self, *args: object, **kwargs: object) -> None:
        """A sentence preference study still asking the AuPEL criteria asks Zopf's one question instead."""
        if self.kind == Study.Kind.SENTENCE_PREFERENCE and self.criteria == default_criteria():
            self.criteria = [dict(SENTENCE_CRITERION)]
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def is_pairwise(self) -> bool:
        """A/B answers (preference or sentence preference), stored as :class:`Judgment` rows."""
        return self.kind in (Study.Kind.PREFERENCE, Study.Kind.SENTENCE_PREFERENCE)

    @property
    def offers_tie(self) -> bool:
        """'About the same' is offered: a preference study with ``allow_tie`` (a sentence preference is always a
        forced choice, as in Zopf's protocol)."""
        return self.allow_tie and self.kind == Study.Kind.PREFERENCE

    def clean(self) -> None:
        """``identical_pairs`` decides what participants were shown and what was stored for them, so it cannot
        change once a participant has claimed a questionnaire."""
        super().clean()
        if self.pk is None:
            return
        before = Study.objects.filter(pk=self.pk).values_list("identical_pairs", flat=True).first()
        if before not in (None, self.identical_pairs) and Assignment.objects.filter(questionnaire__study=self).exists():
            raise ValidationError(
                {"identical_pairs": f"participants have already rated under identical_pairs={before}; "
                 "it cannot change now (copy the study to use another setting)"}
            )


class Questionnaire(models.Model):
    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="questionnaires")
    position = models.PositiveIntegerField(help_text="Order in the study design.")
    document = models.ForeignKey(Document, on_delete=models.PROTECT, related_name="questionnaires")
    reader_j = models.ForeignKey(Reader, on_delete=models.PROTECT, related_name="+", null=True, blank=True,
                                 help_text="Empty in a sentence preference study (a topic has no reader).")
    reader_k = models.ForeignKey(Reader, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    group = models.PositiveSmallIntegerField(default=0, help_text="Which group of systems for this pair.")

    class Meta:
        ordering = ["study", "position"]
        constraints = [
            models.UniqueConstraint(fields=["study", "position"], name="questionnaire_unique_position"),
            models.UniqueConstraint(
                fields=["study", "document", "reader_j", "reader_k", "group"], name="questionnaire_unique_design"
            ),
        ]

    def __str__(self) -> str:
        readers = f" ({self.reader_j}, {self.reader_k})" if self.reader_j_id is not None else ""
        return f"{self.study.slug} #{self.position} {self.document.external_id}{readers}"


class Item(models.Model):
    """One summary pair: the same system's summaries for readers j and k of one document."""

    questionnaire = models.ForeignKey(Questionnaire, on_delete=models.CASCADE, related_name="items")
    position = models.PositiveSmallIntegerField()
    system = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+")
    summary_j = models.ForeignKey(Summary, on_delete=models.PROTECT, related_name="+")
    summary_k = models.ForeignKey(Summary, on_delete=models.PROTECT, related_name="+")
    identical = models.BooleanField(
        default=False, help_text="The two texts are the same after collapsing whitespace (set when generated)."
    )

    class Meta:
        ordering = ["questionnaire", "position"]
        constraints = [
            models.UniqueConstraint(fields=["questionnaire", "position"], name="item_unique_position"),
            models.UniqueConstraint(fields=["questionnaire", "system"], name="item_unique_system"),
        ]

    def __str__(self) -> str:
        return f"{self.questionnaire} / {self.system.name}"


class Participant(models.Model):
    class Gender(models.TextChoices):
        MALE = "male", "Male"
        FEMALE = "female", "Female"
        TRANSGENDER = "transgender", "Transgender"
        NON_BINARY = "non-binary", "Non-binary"
        UNSAID = "prefer-not-to-say", "Prefer not to say"

    class Occupation(models.TextChoices):
        UNDERGRAD = "undergrad", "Undergraduate student"
        GRAD = "grad", "Graduate student"
        TEACHER = "teacher", "Teacher"
        CORPORATE = "corporate", "Corporate professional"
        OTHER = "other", "Other"

    study = models.ForeignKey(Study, on_delete=models.CASCADE, related_name="participants")
    token = models.CharField(max_length=64, unique=True)
    name = models.CharField(max_length=200, blank=True)
    gender = models.CharField(max_length=20, choices=Gender.choices, blank=True)
    occupation = models.CharField(max_length=20, choices=Occupation.choices, blank=True)
    external_id = models.CharField(max_length=200, blank=True, help_text="Crowd platform participant id.")
    external_source = models.CharField(max_length=50, blank=True)
    consent_at = models.DateTimeField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Review(models.TextChoices):
        PENDING = "pending", "Pending"
        APPROVED = "approved", "Approved"
        REJECTED = "rejected", "Rejected"

    review = models.CharField(
        max_length=10, choices=Review.choices, default=Review.PENDING, help_text="Crowd-work decision (payment)."
    )
    excluded = models.BooleanField(default=False, help_text="Ratings left out of every scoring run of the study.")
    review_note = models.CharField(max_length=500, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["study", "id"]

    def __str__(self) -> str:
        return f"P{self.pk}"


class Assignment(models.Model):
    """A participant's claim on one slot of a questionnaire.

    ``presentation`` records the order shown: a list of ``{"key", "item", "swap"}`` where ``key`` is the
    opaque per-assignment field name, ``item`` the Item id and ``swap`` whether reader k's summary was
    shown on the left; an attention (known-answer) pair is ``{"key", "attention": "same"|"different", "first",
    "second"}`` with the two texts shown. Its answers go to ``attention``, never to ratings.
    """

    questionnaire = models.ForeignKey(Questionnaire, on_delete=models.PROTECT, related_name="assignments")
    participant = models.ForeignKey(Participant, on_delete=models.CASCADE, related_name="assignments")
    public_id = models.CharField(max_length=64, unique=True)
    slot = models.PositiveSmallIntegerField()
    presentation_seed = models.BigIntegerField()
    presentation = models.JSONField(default=list)
    claimed_at = models.DateTimeField()
    expires_at = models.DateTimeField()
    released_at = models.DateTimeField(null=True, blank=True)
    completed_at = models.DateTimeField(null=True, blank=True)
    completion_code = models.CharField(max_length=32, blank=True)
    attention = models.JSONField(
        default=list,
        blank=True,
        help_text='Known-answer pairs and their answers: [{"kind": "same"|"different", "value": 1-6, "passed": bool}].',
    )

    class Meta:
        ordering = ["questionnaire", "slot", "claimed_at"]
        constraints = [
            models.UniqueConstraint(fields=["questionnaire", "participant"], name="assignment_once_per_participant"),
            models.UniqueConstraint(
                fields=["questionnaire", "slot"],
                condition=Q(released_at__isnull=True),
                name="assignment_slot_held_once",
            ),
            models.CheckConstraint(
                condition=Q(released_at__isnull=True) | Q(completed_at__isnull=True),
                name="assignment_completed_not_released",
            ),
            # one live (unfinished, unreleased) assignment per participant: a double-clicked start cannot hold
            # two slots (services.assignment_claim returns the existing one)
            models.UniqueConstraint(
                fields=["participant"],
                condition=Q(released_at__isnull=True, completed_at__isnull=True),
                name="assignment_live_once_per_participant",
            ),
        ]

    def __str__(self) -> str:
        return f"A{self.pk} ({self.questionnaire}, slot {self.slot})"


class Rating(models.Model):
    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="ratings")
    item = models.ForeignKey(Item, on_delete=models.PROTECT, related_name="ratings")
    value = models.PositiveSmallIntegerField(
        validators=[MinValueValidator(RATING_MIN), MaxValueValidator(RATING_MAX)]
    )
    shown_position = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="0-based position on the participant's page; empty for an automatic rating."
    )
    swapped = models.BooleanField(help_text="Reader k's summary was shown first.")
    automatic = models.BooleanField(
        default=False, help_text="Recorded without being shown: identical texts in a study with identical_pairs=auto."
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "shown_position"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item"], name="rating_once_per_item"),
            models.CheckConstraint(
                condition=Q(value__gte=RATING_MIN) & Q(value__lte=RATING_MAX), name="rating_value_in_scale"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.item}: {self.value}"


class PreferenceItem(models.Model):
    """One pair of an A/B questionnaire, ``_a`` stored first (``survey.pairwise_design``); the sides shown are drawn
    per participant. In a preference study: two systems' texts for the questionnaire's case (document, reader); in
    a sentence preference study: two sentences of the questionnaire's topic (``sentence_a`` the lower index)."""

    questionnaire = models.ForeignKey(Questionnaire, on_delete=models.CASCADE, related_name="preference_items")
    position = models.PositiveSmallIntegerField()
    system_a = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    system_b = models.ForeignKey(System, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    summary_a = models.ForeignKey(Summary, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    summary_b = models.ForeignKey(Summary, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    sentence_a = models.ForeignKey(TopicSentence, on_delete=models.PROTECT, related_name="+", null=True, blank=True)
    sentence_b = models.ForeignKey(TopicSentence, on_delete=models.PROTECT, related_name="+", null=True, blank=True)

    class Meta:
        ordering = ["questionnaire", "position"]
        constraints = [
            models.UniqueConstraint(fields=["questionnaire", "position"], name="preference_item_unique_position"),
            models.CheckConstraint(condition=~Q(system_a=models.F("system_b")), name="preference_item_two_systems"),
            models.CheckConstraint(
                condition=(Q(system_a__isnull=False, system_b__isnull=False, summary_a__isnull=False,
                             summary_b__isnull=False, sentence_a__isnull=True, sentence_b__isnull=True)
                           | Q(system_a__isnull=True, system_b__isnull=True, summary_a__isnull=True,
                               summary_b__isnull=True, sentence_a__isnull=False, sentence_b__isnull=False)),
                name="preference_item_systems_or_sentences",
            ),
            models.CheckConstraint(condition=~Q(sentence_a=models.F("sentence_b")),
                                   name="preference_item_two_sentences"),
        ]

    def __str__(self) -> str:
        if self.sentence_a_id is not None:
            return f"{self.questionnaire} / sentences {self.sentence_a_id} vs {self.sentence_b_id}"
        return f"{self.questionnaire} / {self.system_a} vs {self.system_b}"

    @property
    def texts(self) -> tuple[str, str]:
        """The two candidates' texts, ``_a`` first."""
        if self.sentence_a is not None and self.sentence_b is not None:
            return self.sentence_a.text, self.sentence_b.text
        assert self.summary_a is not None and self.summary_b is not None
        return self.summary_a.text, self.summary_b.text


class Judgment(models.Model):
    """One forced choice of a participant: which of an item's two texts is better on one criterion."""

    class Winner(models.TextChoices):
        MODEL_A = "model_a", "model_a"
        MODEL_B = "model_b", "model_b"
        TIE = "tie", "tie"

    assignment = models.ForeignKey(Assignment, on_delete=models.CASCADE, related_name="judgments")
    item = models.ForeignKey(PreferenceItem, on_delete=models.PROTECT, related_name="judgments")
    criterion = models.CharField(max_length=CRITERION_MAX)
    winner = models.CharField(max_length=10, choices=Winner.choices)
    shown_first = models.CharField(
        max_length=10, choices=[("model_a", "model_a"), ("model_b", "model_b")],
        help_text="Which system's text was shown first (left, or on top on a phone).",
    )
    shown_position = models.PositiveSmallIntegerField(help_text="0-based position of the pair on the page.")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["assignment", "shown_position", "id"]
        constraints = [
            models.UniqueConstraint(fields=["assignment", "item", "criterion"], name="judgment_once_per_criterion"),
        ]

    def __str__(self) -> str:
        return f"{self.item} [{self.criterion}]: {self.winner}"


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


# import jobs live in their own module; importing them here registers them with the app
from survey.import_models import ImportJob, ImportUpload  # noqa: E402, F401
