"""Many stored judgments fast (``bulk_create``, no services): participants' completed assignments with their
judgments, and LLM judge runs with theirs, on a preference study built by ``tests.survey.test_preference``. For
the export tests (queries that do not grow with the rows) and ``benchmarks/export_bench.py`` (300,000 rows)."""
from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from survey.models import Assignment, JudgeJudgment, JudgeRun, Judgment, Participant, PreferenceItem, Study
from tests.survey.test_preference import preference_study

BATCH = 5000
START = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
WINNERS = ("model_a", "model_b", "model_a", "tie")


def bulk_preference_study(slug: str, *, docs: int = 3, readers: int = 3, per_pair: int = 4,
                          per_q: int = 3) -> Study:
    """An open preference study of three systems: ``3 * per_pair`` items in questionnaires of ``per_q``."""
    return preference_study(slug=slug, docs=docs, readers=readers, per_pair=per_pair, per_q=per_q)


def _items_by_questionnaire(study: Study) -> list[tuple[int, list[int]]]:
    items = PreferenceItem.objects.filter(questionnaire__study=study).order_by("questionnaire__position",
                                                                                 "questionnaire_id", "position")
    grouped: dict[int, list[int]] = {}
    for questionnaire_id, item_id in items.values_list("questionnaire_id", "id"):
        grouped.setdefault(questionnaire_id, []).append(item_id)
    return list(grouped.items())


def add_human_judgments(study: Study, count: int) -> int:
    """``count`` participants' judgments: participant after participant completes every questionnaire once (one
    second apart), answering each criterion of each pair; the last assignment may hold fewer. Returns the number of
    participants added."""
    criteria = [criterion["name"] for criterion in study.criteria]
    questionnaires = _items_by_questionnaire(study)
    per_set = {q: len(items) * len(criteria) for q, items in questionnaires}
    plan: list[tuple[int, int, int]] = []  # (participant index, questionnaire, judgments in it)
    left = count
    for index in itertools.count():
        for questionnaire, _items in questionnaires:
            if left <= 0:
                break
            take = min(left, per_set[questionnaire])
            plan.append((index, questionnaire, take))
            left -= take
        if left <= 0:
            break
    offset = study.participants.count()
    people = max((index for index, _q, _n in plan), default=-1) + 1
    participants = Participant.objects.bulk_create(
        [Participant(study=study, token=f"bulk-{study.slug}-{offset + n}", consent_at=START) for n in range(people)],
        batch_size=BATCH)
    items = dict(questionnaires)
    judgments: list[Judgment] = []
    for start in range(0, len(plan), BATCH):
        chunk = plan[start:start + BATCH]
        made = Assignment.objects.bulk_create([
            Assignment(questionnaire_id=questionnaire, participant=participants[index], slot=offset + index,
                       public_id=f"bulk-{study.slug}-{offset + index}-{questionnaire}", presentation_seed=index,
                       presentation=[], claimed_at=START, expires_at=START + timedelta(hours=1),
                       completed_at=START + timedelta(seconds=start + n))
            for n, (index, questionnaire, _take) in enumerate(chunk)], batch_size=BATCH)
        for assignment, (_index, questionnaire, take) in zip(made, chunk, strict=True):
            cells = [(position, item, criterion) for position, item in enumerate(items[questionnaire])
                     for criterion in criteria][:take]
            for n, (position, item, criterion) in enumerate(cells):
                judgments.append(Judgment(assignment=assignment, item_id=item, criterion=criterion,
                                          winner=WINNERS[(assignment.pk + n) % len(WINNERS)],
                                          shown_first="model_a" if (assignment.pk + position) % 2 else "model_b",
                                          shown_position=position))
            if len(judgments) >= BATCH:
                Judgment.objects.bulk_create(judgments, batch_size=BATCH)
                judgments = []
    Judgment.objects.bulk_create(judgments, batch_size=BATCH)
    return people


def add_llm_judgments(study: Study, count: int, *, repeats: int = 40) -> int:
    """``count`` LLM judgments: file-judge runs of ``repeats`` repeats per item and criterion (a new run, named
    ``bulk-judge-N``, when one is full). Returns the number of runs added."""
    criteria = [criterion["name"] for criterion in study.criteria]
    items = [item for _q, group in _items_by_questionnaire(study) for item in group]
    per_run = len(items) * len(criteria) * repeats
    runs = 0
    left = count
    first = study.judge_runs.count()
    while left > 0:
        take = min(left, per_run)
        run = JudgeRun.objects.create(study=study, kind=JudgeRun.Kind.FILE, name=f"bulk-judge-{first + runs}",
                                      criteria=criteria, runs=repeats, status=JudgeRun.Status.DONE, total=take,
                                      done=take)
        cells = ((number, item, criterion) for number in range(1, repeats + 1) for item in items
                 for criterion in criteria)
        batch: list[JudgeJudgment] = []
        for n, (number, item, criterion) in enumerate(itertools.islice(cells, take)):
            batch.append(JudgeJudgment(judge_run=run, item_id=item, criterion=criterion, run=number,
                                       winner=WINNERS[(n // 3) % len(WINNERS)],
                                       shown_first="model_a" if number % 2 else "model_b"))
            if len(batch) >= BATCH:
                JudgeJudgment.objects.bulk_create(batch, batch_size=BATCH)
                batch = []
        JudgeJudgment.objects.bulk_create(batch, batch_size=BATCH)
        left -= take
        runs += 1
    return runs
