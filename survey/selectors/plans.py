"""A study's design plan before questionnaires exist, and its time and cost: the questionnaires it would have, the
median time per pair measured so far, the estimate at a pay per hour."""
from __future__ import annotations

import statistics
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from metaeval.core.io.corpus import same_text
from survey import design
from survey.models import (
    REFERENCE_SYSTEM,
    Assignment,
    Document,
    Reader,
    Study,
    Summary,
)

DEFAULT_SECONDS_PER_PAIR = 20.0  # assumed when no completed rating set has been timed yet


@dataclass(frozen=True)
class PlannedQuestionnaire:
    spec: design.QuestionnaireSpec
    document: Document
    reader_j: Reader
    reader_k: Reader
    pairs: list[tuple[Summary, Summary]]  # (summary_j, summary_k) per system of spec.systems, reference first
    identical: list[bool]  # per pair: the two texts are the same (metaeval.core.io.corpus.same_text)

    @property
    def visible(self) -> int:
        return len(self.pairs) - sum(self.identical)


@dataclass(frozen=True)
class DesignPlan:
    """What *Generate questionnaires* would create for a study now, and what a participant would be shown."""

    questionnaires: list[PlannedQuestionnaire]
    skipped: list[str]
    identical_pairs: str  # the study's setting
    raters: int  # raters per questionnaire
    attention_checks: int = 0  # known-answer pairs added to every rating set

    @property
    def pairs(self) -> int:
        return sum(len(q.pairs) for q in self.questionnaires)

    @property
    def identical(self) -> int:
        return sum(sum(q.identical) for q in self.questionnaires)

    @property
    def shown_pairs(self) -> int:
        """Pairs a participant is shown, over all questionnaires (identical ones only with ``show``)."""
        return self.pairs if self.identical_pairs == Study.IdenticalPairs.SHOW else self.pairs - self.identical

    @property
    def rating_sets(self) -> int:
        return len(self.questionnaires) * self.raters

    @property
    def ratings_needed(self) -> int:
        """Ratings given by people: shown pairs times raters per questionnaire."""
        return self.shown_pairs * self.raters

    @property
    def attention_pairs(self) -> int:
        """Known-answer pairs people answer besides: attention checks per set times rating sets."""
        return self.attention_checks * self.rating_sets

    @property
    def answers_needed(self) -> int:
        """Every pair a participant answers: ratings needed plus attention pairs (what participant time counts)."""
        return self.ratings_needed + self.attention_pairs


def study_design_plan(*, study: Study) -> DesignPlan:
    """The study's design (``survey.design.design_study`` from its settings and the dataset's summaries) with the
    rows it needs. Under ``identical_pairs`` auto or omit, a questionnaire whose every pair has identical texts is
    left out (nothing to show) and noted in ``skipped``. Raises ValueError when the study has no systems."""
    systems = list(study.systems.exclude(name=REFERENCE_SYSTEM).order_by("name").values_list("name", flat=True))
    if not systems:
        raise ValueError(f"study {study.slug!r} has no systems selected")
    summaries: dict[tuple[str, str, str], Summary] = {}
    for s in Summary.objects.filter(document__dataset=study.dataset).select_related("document", "reader", "system"):
        summaries[(s.document.external_id, s.reader.external_id, s.system.name)] = s
    docs_by_id = {doc.external_id: doc for doc in study.dataset.documents.order_by("id")}
    readers_by_id = {reader.external_id: reader for reader in study.dataset.readers.order_by("id")}
    has_any = {(doc_id, reader_id) for doc_id, reader_id, _system in summaries}
    # each document's readers in dataset order: those with at least one summary of it
    documents = {d: [r for r in readers_by_id if (d, r) in has_any] for d in docs_by_id}
    report = design.design_study(
        documents,
        systems,
        lambda d, r, s: (d, r, s) in summaries,
        systems_per_questionnaire=study.systems_per_questionnaire,
        pair_mode=study.pair_mode,
        pairs_per_document=study.pairs_per_document,
        seed=study.seed,
    )
    hides = study.identical_pairs != Study.IdenticalPairs.SHOW
    planned: list[PlannedQuestionnaire] = []
    skipped = list(report.skipped)
    for spec in report.questionnaires:
        pairs = [(summaries[(spec.doc_id, spec.reader_j, n)], summaries[(spec.doc_id, spec.reader_k, n)])
                 for n in spec.systems]
        identical = [same_text(a.text, b.text) for a, b in pairs]
        if hides and all(identical):
            skipped.append(
                f"document {spec.doc_id}, readers ({spec.reader_j}, {spec.reader_k}), group {spec.group}: every "
                f"pair has identical texts, nothing to show (identical_pairs={study.identical_pairs})"
            )
            continue
        planned.append(PlannedQuestionnaire(
            spec, docs_by_id[spec.doc_id], readers_by_id[spec.reader_j], readers_by_id[spec.reader_k], pairs, identical
        ))
    return DesignPlan(
        planned, skipped, study.identical_pairs, study.raters_per_questionnaire, study.attention_checks
    )


@dataclass(frozen=True)
class PairTiming:
    seconds: float  # median seconds per shown pair
    sets: int  # completed rating sets measured (0: assumed)
    source: str  # "this study", "all studies" or "assumed"


def median_seconds_per_pair(*, study: Study) -> PairTiming:
    """Median over completed rating sets of (completed_at - claimed_at) / pairs shown: from this study's sets when
    it has any, else from every study's, else ``DEFAULT_SECONDS_PER_PAIR``."""
    for source, qs in (
        ("this study", Assignment.objects.filter(questionnaire__study=study)),
        ("all studies", Assignment.objects.all()),
    ):
        rows = qs.filter(completed_at__isnull=False).order_by().values_list(
            "claimed_at", "completed_at", "presentation"
        )
        per_pair = sorted(
            (done - claimed).total_seconds() / len(shown) for claimed, done, shown in rows.iterator() if shown and done
        )
        if per_pair:
            return PairTiming(statistics.median(per_pair), len(per_pair), source)
    return PairTiming(DEFAULT_SECONDS_PER_PAIR, 0, "assumed")


@dataclass(frozen=True)
class DesignEstimate:
    seconds_per_pair: float
    timing: PairTiming
    participant_minutes: float  # answers_needed (ratings + attention pairs) * seconds_per_pair / 60
    minutes_per_set: float  # (mean shown pairs per questionnaire + attention checks) * seconds_per_pair / 60
    price_per_hour: Decimal | None
    cost: Decimal | None  # participant_minutes / 60 * price_per_hour, to the cent

    @property
    def participant_hours(self) -> float:
        return self.participant_minutes / 60


def design_estimate(*, plan: DesignPlan, timing: PairTiming, price: Decimal | None) -> DesignEstimate:
    """Participant time for a design: every shown pair rated by every rater of its questionnaire, and every
    attention pair answered, at the median measured time per pair; the cost is that time at ``price`` per hour
    (rounded half-up to 0.01)."""
    minutes = plan.answers_needed * timing.seconds / 60
    per_set = (
        (plan.shown_pairs / len(plan.questionnaires) + plan.attention_checks) * timing.seconds / 60
        if plan.questionnaires
        else 0.0
    )
    cost = None
    if price is not None:
        cost = (Decimal(repr(minutes)) / 60 * price).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return DesignEstimate(timing.seconds, timing, minutes, per_set, price, cost)
