"""Studies and their questionnaires: a similarity questionnaire's summary pairs (items) and a preference
questionnaire's system pairs."""
from __future__ import annotations

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import Q

from survey.models.corpus import (
    SENTENCE_CRITERION,
    Dataset,
    Document,
    Reader,
    Summary,
    System,
    TopicSentence,
    default_criteria,
    default_scale_labels,
    validate_criteria,
    validate_scale_labels,
)


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
    class AssignmentPolicy(models.TextChoices):
        UNIFORM = "uniform", "Uniform (every pair the same number of cases, dealt in advance)"
        ADAPTIVE = "adaptive", "Adaptive (each new set drawn where the ranking is least certain)"

    class StopRule(models.TextChoices):
        NONE = "none", "None (collect the whole design)"
        SEPARATED = "separated", "Every adjacent pair of the ranking separated"
        WIDTH = "width", "Every pair's interval narrower than the width"

    class StopAction(models.TextChoices):
        NOTIFY = "notify", "Tell the researcher the study may stop"
        STOP = "stop", "Stop the study (no new sets; participants are told it is complete)"

    assignment = models.CharField(
        max_length=10, choices=AssignmentPolicy.choices, default=AssignmentPolicy.UNIFORM,
        help_text="Preference studies: uniform deals every pair its cases in advance; adaptive draws each new "
        "set when it is claimed, from the judgments so far (conventions sec. 27.8), within the same budget.",
    )
    stop_rule = models.CharField(
        max_length=10, choices=StopRule.choices, default=StopRule.NONE,
        help_text="Preference studies: the goal, checked with anytime-valid confidence sequences after every set.",
    )
    stop_width = models.FloatField(
        default=0.2, validators=[MinValueValidator(0.001), MaxValueValidator(1.0)],
        help_text="Preference studies, rule 'width': the widest interval of a pair's win rate allowed (0-1).",
    )
    stop_alpha = models.FloatField(
        default=0.05, validators=[MinValueValidator(0.0001), MaxValueValidator(0.5)],
        help_text="Preference studies: the error rate of the stopping rule, over all pairs at once.",
    )
    stop_action = models.CharField(
        max_length=10, choices=StopAction.choices, default=StopAction.NOTIFY,
        help_text="Preference studies: what happens when the goal is reached.",
    )
    completed_at = models.DateTimeField(
        null=True, blank=True, help_text="When the study stopped itself on reaching its goal.",
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
        rated = self.questionnaires.filter(assignments__isnull=False).exists()
        if before not in (None, self.identical_pairs) and rated:
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
