"""Taking part: participants, their assignments (a claimed slot of a questionnaire), and their answers (1-6 ratings,
preference judgments)."""
from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from survey.models.corpus import CRITERION_MAX, RATING_MAX, RATING_MIN
from survey.models.studies import Item, PreferenceItem, Questionnaire, Study


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
