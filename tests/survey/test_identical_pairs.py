"""The study setting ``identical_pairs``: show (the papers' protocol), auto (not shown, recorded at the top of the
scale and flagged) and omit (not shown, missing)."""
from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from metaeval import selectors as metaeval_selectors
from metaeval.core.perseval.pipeline import RunOptions, run_scores
from survey import selectors, services
from survey.models import RATING_MAX, Item, Rating, Study, Summary, System
from tests.conftest import build_dataset, build_study, complete_questionnaires, make_generic

GENERIC = ("SysnameA", "SysnameB")  # one text for every reader of a document


@pytest.fixture
def generic_dataset(db):
    return make_generic(build_dataset(name="generic"), GENERIC)


def _shown_systems(assignment) -> set[str]:
    items = Item.objects.filter(pk__in=[entry["item"] for entry in assignment.presentation]).select_related("system")
    return {item.system.name for item in items}


def _value(item: Item) -> int:
    """A deterministic rating of a pair that is not identical, from its system and readers (1..5)."""
    return 1 + (item.system.pk * 7 + item.questionnaire.reader_j.pk * 3 + item.questionnaire.reader_k.pk) % 5


def _answers(assignment, _index: int) -> dict[str, str]:
    items = Item.objects.select_related("system", "questionnaire__reader_j", "questionnaire__reader_k").in_bulk(
        [entry["item"] for entry in assignment.presentation]
    )
    return {
        entry["key"]: str(RATING_MAX if items[entry["item"]].identical else _value(items[entry["item"]]))
        for entry in assignment.presentation
    }


def test_generation_flags_identical_pairs_after_collapsing_whitespace(generic_dataset):
    study = build_study(generic_dataset, slug="show")
    items = Item.objects.filter(questionnaire__study=study).select_related("system")
    identical = {item.system.name for item in items if item.identical}
    assert identical == set(GENERIC)
    assert all(not item.identical for item in items if item.system.name not in GENERIC)


def test_show_presents_identical_pairs_and_records_no_automatic_rating(generic_dataset):
    study = build_study(generic_dataset, slug="show")
    complete_questionnaires(study, _answers)
    assert not Rating.objects.filter(automatic=True).exists()
    shown = Rating.objects.filter(assignment__questionnaire__study=study, item__identical=True)
    assert shown.exists() and all(r.shown_position is not None for r in shown)


@pytest.mark.parametrize("mode", ["auto", "omit"])
def test_hidden_identical_pairs_are_never_presented(generic_dataset, mode):
    study = build_study(generic_dataset, slug=mode, identical_pairs=mode)
    participant = services.participant_register(study=study)
    seen = 0
    while True:
        try:
            assignment = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable:
            break
        assert not _shown_systems(assignment) & set(GENERIC)
        pairs = selectors.assignment_pairs(assignment)
        assert pairs and all(p.first.split() != p.second.split() for p in pairs)
        seen += 1
        services.ratings_submit(
            assignment_public_id=assignment.public_id, participant=participant, values=_answers(assignment, 0)
        )
    assert seen == study.questionnaires.count()
    automatic = Rating.objects.filter(assignment__questionnaire__study=study, automatic=True)
    if mode == "omit":
        assert not automatic.exists()
        assert not Rating.objects.filter(item__identical=True).exists()
    else:
        identical_items = Item.objects.filter(questionnaire__study=study, identical=True).count()
        assert automatic.count() == identical_items > 0
        assert {(r.value, r.shown_position, r.swapped) for r in automatic} == {(RATING_MAX, None, False)}
        assert set(automatic.values_list("item__system__name", flat=True)) == set(GENERIC)
        rows = list(selectors.ratings_export_rows(study=study))
        flagged = [row for row in rows if row["automatic"] == 1]
        assert len(flagged) == identical_items
        assert all(row["rating"] == RATING_MAX and row["shown_position"] is None for row in flagged)
        assert all(row["automatic"] == 0 for row in rows if row["system"] not in GENERIC)
    progress = selectors.study_progress(study)
    assert progress.hidden_pairs == Item.objects.filter(questionnaire__study=study, identical=True).count() > 0
    assert progress.automatic_ratings == automatic.count()


def test_hj_with_auto_equals_hj_with_show_where_identical_pairs_were_rated_six(generic_dataset):
    """The same design rated the same way: shown identical pairs all rated 6 by hand vs recorded automatically."""
    show = build_study(generic_dataset, slug="show", raters=1)
    auto = build_study(generic_dataset, slug="auto", raters=1, identical_pairs="auto")
    complete_questionnaires(show, _answers)
    complete_questionnaires(auto, _answers)
    corpus = metaeval_selectors.corpus_from_dataset(dataset=generic_dataset)
    options = RunOptions(measures=[], aux=["rouge_l", "jsd"])
    by_mode = {}
    for study in (show, auto):
        ratings = metaeval_selectors.ratings_for_study(study=study)
        by_mode[study.slug] = run_scores(corpus, options, ratings=ratings).table()
    assert Rating.objects.filter(assignment__questionnaire__study=auto, automatic=True).exists()
    assert len(by_mode["show"]) == len(by_mode["auto"]) > 0
    assert by_mode["show"] == by_mode["auto"]


def test_omit_treats_identical_pairs_as_missing_in_hj(generic_dataset):
    omit = build_study(generic_dataset, slug="omit", raters=1, identical_pairs="omit")
    complete_questionnaires(omit, _answers)
    ratings = metaeval_selectors.ratings_for_study(study=omit)
    assert {row.system for row in ratings.rows}.isdisjoint(GENERIC)


def test_a_questionnaire_with_only_identical_pairs_is_not_generated_when_hidden(generic_dataset):
    """Readers' own headlines identical for one document, and a group of generic systems only: nothing to show."""
    user = System.objects.get(name="user")
    Summary.objects.filter(document__external_id="N0", document__dataset=generic_dataset, system=user).update(
        text="everyone wrote this headline"
    )
    show = Study.objects.create(slug="s", title="s", dataset=generic_dataset, systems_per_questionnaire=2, seed=3)
    auto = Study.objects.create(
        slug="a", title="a", dataset=generic_dataset, systems_per_questionnaire=2, seed=3, identical_pairs="auto"
    )
    for study in (show, auto):
        study.systems.set(System.objects.filter(name__in=GENERIC))
    shown = services.questionnaires_generate(study=show)
    hidden = services.questionnaires_generate(study=auto)
    assert len(shown.questionnaires) - len(hidden.questionnaires) == 3  # N0: three reader pairs, all identical
    assert sum("every pair has identical texts" in note for note in hidden.skipped) == 3
    assert list(auto.questionnaires.values_list("position", flat=True)) == list(range(len(hidden.questionnaires)))


def test_identical_pairs_cannot_change_once_participants_rated(generic_dataset):
    study = build_study(generic_dataset, slug="locked", identical_pairs="auto")
    study.identical_pairs = "omit"
    study.full_clean()  # no participant yet: allowed
    complete_questionnaires(Study.objects.get(pk=study.pk), _answers)
    with pytest.raises(ValidationError, match="identical_pairs"):
        study.full_clean()


def test_a_questionnaire_left_with_nothing_to_show_is_never_handed_out(generic_dataset):
    """Generated under ``show``, then switched to ``auto`` before anyone claimed: a questionnaire whose every pair is
    identical would be an empty set, so no participant is given it."""
    user = System.objects.get(name="user")
    Summary.objects.filter(document__external_id="N0", document__dataset=generic_dataset, system=user).update(
        text="everyone wrote this headline"
    )
    study = Study.objects.create(slug="switch", title="switch", dataset=generic_dataset, systems_per_questionnaire=2,
                                 seed=3, raters_per_questionnaire=1)
    study.systems.set(System.objects.filter(name__in=GENERIC))
    services.questionnaires_generate(study=study)
    empty = [q.pk for q in study.questionnaires.all() if all(i.identical for i in q.items.all())]
    assert len(empty) == 3
    study.identical_pairs = "auto"
    study.full_clean()
    study.save()
    services.study_open(study=study)
    participant = services.participant_register(study=study)
    claimed = []
    while True:
        try:
            a = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable:
            break
        assert a.presentation
        claimed.append(a.questionnaire_id)
        services.ratings_submit(assignment_public_id=a.public_id, participant=participant, values=_answers(a, 0))
    assert len(claimed) == study.questionnaires.count() - 3 and not set(claimed) & set(empty)


def test_questionnaires_are_generated_only_while_the_study_is_a_draft(generic_dataset):
    study = build_study(generic_dataset, slug="opened")  # generated, then opened
    with pytest.raises(services.SurveyError, match="generated while it is a draft"):
        services.questionnaires_generate(study=study)
    assert study.questionnaires.count() == 18
