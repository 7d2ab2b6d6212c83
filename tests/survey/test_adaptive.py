"""Adaptive preference studies and stopping (conventions sec. 27.8): the first set at generation, each later set
drawn by the planning code from the stored judgments within the uniform design's budget, balanced sides, and a
study that stops itself (or only says it may) when its goal is reached."""
from __future__ import annotations

import itertools
import re
from collections import Counter

import numpy as np
import pytest
from django.test import Client

from metaeval.core.planning.adaptive import Assignment as Planned
from metaeval.core.planning.adaptive import pairs_of
from metaeval.core.planning.confseq import StopRule, pair_intervals
from metaeval.core.planning.power import sample_size
from metaeval.core.planning.study import next_set, set_probabilities, study_state
from survey import services
from survey.models import Judgment, PreferenceItem, Questionnaire, Study
from survey.selectors import adaptive as live
from survey.selectors.preference import preference_cases
from survey.services.adaptive import COMPLETE, set_seed
from tests.survey.test_preference import (
    SYSTEMS,
    answers,
    preference_study,
    researcher_client,  # noqa: F401 (fixture)
)

pytestmark = pytest.mark.django_db


def adaptive_study(**fields) -> Study:
    fields = {"slug": "adapt", "raters": 1, "per_pair": 4, "per_q": 2, **fields}
    return preference_study(assignment=Study.AssignmentPolicy.ADAPTIVE, **fields)


def items_of(questionnaire: Questionnaire) -> list[Planned]:
    return [Planned(q.document.external_id, q.reader_j.external_id, i.system_a.name, i.system_b.name)
            for i in questionnaire.preference_items.order_by("position").select_related("system_a", "system_b")
            for q in [questionnaire]]


def by_hand(study: Study) -> tuple[list[float], list[float]]:
    """Per pair (sorted system names) the judged items and the first system's summed item scores, one judgment at
    a time in Python (independent of the selector's aggregate query)."""
    index = {frozenset(SYSTEMS[k] for k in pair): p for p, pair in enumerate(pairs_of(3))}
    per_item: dict[tuple[int, int], list[float]] = {}
    for j in Judgment.objects.filter(item__questionnaire__study=study).select_related("item__system_a",
                                                                                     "item__system_b"):
        won = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[j.winner]
        first = j.item.system_a.name < j.item.system_b.name
        per_item.setdefault((j.assignment_id, j.item_id), []).append(won if first else 1.0 - won)
    count, score = [0.0] * 3, [0.0] * 3
    for (_, item_id), scores in per_item.items():
        item = PreferenceItem.objects.select_related("system_a", "system_b").get(pk=item_id)
        p = index[frozenset((item.system_a.name, item.system_b.name))]
        count[p] += 1
        score[p] += sum(scores) / len(scores)
    return count, score


def claim_and_answer(study: Study, choose=lambda entry, criterion: "a"):
    participant = services.participant_register(study=study)
    assignment = services.assignment_claim(participant=participant)
    services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                              values=answers(assignment, choose))
    return assignment


def test_generation_makes_the_first_set_only():
    study = adaptive_study()
    assert study.questionnaires.count() == 1
    first = items_of(study.questionnaires.get())
    assert len(first) == 2 and len({frozenset((i.model_a, i.model_b)) for i in first}) == 2
    assert len({(i.doc_id, i.reader_id) for i in first}) == 1  # one case per set


def test_each_set_is_the_planning_codes_draw_from_the_stored_judgments():
    study = adaptive_study()
    cases = preference_cases(study=study)
    for number in range(3):  # 6 sets of 2: the budget of 3 pairs x 4 cases
        claim_and_answer(study, lambda e, c, n=number: "ab"[(n + e["swap"]) % 2])
        count, score = by_hand(study)
        history = [item for q in study.questionnaires.order_by("position") for item in items_of(q)]
        state = study_state(SYSTEMS, count, score, rule=StopRule("none"), alpha=0.05)
        expected = next_set(set_probabilities(state), SYSTEMS, cases.cases, history, k=2,
                            seed=set_seed(study, study.questionnaires.count()))
        participant = services.participant_register(study=study)
        assignment = services.assignment_claim(participant=participant)
        assert items_of(assignment.questionnaire) == expected, number
        services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                  values=answers(assignment))
    # the selector's state is the one counted by hand
    count, score = by_hand(study)
    state = live.study_live_state(study, SYSTEMS)
    assert np.allclose(state.count, count) and np.allclose(state.score, score)


def test_the_budget_is_the_uniform_designs_and_sides_stay_balanced():
    study = adaptive_study(per_pair=2, per_q=3)  # 3 pairs x 2 cases = 6 items: two sets of three
    done = [claim_and_answer(study) for _ in range(2)]
    with pytest.raises(services.NoQuestionnaireAvailable, match="no more questionnaires"):
        services.assignment_claim(participant=services.participant_register(study=study))
    items = [item for a in done for item in items_of(a.questionnaire)]
    assert len(items) == 6
    assert Counter(frozenset((i.model_a, i.model_b)) for i in items) == {
        frozenset(p): 2 for p in itertools.combinations(SYSTEMS, 2)}
    for pair in itertools.combinations(SYSTEMS, 2):  # each pair once each way round
        assert Counter(i.model_a for i in items if {i.model_a, i.model_b} == set(pair)) == {pair[0]: 1, pair[1]: 1}
    positions = list(Questionnaire.objects.filter(study=study).values_list("position", flat=True))
    assert sorted(positions) == list(range(len(positions)))


def _stop_study(action: str) -> Study:
    # width 0.9 at alpha 0.5: reached once every pair has about a dozen one-sided judged items
    return adaptive_study(slug=f"stop-{action}", per_pair=20, per_q=3, stop_rule=Study.StopRule.WIDTH,
                          stop_width=0.9, stop_alpha=0.5, stop_action=action)


def earlier_name_wins(entry, criterion) -> str:
    """The answer under which the system earlier in name order wins (the texts' sides undone)."""
    item = PreferenceItem.objects.select_related("system_a", "system_b").get(pk=entry["pitem"])
    a_wins = item.system_a.name < item.system_b.name
    return "a" if a_wins != bool(entry["swap"]) else "b"


def test_a_study_stops_itself_when_its_goal_is_reached():
    study = _stop_study(Study.StopAction.STOP)
    sets = 0
    while True:
        participant = services.participant_register(study=study)
        try:
            assignment = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable as exc:
            assert str(exc) == COMPLETE
            break
        services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                  values=answers(assignment, earlier_name_wins))
        sets += 1
        assert sets < 20, "the study never stopped"
    count, score = by_hand(study)
    assert count == score  # the earlier name always won
    low, high = pair_intervals(np.array(count), np.array(score), 0.5 / 3)
    assert ((high - low) < 0.9).all()  # the goal, from the judgments by hand
    study.refresh_from_db()
    assert study.completed_at is not None
    # a participant who arrives now reads the polite message on the page
    late = services.participant_register(study=study)
    client = Client()
    session = client.session
    session[f"survey-participant-{study.pk}"] = late.token
    session.save()
    page = client.post(f"/s/{study.slug}/start/").content.decode()
    assert "This study is complete" in page and not late.assignments.exists()
    # one set earlier the goal was not reached: it stopped at the first set that reached it
    last = Questionnaire.objects.filter(study=study).order_by("-position").first()
    before = [c - sum(1 for i in items_of(last) if frozenset((i.model_a, i.model_b)) == frozenset(
        SYSTEMS[k] for k in pair)) for c, pair in zip(count, pairs_of(3), strict=True)]
    low0, high0 = pair_intervals(np.array(before, dtype=float), np.array(before, dtype=float), 0.5 / 3)
    assert not ((high0 - low0) < 0.9).all()


def test_notify_only_tells_and_keeps_handing_out_sets():
    study = _stop_study(Study.StopAction.NOTIFY)
    for _ in range(14):
        claim_and_answer(study, earlier_name_wins)
    state = live.study_live_state(study, SYSTEMS)
    assert state.stopped  # reached ...
    claim_and_answer(study)  # ... yet sets are still handed out
    study.refresh_from_db()
    assert study.completed_at is None


def test_the_progress_page_shows_the_live_ranking_with_bands_and_stopping(researcher_client):  # noqa: F811
    study = adaptive_study(slug="prog", per_pair=20, per_q=3, stop_rule=Study.StopRule.SEPARATED, stop_alpha=0.5)
    for _ in range(12):
        claim_and_answer(study, earlier_name_wins)
    state = live.study_live_state(study, SYSTEMS)
    page = researcher_client.get(f"/research/studies/{study.slug}/").content.decode()
    section = page.split('<div id="study-ranking">', 1)[1].split("</div>", 1)[0]
    shown = re.findall(r'<tr data-band="(\d+)"( data-tied="true")?><td>([^<]*)</td><th scope="row">([^<]*)</th>',
                       section)
    expected = [(str(r["system"]), f"{r['rank_best']}" if r["rank_best"] == r["rank_worst"]
                 else f"{r['rank_best']}-{r['rank_worst']}") for r in state.ranking()]
    assert [(system, rank) for _, _, rank, system in shown] == expected
    assert [s for s, _ in expected] == SYSTEMS  # the earlier name always won
    assert "Stopping goal: every adjacent pair of the ranking separated." in section
    assert ("Reached: the study may stop" in section) is state.stopped
    progress = researcher_client.get(f"/research/studies/{study.slug}/progress.json").json()
    assert progress["ranking"]["judged"] == state.judged == 36
    assert [row["system"] for row in progress["ranking"]["rows"]] == SYSTEMS
    # saved judgments: the uniform design's items for the closest adjacent pair's measured rate, times the pairs
    rate = min(float(state.score[p] / state.count[p]) for p in (0, 2))  # (A, B) and (B, C)
    if rate < 1.0:
        assert progress["ranking"]["uniform_equivalent"] == 3 * sample_size(rate, alpha=0.5 / 3).decisive
    else:  # a measured rate of 1 gives no finite uniform figure
        assert progress["ranking"]["uniform_equivalent"] is None
    assert Client().get(f"/research/studies/{study.slug}/progress.json").status_code in (302, 403)
    api = researcher_client.get(f"/api/studies/{study.slug}/progress/")
    assert api.status_code == 200 and api.json()["ranking"] == progress["ranking"]


def test_uniform_equivalent_by_hand():
    # A beats B at 0.7 and B beats C at 0.8 over 50 items each: the closest pair needs sample_size(0.7) per pair
    state = study_state(SYSTEMS, [50, 50, 50], [35, 45, 40], rule=StopRule("separated"), alpha=0.05)
    assert live.uniform_equivalent(state) == 3 * sample_size(0.7, alpha=0.05 / 3, power=0.8).decisive
    assert live.uniform_equivalent(study_state(SYSTEMS, [50, 50, 50], [35, 45, 40], rule=StopRule("none"),
                                               alpha=0.05)) is None
    assert live.uniform_equivalent(study_state(SYSTEMS, [50, 0, 50], [25, 0, 40], rule=StopRule("separated"),
                                               alpha=0.05)) is None  # a rate of 1/2


def test_the_design_preview_has_the_power_table_and_a_size_picker(researcher_client):  # noqa: F811
    from metaeval.core.planning.power import exact_power

    study = preference_study(slug="plan", raters=2, per_pair=4)
    Study.objects.filter(pk=study.pk).update(status=Study.Status.DRAFT)
    page = researcher_client.get(f"/research/studies/{study.slug}/design/").content.decode()
    table = page.split('id="design-power"', 1)[1].split("</table>", 1)[0]
    rows = re.findall(r'<th scope="row">([\d.]+)</th><td class="num">(-?\d+)</td><td class="num">(\d+)</td>'
                      r'<td class="num" data-power="cases">(\d+)</td><td class="num">([\d.]+)</td>', table)
    assert len(rows) == len(live.POWER_WIN_RATES)
    for (rate, gap, judgments, cases, power_now), p in zip(rows, live.POWER_WIN_RATES, strict=True):
        found = sample_size(p, alpha=0.05, power=0.8)
        assert (float(rate), int(judgments), int(cases)) == (p, found.decisive, -(-found.decisive // 2))
        assert int(gap) == round(400 * np.log10(p / (1 - p)))
        assert float(power_now) == pytest.approx(float(exact_power(4 * 2, p, 0.05)[0]), abs=0.005)
    assert rows[1][2] == "199"  # win rate 0.6: the hand-checked 199 decisive judgments
    # every row has a keyboard-reachable button that fills the size field; the form saves the size
    assert table.count('<button type="button" class="secondary pick-size"') == len(rows)
    assert 'id="design-size-input"' in page and 'name="action" value="size"' in page
    response = researcher_client.post(f"/research/studies/{study.slug}/design/", {"action": "size",
                                                                                   "cases_per_pair": rows[1][3]})
    assert response.status_code == 302
    study.refresh_from_db()
    assert study.cases_per_pair == int(rows[1][3]) == 100
    bad = researcher_client.post(f"/research/studies/{study.slug}/design/", {"action": "size",
                                                                              "cases_per_pair": "lots"}, follow=True)
    assert "give a whole number from 1 to 10000" in bad.content.decode()
    study.refresh_from_db()
    assert study.cases_per_pair == 100


def test_a_uniform_study_can_stop_itself_too():
    study = preference_study(slug="ustop", raters=2, per_pair=9, per_q=3, stop_rule=Study.StopRule.WIDTH,
                             stop_width=0.9, stop_alpha=0.5, stop_action=Study.StopAction.STOP)
    slots = study.questionnaires.count() * 2
    done = 0
    while True:
        participant = services.participant_register(study=study)
        try:
            assignment = services.assignment_claim(participant=participant)
        except services.NoQuestionnaireAvailable as exc:
            assert str(exc) == COMPLETE
            break
        services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                  values=answers(assignment, earlier_name_wins))
        done += 1
        assert done < slots, "the study never stopped"
    study.refresh_from_db()
    assert study.completed_at is not None and study.questionnaires.count() == 9  # nothing drawn: the uniform design
    assert live.study_live_state(study, SYSTEMS).stopped
