"""The participants page: each participant's work, time, agreement and attention, the quality flags
(docs/conventions.md sec. 15), the excluded raters and the approvals file."""
from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from metaeval.core.stats.raters import RaterQuality, rater_report
from survey.models import (
    Assignment,
    Judgment,
    Participant,
    Study,
)
from survey.selectors.exports import rater_id, ratings_export_rows

#: Quality flags on the participants page (docs/conventions.md, sec. 15): a participant is flagged when
FAST_SECONDS_PER_PAIR = 4.0  # their median time per shown pair is below this,


STRAIGHTLINED_SHARE = 0.5  # at least this share of their rating sets use one value throughout,


POSITION_BIAS_SHARE = 0.85  # preference studies: at least this share (or at most 1 - it) of first-shown choices,


POSITION_BIAS_MIN_ANSWERS = 9  # over at least this many answers,


LOW_AGREEMENT_SPEARMAN = 0.2  # their Spearman with the others' mean is below this (3 or more shared pairs),


def excluded_raters(*, study: Study) -> list[str]:
    """Rater ids (``"P12"``) of the study's participants excluded on its participants page, in id order."""
    ids = study.participants.filter(excluded=True).order_by("pk").values_list("pk", flat=True)
    return [rater_id(pk) for pk in ids]


@dataclass(frozen=True)
class ParticipantRow:
    """One line of the participants page."""

    participant: Participant
    rater: str
    sets: int  # completed rating sets
    codes: list[str]  # completion codes of the completed sets, in completion order
    seconds_on_task: float  # sum over completed sets of completed_at - claimed_at
    seconds_per_pair: float | None  # median over completed sets of (completed_at - claimed_at) / pairs shown
    quality: RaterQuality | None  # from metaeval.core.stats.raters.rater_report (automatic ratings left out)
    attention_passed: int
    attention_total: int
    flags: list[str]
    #: preference studies: the share of their A/B answers that chose the text shown first (ties left out), and of how
    #: many answers; None for similarity studies
    first_share: float | None = None
    choices: int = 0
    #: preference studies with a gold threshold: their share of gold pairs answered right is below it
    below_gold: bool = False

    @property
    def minutes_on_task(self) -> float:
        return self.seconds_on_task / 60


def _flags(per_pair: float | None, quality: RaterQuality | None, passed: int, total: int, *,
           first_share: float | None = None, choices: int = 0, gold_threshold: float | None = None,
           below_gold: bool = False) -> list[str]:
    flags = []
    if per_pair is not None and per_pair < FAST_SECONDS_PER_PAIR:
        flags.append(f"fast: {per_pair:.1f} s per pair")
    if quality is not None:
        if quality.straightlined_share is not None and quality.straightlined_share >= STRAIGHTLINED_SHARE:
            flags.append(f"straight-lined {quality.n_straightlined} of {quality.n_questionnaires} sets")
        rho = quality.spearman_with_others
        if not math.isnan(rho) and rho < LOW_AGREEMENT_SPEARMAN:
            flags.append(f"low agreement: Spearman {rho:.2f} with the others")
    if gold_threshold is not None and total:
        if below_gold:
            flags.append(f"gold {passed} of {total} right, below the study's threshold {gold_threshold:g}")
    elif passed < total:
        flags.append(f"failed {total - passed} of {total} attention pairs")
    if first_share is not None and choices >= POSITION_BIAS_MIN_ANSWERS and (
        first_share >= POSITION_BIAS_SHARE or first_share <= 1 - POSITION_BIAS_SHARE
    ):
        flags.append(f"position bias: chose the text shown first in {first_share:.0%} of {choices} answers")
    return flags


def first_choice_shares(*, study: Study) -> dict[int, tuple[float, int]]:
    """Participant id -> (share of their non-tie A/B answers that chose the text shown first, those answers)."""
    counts: dict[int, list[int]] = {}
    rows = (Judgment.objects.filter(assignment__questionnaire__study=study, assignment__completed_at__isnull=False)
            .exclude(winner=Judgment.Winner.TIE).values_list("assignment__participant_id", "winner", "shown_first"))
    for participant_id, winner, first in rows.iterator(chunk_size=5000):
        entry = counts.setdefault(participant_id, [0, 0])
        entry[0] += winner == first
        entry[1] += 1
    return {pk: (chose / total, total) for pk, (chose, total) in counts.items() if total}


def study_participants(*, study: Study) -> list[ParticipantRow]:
    """Every participant of the study who completed at least one rating set, with time on task, completion codes,
    rater quality over all the study's ratings (excluded participants included) and flags."""
    rows = list(ratings_export_rows(study=study))
    quality = {q.rater: q for q in rater_report(rows)} if rows else {}
    done: dict[int, list[Assignment]] = {}
    assignments = (
        Assignment.objects.filter(questionnaire__study=study, completed_at__isnull=False)
        .order_by("participant_id", "completed_at")
        .only("participant_id", "claimed_at", "completed_at", "presentation", "completion_code", "attention")
    )
    for a in assignments:
        done.setdefault(a.participant_id, []).append(a)
    preference = study.is_pairwise
    shares = first_choice_shares(study=study) if preference else {}
    threshold = study.gold_threshold if preference else None
    out = []
    for participant in study.participants.filter(pk__in=done).order_by("pk"):
        sets = done[participant.pk]
        spans = [(a.completed_at - a.claimed_at).total_seconds() for a in sets if a.completed_at]
        per_pair = [span / len(a.presentation) for span, a in zip(spans, sets, strict=True) if a.presentation]
        checks = [check for a in sets for check in (a.attention or [])]
        passed = sum(1 for check in checks if check.get("passed"))
        rater = rater_id(participant.pk)
        q = quality.get(rater)
        seconds = statistics.median(per_pair) if per_pair else None
        first_share, choices = shares.get(participant.pk, (None, 0)) if preference else (None, 0)
        below_gold = threshold is not None and bool(checks) and passed / len(checks) < threshold
        out.append(ParticipantRow(
            participant=participant, rater=rater, sets=len(sets), codes=[a.completion_code for a in sets],
            seconds_on_task=sum(spans), seconds_per_pair=seconds, quality=q,
            attention_passed=passed, attention_total=len(checks),
            flags=_flags(seconds, q, passed, len(checks), first_share=first_share, choices=choices,
                         gold_threshold=threshold, below_gold=below_gold),
            first_share=first_share, choices=choices, below_gold=below_gold,
        ))
    return out


#: The approvals file for the crowd platform (one row per participant with a completed set).
APPROVAL_COLUMNS = ["crowd_id", "crowd_source", "rater", "completion_codes", "sets", "decision", "excluded", "note"]


def approval_rows(*, study: Study) -> Iterator[dict[str, object]]:
    """Rows of the approvals CSV, in participant order."""
    for row in study_participants(study=study):
        p = row.participant
        yield {
            "crowd_id": p.external_id,
            "crowd_source": p.external_source,
            "rater": row.rater,
            "completion_codes": " ".join(row.codes),
            "sets": row.sets,
            "decision": p.review,
            "excluded": int(p.excluded),
            "note": p.review_note,
        }
