"""LLM judge runs of a preference study (docs/conventions.md sec. 21): the study's cases as a judge sees them, the runs
with their progress, the cases file."""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from django.db.models import Count

from metaeval.core.judges.cases import JudgeCase
from survey.models import (
    JudgeJudgment,
    JudgeRun,
    PreferenceItem,
    Study,
)
from survey.selectors.preference import _document_ids, _examples, _own_texts


def sentence_name(position: int) -> str:
    """A topic sentence as a judge case's "system": ``s`` and its 0-based index in the topic (``s3``)."""
    return f"s{position}"


def _sentence_cases(study: Study) -> list[tuple[int, JudgeCase]]:
    """A sentence preference study's pairs as judge cases: ``case_id`` the topic id, ``model_a``/``model_b`` the
    sentences' :func:`sentence_name` (``sentence_a`` the lower index), their texts, ``context`` the topic's name
    and its sentences one per line (Zopf's S*), no examples."""
    items = (PreferenceItem.objects.filter(questionnaire__study=study)
             .select_related("questionnaire__document", "sentence_a", "sentence_b")
             .order_by("questionnaire__position", "questionnaire_id", "position"))
    cases: list[tuple[int, JudgeCase]] = []
    for item in items:
        if item.sentence_a is None or item.sentence_b is None:
            continue
        topic = item.questionnaire.document
        cases.append((item.pk, JudgeCase(
            case_id=topic.external_id, model_a=sentence_name(item.sentence_a.position),
            model_b=sentence_name(item.sentence_b.position), text_a=item.sentence_a.text, text_b=item.sentence_b.text,
            context=f"{topic.topic or topic.headline}\n\n{topic.body}", doc_id=topic.external_id)))
    return cases


def study_judge_cases(*, study: Study) -> list[tuple[int, JudgeCase]]:
    """A preference study's items as LLM-judge cases, in questionnaire and position order, with the item's id:
    ``case_id`` = ``doc_id/reader_id`` (as in the judgment export), ``model_a``/``model_b`` the item's systems and
    their texts, ``context`` the article's body, ``examples`` the reader's example texts participants see. A
    sentence preference study's pairs: :func:`_sentence_cases`."""
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:
        return _sentence_cases(study)
    items = list(
        PreferenceItem.objects.filter(questionnaire__study=study)
        .select_related("questionnaire__document", "questionnaire__reader_j", "system_a", "system_b",
                        "summary_a", "summary_b")
        .order_by("questionnaire__position", "questionnaire_id", "position")
    )
    own = _own_texts({item.questionnaire.reader_j_id for item in items if item.questionnaire.reader_j_id})
    documents = _document_ids(study)
    cache: dict[tuple[int, int], tuple[str, ...]] = {}
    cases: list[tuple[int, JudgeCase]] = []
    for item in items:
        document, reader = item.questionnaire.document, item.questionnaire.reader_j
        if reader is None or item.system_a is None or item.system_b is None:  # a sentence pair: no case
            continue
        key = (document.pk, reader.pk)
        if key not in cache:
            cache[key] = tuple(_examples(study, reader, document, own.get(reader.pk, {}), documents))
        text_a, text_b = item.texts
        cases.append((item.pk, JudgeCase(
            case_id=f"{document.external_id}/{reader.external_id}", model_a=item.system_a.name,
            model_b=item.system_b.name, text_a=text_a, text_b=text_b,
            context=document.body, examples=cache[key], doc_id=document.external_id, reader_id=reader.external_id,
        )))
    return cases


@dataclass(frozen=True)
class JudgeRunRow:
    """A judge run on the study's judges page: the run, its invalid answers and its answers per winner. ``done``
    counts the stored judgments from the same query as ``invalid`` (so ``invalid <= done`` always; the run's own
    ``done`` is written at most once a second while it runs)."""

    run: JudgeRun
    invalid: int
    winners: dict[str, int]

    @property
    def done(self) -> int:
        return sum(self.winners.values())

    @property
    def percent(self) -> float:
        return min(100.0, 100.0 * self.done / self.run.total) if self.run.total else 0.0

    @property
    def resumable(self) -> bool:
        """A failed or cancelled run of a live judge with judgments still to ask (one whose every judgment is
        stored, invalid ones included, has nothing to resume: its message says to start a new run)."""
        return (self.run.kind != JudgeRun.Kind.FILE and self.run.status in (JudgeRun.Status.FAILED,
                                                                            JudgeRun.Status.CANCELLED)
                and self.done < self.run.total)

    @property
    def cancellable(self) -> bool:
        return self.run.status in (JudgeRun.Status.QUEUED, JudgeRun.Status.RUNNING) and not self.run.cancel_requested


def study_judge_runs(*, study: Study) -> list[JudgeRunRow]:
    """The study's judge runs, newest first, with their answer counts."""
    counts: dict[int, dict[str, int]] = {}
    for run_id, winner, count in (
        JudgeJudgment.objects.filter(judge_run__study=study).values_list("judge_run_id", "winner")
        .annotate(n=Count("id")).order_by()
    ):
        counts.setdefault(run_id, {})[winner] = count
    return [JudgeRunRow(run, counts.get(run.pk, {}).get("invalid", 0), counts.get(run.pk, {}))
            for run in JudgeRun.objects.filter(study=study).order_by("-created_at", "-id")]


def judge_case_rows(*, study: Study) -> Iterator[dict[str, object]]:
    """The study's items as a judge cases file (``metaeval.core.judges.cases``: what ``python -m metaeval judge``
    reads), for judging outside the platform and importing the result as a file judge."""
    for _item, case in study_judge_cases(study=study):
        yield {"case_id": case.case_id, "model_a": case.model_a, "model_b": case.model_b, "text_a": case.text_a,
               "text_b": case.text_b, "context": case.context, "examples": list(case.examples),
               "doc_id": case.doc_id, "reader_id": case.reader_id}
