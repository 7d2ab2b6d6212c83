"""The admin's study form: fieldsets per study kind (``static/survey/admin_study.js`` shows those of the chosen
kind), one text box per scale point for the scale labels, name + question rows for the criteria, and the systems
checked against the study's dataset."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.db import models
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from survey import selectors
from survey.models import (
    RATING_MAX,
    RATING_MIN,
    REFERENCE_SYSTEM,
    Study,
    System,
    default_criteria,
    default_scale_labels,
    validate_criteria,
    validate_scale_labels,
)

SIMILARITY, PREFERENCE, SENTENCE = Study.Kind.SIMILARITY, Study.Kind.PREFERENCE, Study.Kind.SENTENCE_PREFERENCE
#: blank criterion rows offered below the study's own (more with the script's "Add a criterion")
BLANK_CRITERIA = 2


def kind_classes(*kinds: str) -> tuple[str, ...]:
    """The CSS classes of a fieldset that only ``kinds`` use (``admin_study.js`` hides it for the others)."""
    return ("study-kind", *(f"kind-{kind}" for kind in kinds))


#: (title, classes, fields): a fieldset without kind classes is every kind's
FIELDSETS: tuple[tuple[str | None, Any], ...] = (
    (None, {"fields": ["kind", "slug", "title", "dataset", "instructions", "disclaimer", "completion_url"],
            "description": "Choose the kind first: the form then shows only what that kind of study uses."}),
    ("Systems and texts", {"classes": kind_classes(SIMILARITY, PREFERENCE), "fields": ["systems", "show_article"]}),
    ("Participants", {"fields": ["raters_per_questionnaire", "assignment_timeout_minutes", "seed"]}),
    ("Similarity ratings", {"classes": kind_classes(SIMILARITY), "fields": [
        "scale_labels", "systems_per_questionnaire", "pair_mode", "pairs_per_document", "reference_first",
        "identical_pairs", "attention_checks"]}),
    ("Questions (A/B)", {"classes": kind_classes(PREFERENCE, SENTENCE),
                         "fields": ["criteria", "pairs_per_questionnaire"]}),
    ("Preference design", {"classes": kind_classes(PREFERENCE), "fields": [
        "cases_per_pair", "allow_tie", "examples_shown", "gold_rate", "gold_threshold"]}),
    ("Adaptive assignment and stopping", {"classes": kind_classes(PREFERENCE), "fields": [
        "assignment", "stop_rule", "stop_width", "stop_alpha", "stop_action"]}),
    ("Sentence preference design", {"classes": kind_classes(SENTENCE), "fields": ["pairs_per_topic"]}),
    ("Status", {"fields": ["status", "created_by", "created_at"]}),
)
#: shown, never edited here (a study's status changes through the admin actions)
READONLY = ["status", "created_by", "created_at"]
EDITABLE = [name for _title, options in FIELDSETS for name in options["fields"] if name not in READONLY]


class ScaleLabelsWidget(forms.Widget):
    """One text box per rating point (1..6), posted as ``<name>_<point>``."""

    points = range(RATING_MIN, RATING_MAX + 1)

    def value_from_datadict(self, data: Mapping[str, Any], files: Any, name: str) -> list[str] | None:
        if not any(f"{name}_{point}" in data for point in self.points):
            return None
        return [str(data.get(f"{name}_{point}", "")) for point in self.points]

    def value_omitted_from_data(self, data: Mapping[str, Any], files: Any, name: str) -> bool:
        return self.value_from_datadict(data, files, name) is None

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> SafeString:
        labels = list(value) if isinstance(value, (list, tuple)) else []
        labels += [""] * (len(self.points) - len(labels))
        base = (attrs or {}).get("id", f"id_{name}")
        rows = format_html_join("", '<li><label for="{0}_{1}">{1}</label> <input type="text" name="{2}_{1}" '
                                    'id="{0}_{1}" value="{3}" maxlength="200" class="vTextField"></li>',
                                ((base, point, name, label) for point, label in zip(self.points, labels, strict=False)))
        return format_html('<ol class="scale-labels" id="{}">{}</ol>', base, rows)

    def id_for_label(self, id_: str) -> str:
        return f"{id_}_{RATING_MIN}" if id_ else id_


class ScaleLabelsField(forms.Field):
    widget = ScaleLabelsWidget

    def to_python(self, value: Any) -> list[str]:
        return [str(label).strip() for label in value] if isinstance(value, (list, tuple)) else []

    def validate(self, value: list[str]) -> None:
        super().validate(value)
        empty = [str(point) for point, label in zip(ScaleLabelsWidget.points, value, strict=False) if not label]
        if empty:
            raise ValidationError(f"give every point of the scale a label; empty: {', '.join(empty)}")
        validate_scale_labels(value)


class CriteriaWidget(forms.Widget):
    """The criteria as rows of (name, question), posted as the lists ``<name>-name`` and ``<name>-question``; the
    study's rows and :data:`BLANK_CRITERIA` blank ones (``admin_study.js`` adds more)."""

    def value_from_datadict(self, data: Any, files: Any, name: str) -> list[tuple[str, str]] | None:
        if f"{name}-name" not in data and f"{name}-question" not in data:
            return None
        names = data.getlist(f"{name}-name") if hasattr(data, "getlist") else [data.get(f"{name}-name", "")]
        questions = (data.getlist(f"{name}-question") if hasattr(data, "getlist")
                     else [data.get(f"{name}-question", "")])
        width = max(len(names), len(questions))
        names, questions = names + [""] * (width - len(names)), questions + [""] * (width - len(questions))
        return [(str(n), str(q)) for n, q in zip(names, questions, strict=True)]

    def value_omitted_from_data(self, data: Mapping[str, Any], files: Any, name: str) -> bool:
        return self.value_from_datadict(data, files, name) is None

    def render(self, name: str, value: Any, attrs: dict[str, Any] | None = None, renderer: Any = None) -> SafeString:
        rows = [_row(entry) for entry in value] if isinstance(value, (list, tuple)) else []
        rows += [("", "")] * BLANK_CRITERIA
        base = (attrs or {}).get("id", f"id_{name}")
        body = format_html_join("", (
            '<tr><td><input type="text" name="{0}-name" value="{2}" id="{3}-name-{1}" maxlength="50" '
            'aria-label="Criterion {1}: name" class="criterion-name"></td>'
            '<td><input type="text" name="{0}-question" value="{4}" id="{3}-question-{1}" maxlength="300" '
            'aria-label="Criterion {1}: question" class="criterion-question"></td></tr>'),
            ((name, number, row[0], base, row[1]) for number, row in enumerate(rows, 1)))
        return format_html(
            '<div class="criteria-widget"><table class="criteria-rows" id="{}"><thead><tr><th scope="col">Name '
            '(letters, digits, - or _)</th><th scope="col">Question participants answer</th></tr></thead>'
            '<tbody>{}</tbody></table>'
            '<button type="button" class="button add-criterion" hidden>Add a criterion</button></div>', base, body)

    def id_for_label(self, id_: str) -> str:
        return f"{id_}-name-1" if id_ else id_


def _row(entry: Any) -> tuple[str, str]:
    if isinstance(entry, Mapping):
        return str(entry.get("name", "")), str(entry.get("question", ""))
    if isinstance(entry, Sequence) and not isinstance(entry, str) and len(entry) == 2:
        return str(entry[0]), str(entry[1])
    return str(entry), ""


class CriteriaField(forms.Field):
    widget = CriteriaWidget

    def to_python(self, value: Any) -> list[dict[str, str]]:
        if not isinstance(value, (list, tuple)):
            return []
        criteria: list[dict[str, str]] = []
        for number, entry in enumerate(value, 1):
            name, question = (part.strip() for part in _row(entry))
            if not name and not question:
                continue  # a blank row
            if not name or not question:
                raise ValidationError(f"criterion row {number}: give both a name and a question (or clear both)")
            criteria.append({"name": name, "question": question})
        return criteria

    def validate(self, value: list[dict[str, str]]) -> None:
        super().validate(value)
        validate_criteria(value)


def https_url_field(db_field: models.Field, **kwargs: Any) -> forms.Field | None:
    """A model field's form field, a URL typed without a scheme taken as https:// (Django 6's rule, said now)."""
    if isinstance(db_field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return db_field.formfield(**kwargs)


class StudyAdminForm(forms.ModelForm):
    scale_labels = ScaleLabelsField(label="Scale labels", initial=default_scale_labels, help_text=(
        f"What participants see for each rating from {RATING_MIN} (least similar) to {RATING_MAX} (most similar)."))
    criteria = CriteriaField(
        label="Criteria", initial=default_criteria,
        error_messages={"required": "give at least one criterion: a name and the question participants answer"},
        help_text="One forced choice per criterion and pair; a blank row is ignored. A sentence preference study "
        "asks one question (Zopf's importance).")

    class Meta:
        model = Study
        fields = EDITABLE
        formfield_callback = https_url_field
        labels = {"assignment_timeout_minutes": "Assignment timeout (minutes)"}
        help_texts = {
            "assignment_timeout_minutes": "How long a set that a participant started but did not finish holds its "
            "slot; then the next participant can take it (the design preview shows it).",
            "systems": "The systems with summaries in the study's dataset (on a new study: checked on save).",
        }

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        systems = self.fields.get("systems")
        if isinstance(systems, forms.ModelMultipleChoiceField):
            if not self.is_bound and self.instance.pk and self.instance.dataset_id:
                systems.queryset = selectors.dataset_systems(dataset=self.instance.dataset)
            else:  # a new study, or a posted form (the dataset may have changed): checked in clean()
                systems.queryset = System.objects.exclude(name=REFERENCE_SYSTEM).order_by("name")

    def clean(self) -> dict[str, Any]:
        super().clean()
        data = self.cleaned_data
        dataset, systems, kind = data.get("dataset"), data.get("systems"), data.get("kind")
        if dataset is not None and systems is not None and kind != SENTENCE:
            own = selectors.dataset_systems(dataset=dataset)
            allowed = set(own.values_list("pk", flat=True))
            outside = sorted(system.name for system in systems if system.pk not in allowed)
            if outside:
                names = ", ".join(own.values_list("name", flat=True)) or "none (import its summaries first)"
                self.add_error("systems", f"not in dataset {dataset.name} (no summaries there): "
                               f"{', '.join(outside)}. Its systems: {names}.")
        return data
