"""The admin's study form (survey/admin_study_form.py): fieldsets per kind, a text box per scale point, criteria
as name + question rows, the systems of the study's dataset, and clear errors on save."""
from __future__ import annotations

import re
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client

from survey.models import DEFAULT_SCALE_LABELS, Study, System, default_criteria
from tests.conftest import SYSTEM_NAMES, build_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture
def boss(db) -> Client:
    User.objects.create_superuser("boss", "boss@example.org", "pw-admin-123")
    client = Client()
    client.force_login(User.objects.get(username="boss"))
    return client


def form_data(dataset_pk: int, systems: list[int], **fields: Any) -> dict[str, Any]:
    """What the add form posts for a preference study (every kind's fields are posted, the hidden ones too)."""
    criteria = fields.pop("criteria", default_criteria())
    return {
        "kind": "preference", "slug": "ab", "title": "A/B", "dataset": dataset_pk, "systems": systems,
        "raters_per_questionnaire": 3, "assignment_timeout_minutes": 15, "seed": 4,
        **{f"scale_labels_{n}": label for n, label in enumerate(DEFAULT_SCALE_LABELS, 1)},
        "systems_per_questionnaire": 5, "pair_mode": "all", "identical_pairs": "show", "attention_checks": 0,
        "criteria-name": [c["name"] for c in criteria], "criteria-question": [c["question"] for c in criteria],
        "pairs_per_questionnaire": 3, "cases_per_pair": 2, "examples_shown": 3, "gold_rate": 0,
        "gold_threshold": "", "pairs_per_topic": 200, "assignment": "uniform", "stop_rule": "none",
        "stop_width": 0.2, "stop_alpha": 0.05, "stop_action": "notify", **fields,
    }


def test_add_form_groups_fields_by_kind_with_a_box_per_scale_point_and_criteria_rows(boss) -> None:
    page = boss.get("/admin/survey/study/add/").content.decode()
    fieldsets = re.findall(r'<fieldset class="([^"]*)"[^>]*>.*?</fieldset>', page, re.S)
    kinds = [set(re.findall(r"kind-(\w+)", classes)) for classes in fieldsets if "study-kind" in classes]
    assert kinds == [{"similarity", "preference"}, {"similarity"}, {"preference", "sentence_preference"},
                     {"preference"}, {"preference"}, {"sentence_preference"}]
    # adaptive assignment and stopping: preference studies only (conventions sec. 27.8)
    assert '<select name="assignment"' in page and '<select name="stop_rule"' in page
    assert 'src="/static/survey/admin_study.js"' in page
    for point, label in enumerate(DEFAULT_SCALE_LABELS, 1):
        assert f'name="scale_labels_{point}" id="id_scale_labels_{point}" value="{label}"' in page
    names = re.findall(r'name="criteria-name" value="([^"]*)"', page)
    assert names == [c["name"] for c in default_criteria()] + ["", ""]  # the study's rows, two blank ones
    assert "Assignment timeout (minutes)" in page and "holds its slot" in page
    assert 'name="scale_labels"' not in page and 'name="criteria"' not in page  # no raw JSON


def test_saving_a_preference_study_stores_the_rows(boss) -> None:
    dataset = build_dataset()
    systems = list(System.objects.filter(name__in=SYSTEM_NAMES[:3]).values_list("pk", flat=True))
    data = form_data(dataset.pk, systems, **{
        "criteria-name": ["clarity", "", "fit"], "criteria-question": ["Which is clearer?", "", "Which fits?"],
        "scale_labels_3": "  somewhat similar  ", "assignment": "adaptive", "stop_rule": "width",
        "stop_width": 0.3, "stop_action": "stop"})
    response = boss.post("/admin/survey/study/add/", data)
    assert response.status_code == 302, response.content.decode()[-3000:]
    study = Study.objects.get(slug="ab")
    assert (study.assignment, study.stop_rule, study.stop_width, study.stop_alpha, study.stop_action) == (
        "adaptive", "width", 0.3, 0.05, "stop")
    assert study.criteria == [{"name": "clarity", "question": "Which is clearer?"},
                              {"name": "fit", "question": "Which fits?"}]  # the blank row is ignored
    assert study.scale_labels[2] == "somewhat similar" and len(study.scale_labels) == 6
    assert study.assignment_timeout_minutes == 15 and study.systems.count() == 3


def test_half_filled_rows_empty_labels_and_bad_names_are_clear_errors(boss) -> None:
    dataset = build_dataset()
    systems = list(System.objects.filter(name__in=SYSTEM_NAMES[:2]).values_list("pk", flat=True))
    cases = [
        ({"criteria-name": ["clarity", "fit"], "criteria-question": ["Which is clearer?", ""]},
         "criterion row 2: give both a name and a question (or clear both)"),
        ({"criteria-name": ["", ""], "criteria-question": ["", ""]},
         "give at least one criterion: a name and the question participants answer"),
        ({"criteria-name": ["two words"], "criteria-question": ["Q?"]}, "must be letters, digits, - or _"),
        ({"criteria-name": ["overall"], "criteria-question": ["Q?"]}, "&#x27;overall&#x27; is the pooled criterion"),
        ({"scale_labels_2": " ", "scale_labels_5": ""}, "give every point of the scale a label; empty: 2, 5"),
    ]
    for fields, message in cases:
        response = boss.post("/admin/survey/study/add/", form_data(dataset.pk, systems, **fields))
        assert response.status_code == 200 and message in response.content.decode(), message
    assert not Study.objects.exists()


def test_systems_outside_the_dataset_are_refused_and_the_change_form_lists_only_the_datasets(boss) -> None:
    ours = build_dataset(name="ours")
    build_dataset(name="theirs", systems=("OtherSys",))
    other = System.objects.get(name="OtherSys")
    mine = list(System.objects.filter(name__in=SYSTEM_NAMES).values_list("pk", flat=True))
    response = boss.post("/admin/survey/study/add/", form_data(ours.pk, [*mine[:2], other.pk]))
    html = response.content.decode()
    assert response.status_code == 200 and not Study.objects.exists()
    assert f"not in dataset ours (no summaries there): OtherSys. Its systems: {', '.join(sorted(SYSTEM_NAMES))}." \
        in html
    assert boss.post("/admin/survey/study/add/", form_data(ours.pk, mine[:2])).status_code == 302
    study = Study.objects.get(slug="ab")
    change = boss.get(f"/admin/survey/study/{study.pk}/change/").content.decode()
    select = re.search(r'<select name="systems".*?</select>', change, re.S).group(0)  # type: ignore[union-attr]
    offered = set(re.findall(r'<option value="(\d+)"', select))
    assert offered == {str(pk) for pk in mine} and str(other.pk) not in offered
    # moving the study to the other dataset with its systems kept is refused the same way
    moved = boss.post(f"/admin/survey/study/{study.pk}/change/",
                      form_data(System.objects.get(name="OtherSys").summaries.first().document.dataset_id,
                                mine[:2]))
    assert moved.status_code == 200 and "not in dataset theirs (no summaries there)" in moved.content.decode()
