"""The iCOPERNICUS survey (App. E.2): 3 sampled readers per document -> 3 reader pairs, the readers' own pair and 9
systems' pairs per questionnaire, 1 rater, order shuffled or fixed with the readers' pair first."""
from __future__ import annotations

import random
from collections import defaultdict

import pytest

from survey import design, services
from survey.models import Item, Study, System
from tests.conftest import build_dataset

pytestmark = pytest.mark.django_db
NINE = [f"llm{i}:c-0-shot" for i in range(9)]


def test_reader_sampling_takes_all_pairs_of_k_readers():
    readers = ["r1", "r2", "r3", "r4", "r5"]
    pairs = design.reader_pairs(readers, mode="readers", per_document=3, rng=random.Random(4))
    chosen = sorted({reader for pair in pairs for reader in pair})
    assert len(pairs) == 3 and len(chosen) == 3
    assert pairs == [(a, b) for i, a in enumerate(chosen) for b in chosen[i + 1:]]  # dataset order, all pairs
    assert design.reader_pairs(readers[:2], mode="readers", per_document=3, rng=random.Random(4)) == [("r1", "r2")]
    with pytest.raises(ValueError, match="needs pairs_per_document >= 2"):
        design.reader_pairs(readers, mode="readers", per_document=1, rng=random.Random(4))


def preset_study(*, reference_first: bool = False) -> Study:
    dataset = build_dataset(name="icop", docs=2, readers=5, systems=NINE)
    study = Study.objects.create(slug="icop", title="iCOPERNICUS survey", dataset=dataset, seed=11,
                                 systems_per_questionnaire=5, raters_per_questionnaire=2)
    study.systems.set(System.objects.filter(name__in=NINE))
    services.study_apply_icopernicus_preset(study=study, reference_first=reference_first)
    services.questionnaires_generate(study=study)
    services.study_open(study=study)
    return study


def test_the_preset_design():
    study = preset_study()
    assert (study.pair_mode, study.pairs_per_document, study.systems_per_questionnaire,
            study.raters_per_questionnaire) == ("readers", 3, 9, 1)
    readers: dict[str, set[str]] = defaultdict(set)
    for q in study.questionnaires.select_related("document", "reader_j", "reader_k"):
        items = list(q.items.select_related("system").order_by("position"))
        assert [i.system.name for i in items] == ["user", *sorted(NINE)]  # the readers' pair and all 9 systems
        readers[q.document.external_id] |= {q.reader_j.external_id, q.reader_k.external_id}
    assert study.questionnaires.count() == 2 * 3 and all(len(r) == 3 for r in readers.values())
    with pytest.raises(services.SurveyError, match="presets apply to drafts"):
        services.study_apply_icopernicus_preset(study=study)


@pytest.mark.parametrize("fixed", [True, False])
def test_fixed_order_shows_the_readers_pair_first(fixed):
    study = preset_study(reference_first=fixed)
    firsts = set()
    orders = set()
    for _ in range(6):
        participant = services.participant_register(study=study)
        assignment = services.assignment_claim(participant=participant)
        items = [Item.objects.select_related("system").get(pk=entry["item"]) for entry in assignment.presentation]
        firsts.add(items[0].system.name)
        orders.add(tuple(item.position for item in items))
    if fixed:
        assert firsts == {"user"} and orders == {tuple(range(10))}
    else:
        assert len(orders) > 1  # each participant their own order
