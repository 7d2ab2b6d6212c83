"""Reads: what a participant sees, study progress, and the ratings table for export."""
from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal

from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from metaeval.core.io.corpus import same_text
from metaeval.core.io.exclusions import REVIEW_COLUMNS
from metaeval.core.judges.cases import JudgeCase
from metaeval.core.stats.raters import RaterQuality, rater_report
from survey import design, pairwise_design
from survey.models import (
    REFERENCE_SYSTEM,
    Assignment,
    Dataset,
    Document,
    Item,
    JudgeJudgment,
    JudgeRun,
    Judgment,
    Participant,
    PreferenceItem,
    Questionnaire,
    Rating,
    Reader,
    Study,
    Summary,
    System,
    TopicSentence,
)

# The ratings layout of docs/conventions.md: these five columns first, so exports feed the CLI; the rater's review
# last (REVIEW_COLUMNS: review, excluded, review_note; the readers of the CLI leave out the rows marked excluded).
EXPORT_COLUMNS = [
    "doc_id",
    "system",
    "uid1",
    "uid2",
    "rating",
    "rater",
    "study",
    "questionnaire",
    "shown_position",
    "swapped",
    "claimed_at",
    "completed_at",
    "rated_at",
    "automatic",
    *REVIEW_COLUMNS,
]


@dataclass(frozen=True)
class ShownPair:
    """One pair as a participant sees it: an opaque field key and two texts. Nothing else."""

    key: str
    number: int
    first: str
    second: str


def dataset_systems(*, dataset: Dataset) -> QuerySet[System]:
    """The systems with summaries in ``dataset`` (the reference ``user`` excluded), by name, each annotated with
    ``summary_count`` in that dataset."""
    return (
        System.objects.filter(summaries__document__dataset=dataset)
        .exclude(name=REFERENCE_SYSTEM)
        .annotate(summary_count=Count("summaries"))
        .order_by("name")
    )


def documents_with_completeness(documents: QuerySet[Document]) -> QuerySet[Document]:
    """``documents`` annotated with ``summary_count`` and ``summaries_expected``: every reader with a summary of the
    document needs their own ("user") one and one from each system of the dataset, as a run with "stop the run"
    for missing summaries requires (``metaeval.core.io.corpus.Document.readers_for``)."""
    systems_in_dataset = (
        Summary.objects.filter(document__dataset=OuterRef("dataset"))
        .order_by()
        .values("document__dataset")
        .annotate(n=Count("system", distinct=True))
        .values("n")
    )
    return documents.annotate(
        summary_count=Count("summaries", distinct=True),
        summary_readers=Count("summaries__reader", distinct=True),
        dataset_systems=Subquery(systems_in_dataset),
    ).annotate(summaries_expected=F("summary_readers") * F("dataset_systems"))


def assignment_pairs(assignment: Assignment) -> list[ShownPair]:
    """The assignment's pairs in its recorded order, sides as recorded, attention (known-answer) pairs among them;
    carries no ids or system names."""
    items = {
        i.pk: i
        for i in Item.objects.filter(questionnaire_id=assignment.questionnaire_id).select_related(
            "summary_j", "summary_k"
        )
    }
    pairs = []
    for number, entry in enumerate(assignment.presentation, start=1):
        if "attention" in entry:  # a known-answer pair, looking like any other; its texts stored with it
            pairs.append(ShownPair(key=entry["key"], number=number, first=entry["first"], second=entry["second"]))
            continue
        item = items[entry["item"]]
        a, b = item.summary_j.text, item.summary_k.text
        if entry.get("swap"):
            a, b = b, a
        pairs.append(ShownPair(key=entry["key"], number=number, first=a, second=b))
    return pairs


def scale_choices(study: Study) -> list[tuple[str, str]]:
    """The rating scale as (value, label) pairs, the value as the text a form sends ("1" ... "6")."""
    return [(str(n), label) for n, label in enumerate(study.scale_labels, start=1)]


@dataclass(frozen=True)
class StudyProgress:
    """Questionnaires by slot state (``complete + all_slots_taken + with_free_slot == questionnaires``) and sets.

    A slot is held by a live or completed assignment (:func:`holds_a_slot`); a questionnaire has
    ``raters_per_questionnaire`` slots.
    """

    questionnaires: int
    complete: int  # every slot completed
    all_slots_taken: int  # every slot held, some still being rated: nothing to hand out until one expires
    with_free_slot: int  # fewer holds than slots: a participant can be given it now
    free_slots: int  # slots free over all questionnaires (how many more sets can be handed out now)
    ratings_sets: int  # completed assignments
    ratings_sets_needed: int
    participants: int
    ratings_per_system: dict[str, int]
    automatic_ratings: int = 0  # identical texts recorded at the top of the scale (identical_pairs=auto)
    hidden_pairs: int = 0  # identical-text pairs of the design that participants are not shown (auto/omit)

    @property
    def percent(self) -> float:
        return 100.0 * self.ratings_sets / self.ratings_sets_needed if self.ratings_sets_needed else 0.0


def holds_a_slot(now) -> Q:
    """A questionnaire's condition on its assignments (``assignments__``) that hold a slot: unreleased, and either
    completed or still within their time. An expired unfinished hold is free even before it is released."""
    return Q(assignments__released_at__isnull=True) & (
        Q(assignments__completed_at__isnull=False) | Q(assignments__expires_at__gt=now)
    )


def study_progress(study: Study, now=None) -> StudyProgress:
    now = now or timezone.now()
    live = holds_a_slot(now)
    rows = Questionnaire.objects.filter(study=study).annotate(
        done=Count("assignments", filter=Q(assignments__completed_at__isnull=False)),
        held=Count("assignments", filter=live),
    )
    n = study.raters_per_questionnaire
    total = complete = all_taken = free_slots = 0
    done_sets = 0
    for q in rows.values("done", "held"):
        total += 1
        done_sets += q["done"]
        if q["done"] >= n:
            complete += 1
        elif q["held"] >= n:
            all_taken += 1
        else:
            free_slots += n - q["held"]
    automatic = Rating.objects.filter(assignment__questionnaire__study=study, automatic=True).count()
    hidden = (
        Item.objects.filter(questionnaire__study=study, identical=True).count()
        if study.identical_pairs != Study.IdenticalPairs.SHOW
        else 0
    )
    per_system: dict[str, int]
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:  # answers per topic
        per_system = dict(
            Judgment.objects.filter(assignment__questionnaire__study=study)
            .values_list("item__questionnaire__document__external_id").annotate(c=Count("id"))
            .order_by("item__questionnaire__document__external_id")
        )
    elif study.kind == Study.Kind.PREFERENCE:  # answers in which the system's text took part
        per_system = {}
        for side in ("item__system_a__name", "item__system_b__name"):
            for name, count in (Judgment.objects.filter(assignment__questionnaire__study=study)
                                .values_list(side).annotate(c=Count("id")).order_by()):
                per_system[name] = per_system.get(name, 0) + count
        per_system = dict(sorted(per_system.items()))
    else:
        per_system = dict(
            Rating.objects.filter(assignment__questionnaire__study=study)
            .values_list("item__system__name")
            .annotate(c=Count("id"))
            .order_by("item__system__name")
        )
    return StudyProgress(
        questionnaires=total,
        complete=complete,
        all_slots_taken=all_taken,
        with_free_slot=total - complete - all_taken,
        free_slots=free_slots,
        ratings_sets=done_sets,
        ratings_sets_needed=total * n,
        participants=study.participants.filter(assignments__completed_at__isnull=False).distinct().count(),
        ratings_per_system=per_system,
        automatic_ratings=automatic,
        hidden_pairs=hidden,
    )


def rater_id(participant_id: int) -> str:
    """A participant's rater id in the ratings export ("P12")."""
    return f"P{participant_id}"


_RATER_ID = re.compile(r"^[Pp]?(\d{1,18})$")  # a participant's id: a bigint (longer digits are no rater id)


#: the participant's review fields an export reads with each row (``values_list`` paths from an assignment)
_REVIEW_FIELDS = ("assignment__participant__review", "assignment__participant__excluded",
                  "assignment__participant__review_note")


def review_cells(review: str, excluded: bool, note: str) -> dict[str, object]:
    """The export's last columns (``REVIEW_COLUMNS``) for a participant: their review (pending, approved,
    rejected), ``excluded`` 1 when they are excluded from scoring (``Participant.excluded``: what a run leaves out,
    :func:`excluded_raters`), else 0, and the review's note."""
    return {"review": review, "excluded": int(excluded), "review_note": note}


def participant_of_rater(name: str) -> int | None:
    """The participant id behind a rater id written ``P12`` or ``12`` (the inverse of :func:`rater_id`); ``None``
    when ``name`` is not a rater id."""
    match = _RATER_ID.match(name)
    return int(match.group(1)) if match else None


def ratings_export_rows(
    *, study: Study | None = None, exclude_participants: Iterable[int] = ()
) -> Iterator[dict[str, object]]:
    """One row per rating of a completed assignment, in the export layout (``EXPORT_COLUMNS``).

    ``uid1``/``uid2`` are the questionnaire's reader pair (j, k) in design order, independent of which
    side each summary was shown on; ``system`` is ``user`` for the reference pair. The ratings of the
    participants ``exclude_participants`` (primary keys) are left out in the query. ``automatic`` is 1 for a
    rating recorded without being shown (identical texts under ``identical_pairs=auto``; its ``shown_position`` is
    empty), else 0. The last columns are the rater's review (:func:`review_cells`), read in the same query.
    """
    qs = Rating.objects.filter(assignment__completed_at__isnull=False)
    if study is not None:
        qs = qs.filter(assignment__questionnaire__study=study)
    excluded = list(exclude_participants)
    if excluded:
        qs = qs.exclude(assignment__participant_id__in=excluded)
    values = qs.order_by(
        "assignment__questionnaire__study_id",
        "assignment__questionnaire__position",
        "assignment__slot",
        "assignment_id",
        "item__position",
    ).values_list(
        "assignment__questionnaire__document__external_id", "item__system__name",
        "assignment__questionnaire__reader_j__external_id", "assignment__questionnaire__reader_k__external_id",
        "value", "assignment__participant_id", "assignment__questionnaire__study__slug",
        "assignment__questionnaire__position", "shown_position", "swapped", "assignment__claimed_at",
        "assignment__completed_at", "created_at", "automatic", *_REVIEW_FIELDS,
    )
    for (doc_id, system, uid1, uid2, value, participant, slug, position, shown, swapped, claimed, completed, rated,
         automatic, review, excluded_flag, note) in values.iterator(chunk_size=2000):
        yield {
            "doc_id": doc_id,
            "system": system,
            "uid1": uid1,
            "uid2": uid2,
            "rating": value,
            "rater": rater_id(participant),
            "study": slug,
            "questionnaire": position,
            "shown_position": shown,
            "swapped": int(swapped),
            "claimed_at": claimed.isoformat(),
            "completed_at": completed.isoformat() if completed else "",
            "rated_at": rated.isoformat(),
            "automatic": int(automatic),
            **review_cells(review, excluded_flag, note),
        }



# ---------------------------------------------------------------------------------------------- design plan

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


# ----------------------------------------------------------------------------------------------- participants

#: Quality flags on the participants page (docs/conventions.md, sec. 15): a participant is flagged when
FAST_SECONDS_PER_PAIR = 4.0  # their median time per shown pair is below this,
STRAIGHTLINED_SHARE = 0.5  # at least this share of their rating sets use one value throughout,
POSITION_BIAS_SHARE = 0.85  # preference studies: at least this share (or at most 1 - it) of first-shown choices,
POSITION_BIAS_MIN_ANSWERS = 9  # over at least this many answers,
LOW_AGREEMENT_SPEARMAN = 0.2  # their Spearman with the others' mean is below this (3 or more shared pairs),
#: or they failed an attention (known-answer) pair.


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


# ------------------------------------------------------------------------------------------- preference studies


@dataclass(frozen=True)
class PlannedPreference:
    """One preference questionnaire: a case (document, reader), its ``group`` among the case's questionnaires, and
    per item the two systems' summaries (system_a's first)."""

    document: Document
    reader: Reader
    group: int
    items: list[tuple[Summary, Summary]]


@dataclass(frozen=True)
class PlannedSentences:
    """One sentence preference questionnaire: a topic (its document), its ``group`` among the topic's
    questionnaires, and the sentence pairs (lower index first)."""

    document: Document
    group: int
    items: list[tuple[TopicSentence, TopicSentence]]


def sentence_seed(study_seed: int, topic_number: int) -> int:
    """The seed of topic ``topic_number`` (0-based, dataset order) in ``pairwise_design.sentence_pairs``."""
    return study_seed * 1_000_003 + topic_number


def sentence_plan(*, study: Study) -> tuple[list[PlannedSentences], list[str]]:
    """What *Generate questionnaires* creates for a sentence preference study: per topic (a dataset document with
    sentences, dataset order) ``pairwise_design.sentence_pairs(n, pairs_per_topic, seed)`` with
    :func:`sentence_seed`, cut in drawn order into questionnaires of ``pairs_per_questionnaire``; also the topics
    left out (in words). ValueError when no topic has two sentences."""
    sentences: dict[int, list[TopicSentence]] = {}
    for sentence in TopicSentence.objects.filter(document__dataset=study.dataset).order_by("document_id",
                                                                                          "position"):
        sentences.setdefault(sentence.document_id, []).append(sentence)
    planned: list[PlannedSentences] = []
    skipped: list[str] = []
    size = study.pairs_per_questionnaire
    for number, document in enumerate(study.dataset.documents.filter(pk__in=list(sentences)).order_by("id")):
        topic = sentences[document.pk]
        if len(topic) < 2:
            skipped.append(f"topic {document.external_id} has fewer than two sentences")
            continue
        pairs = pairwise_design.sentence_pairs(len(topic), pairs_per_topic=study.pairs_per_topic,
                                               seed=sentence_seed(study.seed, number))
        items = [(topic[i], topic[j]) for i, j in pairs]
        planned.extend(PlannedSentences(document, group, items[start:start + size])
                       for group, start in enumerate(range(0, len(items), size)))
    if not planned:
        raise ValueError(f"dataset {study.dataset.name!r} has no topic with two sentences: import topics first "
                         "(manage.py import_topics FILE --dataset NAME)")
    return planned, skipped


def preference_plan(*, study: Study) -> tuple[list[PlannedPreference], list[str]]:
    """What *Generate questionnaires* creates for a preference study (``survey.pairwise_design.preference_design``):
    the cases are the (document, reader) pairs with a summary of every study system, in dataset order, of which the
    design deals about ``pairs_per_questionnaire`` pairs to each case it uses; a case's items, in the order dealt,
    are cut into questionnaires of ``pairs_per_questionnaire``. Also the cases left out
    (in words). ValueError for fewer than two systems or no usable case."""
    systems = list(study.systems.exclude(name=REFERENCE_SYSTEM).order_by("name").values_list("name", flat=True))
    if len(systems) < 2:
        raise ValueError(f"study {study.slug!r} needs at least two systems to compare")
    summaries: dict[tuple[str, str, str], Summary] = {}
    for row in Summary.objects.filter(document__dataset=study.dataset, system__name__in=systems).select_related(
        "document", "reader", "system"
    ):
        summaries[(row.document.external_id, row.reader.external_id, row.system.name)] = row
    documents = {doc.external_id: doc for doc in study.dataset.documents.order_by("id")}
    readers = {reader.external_id: reader for reader in study.dataset.readers.order_by("id")}
    cases: list[tuple[str, str]] = []
    partial = 0
    for doc_id in documents:
        for reader_id in readers:
            present = sum((doc_id, reader_id, name) in summaries for name in systems)
            if present == len(systems):
                cases.append((doc_id, reader_id))
            elif present:
                partial += 1
    skipped = [f"{partial} (document, reader) cases lack a summary of some study system and were left out"
               ] if partial else []
    specs = pairwise_design.preference_design(cases, systems, cases_per_pair=study.cases_per_pair,
                                              pairs_per_case=study.pairs_per_questionnaire, seed=study.seed)
    by_case: dict[tuple[str, str], list[tuple[Summary, Summary]]] = {}
    for spec in specs:
        case = (spec.doc_id, spec.reader_id)
        by_case.setdefault(case, []).append((summaries[(*case, spec.model_a)], summaries[(*case, spec.model_b)]))
    size = study.pairs_per_questionnaire
    planned = [
        PlannedPreference(documents[doc_id], readers[reader_id], group, items[start:start + size])
        for (doc_id, reader_id), items in by_case.items()
        for group, start in enumerate(range(0, len(items), size))
    ]
    return planned, skipped


def _own_texts(reader_ids: Iterable[int]) -> dict[int, dict[str, str]]:
    """Per reader id: their own texts (``user`` summaries) by document id."""
    own: dict[int, dict[str, str]] = {}
    for reader_id, doc_id, text in (
        Summary.objects.filter(reader_id__in=list(reader_ids), system__name=REFERENCE_SYSTEM)
        .order_by("document_id").values_list("reader_id", "document__external_id", "text")
    ):
        own.setdefault(reader_id, {})[doc_id] = text
    return own


def _examples(study: Study, reader: Reader, document: Document, own: dict[str, str],
              documents: list[str]) -> list[str]:
    """The reader's example texts for a case (``pairwise_design.reader_examples``: their own headlines on other
    documents), as participants and judges see them."""
    examples = pairwise_design.reader_examples(
        own_texts=own, history=[str(doc) for doc in reader.history], documents=documents,
        exclude=document.external_id, k=study.examples_shown,
    )
    return [text for _doc, text in examples]


def _document_ids(study: Study) -> list[str]:
    return list(study.dataset.documents.order_by("id").values_list("external_id", flat=True))


def preference_context(assignment: Assignment) -> dict[str, object]:
    """What an A/B page shows besides the pairs: the article and the reader's example texts (nothing for a
    sentence preference study, whose participants compare the two sentences alone)."""
    questionnaire = assignment.questionnaire
    reader = questionnaire.reader_j
    if reader is None:
        return {"article": None, "examples": []}
    own = _own_texts([reader.pk]).get(reader.pk, {})
    examples = _examples(questionnaire.study, reader, questionnaire.document, own, _document_ids(questionnaire.study))
    return {"article": questionnaire.document, "examples": examples}


def study_judge_cases(*, study: Study) -> list[tuple[int, JudgeCase]]:
    """A preference study's items as LLM-judge cases, in questionnaire and position order, with the item's id:
    ``case_id`` = ``doc_id/reader_id`` (as in the judgment export), ``model_a``/``model_b`` the item's systems and
    their texts, ``context`` the article's body, ``examples`` the reader's example texts participants see."""
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


def assignment_choices(assignment: Assignment) -> list[ShownPair]:
    """The assignment's preference pairs in its recorded order and sides; carries no ids or system names."""
    items = {
        item.pk: item
        for item in PreferenceItem.objects.filter(questionnaire_id=assignment.questionnaire_id).select_related(
            "summary_a", "summary_b", "sentence_a", "sentence_b"
        )
    }
    shown = []
    for number, entry in enumerate(assignment.presentation, start=1):
        if "gold" in entry:  # a known-answer pair, looking like any other; its texts stored with it
            shown.append(ShownPair(key=entry["key"], number=number, first=entry["first"], second=entry["second"]))
            continue
        item = items[entry["pitem"]]
        first, second = item.texts
        if entry.get("swap"):
            first, second = second, first
        shown.append(ShownPair(key=entry["key"], number=number, first=first, second=second))
    return shown


#: the judgment file's columns (docs/conventions.md sec. 17; FastChat's pairwise battles as a table), then the
#: participant's review (``REVIEW_COLUMNS``; empty for an LLM judge's row)
JUDGMENT_COLUMNS = ("case_id", "criterion", "model_a", "model_b", "winner", "judge", "judge_kind", "run",
                    "shown_first", "doc_id", "reader_id", *REVIEW_COLUMNS)
#: the review cells of a judge run's row
_NO_REVIEW: dict[str, object] = dict.fromkeys(REVIEW_COLUMNS, "")


#: what a judgment export holds: ``human`` (participants), ``llm`` (judge runs) or ``all`` (both, humans first)
JUDGMENT_SOURCES = ("all", "human", "llm")


def judgment_export_rows(*, study: Study, exclude_excluded: bool = False, source: str = "all"
                         ) -> Iterator[dict[str, object]]:
    """A preference study's judgments as judgment-file rows (``JUDGMENT_COLUMNS``).

    Participants' (``source`` ``human`` or ``all``) in submission order (assignment, then position on the page,
    then the study's criterion order): ``case_id`` = ``doc_id/reader_id``, ``judge`` the rater id (``P12``),
    ``judge_kind`` ``human``, ``run`` empty, then their review (:func:`review_cells`); with ``exclude_excluded``,
    the participants excluded on the participants page are left out. Then the judge runs' (``llm`` or ``all``),
    oldest run first, each in item, criterion and repeat order: ``judge`` the run's name, ``judge_kind`` ``llm``,
    ``run`` the repeat, the review cells empty; every stored judgment of a run counts, ``invalid`` ones and those of
    an unfinished run included.

    A fixed number of queries whatever the size (the items' columns once, then each kind's judgments read as
    plain values with ``iterator``), so an export streams."""
    if source not in JUDGMENT_SOURCES:
        raise ValueError(f"source must be one of {', '.join(JUDGMENT_SOURCES)}, not {source!r}")
    cells = _item_cells(study)
    if source in ("all", "human"):
        yield from _human_judgment_rows(study, exclude_excluded, cells)
    if source in ("all", "llm"):
        yield from _judge_run_rows(study, cells)


#: per preference item: case_id, model_a, model_b, doc_id, reader_id
_ItemCells = tuple[str, str, str, str, str]


def _item_cells(study: Study) -> dict[int, _ItemCells]:
    """The judgment-file columns of each of the study's preference items, by item id (one query)."""
    items = PreferenceItem.objects.filter(questionnaire__study=study).values_list(
        "pk", "questionnaire__document__external_id", "questionnaire__reader_j__external_id", "system_a__name",
        "system_b__name")
    return {pk: (f"{doc_id}/{reader_id}", model_a, model_b, doc_id, reader_id)
            for pk, doc_id, reader_id, model_a, model_b in items}


def _judgment_row(cells: _ItemCells, *, criterion: str, winner: str, judge: str, judge_kind: str, run: int | str,
                  shown_first: str, review: dict[str, object]) -> dict[str, object]:
    """One judgment-file row (``JUDGMENT_COLUMNS``) of a preference item (its :func:`_item_cells`)."""
    case_id, model_a, model_b, doc_id, reader_id = cells
    return {"case_id": case_id, "criterion": criterion, "model_a": model_a, "model_b": model_b, "winner": winner,
            "judge": judge, "judge_kind": judge_kind, "run": run, "shown_first": shown_first, "doc_id": doc_id,
            "reader_id": reader_id, **review}


def _judge_run_rows(study: Study, cells: dict[int, _ItemCells]) -> Iterator[dict[str, object]]:
    order = {criterion["name"]: n for n, criterion in enumerate(study.criteria)}
    names = dict(JudgeRun.objects.filter(study=study).values_list("pk", "name"))
    rows = (
        JudgeJudgment.objects.filter(judge_run__study=study)
        .order_by("judge_run__created_at", "judge_run_id", "item__questionnaire__position", "item__questionnaire_id",
                  "item__position", "criterion", "run")
        .values_list("judge_run_id", "item_id", "criterion", "run", "winner", "shown_first")
    )
    batch: list[tuple[int, int, str, int, str, str]] = []

    def flush() -> Iterator[dict[str, object]]:
        for run_id, item_id, criterion, number, winner, shown_first in sorted(
                batch, key=lambda j: (order.get(j[2], len(order)), j[2], j[3])):
            yield _judgment_row(cells[item_id], criterion=criterion, winner=winner, judge=names[run_id],
                                judge_kind="llm", run=number, shown_first=shown_first, review=_NO_REVIEW)

    current: tuple[int, int] | None = None
    for judgment in rows.iterator(chunk_size=2000):
        key = (judgment[0], judgment[1])
        if key != current and batch:
            yield from flush()
            batch = []
        current = key
        batch.append(judgment)
    yield from flush()


def _human_judgment_rows(study: Study, exclude_excluded: bool, cells: dict[int, _ItemCells]
                         ) -> Iterator[dict[str, object]]:
    order = {criterion["name"]: n for n, criterion in enumerate(study.criteria)}
    rows = Judgment.objects.filter(assignment__questionnaire__study=study, assignment__completed_at__isnull=False)
    if exclude_excluded:
        rows = rows.exclude(assignment__participant__excluded=True)
    values = rows.order_by("assignment__completed_at", "assignment_id", "shown_position", "id").values_list(
        "assignment_id", "assignment__participant_id", "item_id", "criterion", "winner", "shown_first",
        "shown_position", *_REVIEW_FIELDS)
    batch: list[tuple[int, int, int, str, str, str, int, str, bool, str]] = []
    current: int | None = None

    def flush() -> Iterator[dict[str, object]]:
        for _assignment, participant, item_id, criterion, winner, shown_first, _position, review, excluded, note in (
                sorted(batch, key=lambda j: (j[6], order.get(j[3], len(order))))):
            yield _judgment_row(cells[item_id], criterion=criterion, winner=winner, judge=rater_id(participant),
                                judge_kind="human", run="", shown_first=shown_first,
                                review=review_cells(review, excluded, note))

    for judgment in values.iterator(chunk_size=2000):
        if judgment[0] != current and batch:
            yield from flush()
            batch = []
        current = judgment[0]
        batch.append(judgment)
    yield from flush()


#: a sentence preference study's judgment file (docs/conventions.md sec. 18): the columns ``python -m metaeval zopf``
#: reads (``sentence_a``/``sentence_b`` 0-based indexes into the topic's sentences, ``winner`` ``a`` or ``b``), then
#: the rater, the sentence shown first and the criterion, then the rater's review (``REVIEW_COLUMNS``)
SENTENCE_JUDGMENT_COLUMNS = ("topic", "sentence_a", "sentence_b", "winner", "judge", "shown_first", "criterion",
                             *REVIEW_COLUMNS)


def sentence_judgment_rows(*, study: Study, exclude_excluded: bool = False) -> Iterator[dict[str, object]]:
    """A sentence preference study's judgments as Zopf judgment-file rows (``SENTENCE_JUDGMENT_COLUMNS``), in
    submission order (assignment, then position on the page); one query, read as plain values."""
    rows = Judgment.objects.filter(assignment__questionnaire__study=study, assignment__completed_at__isnull=False)
    if exclude_excluded:
        rows = rows.exclude(assignment__participant__excluded=True)
    values = rows.order_by("assignment__completed_at", "assignment_id", "shown_position", "id").values_list(
        "item__questionnaire__document__external_id", "item__sentence_a__position", "item__sentence_b__position",
        "winner", "assignment__participant_id", "shown_first", "criterion", *_REVIEW_FIELDS)
    side = {"model_a": "a", "model_b": "b"}
    for topic, sentence_a, sentence_b, winner, participant, shown_first, criterion, *review in values.iterator(
            chunk_size=2000):
        yield {"topic": topic, "sentence_a": sentence_a, "sentence_b": sentence_b, "winner": side.get(winner, winner),
               "judge": rater_id(participant), "shown_first": side[shown_first], "criterion": criterion,
               **review_cells(*review)}


def study_judgment_file(*, study: Study, exclude_excluded: bool = False, source: str = "all"
                        ) -> tuple[Iterator[dict[str, object]], tuple[str, ...]]:
    """The rows and columns of a pairwise study's judgment file: a preference study's (sec. 17,
    :func:`judgment_export_rows`) or a sentence preference study's (sec. 18, :func:`sentence_judgment_rows`; it
    has no judge runs, so ``source`` ``llm`` gives no row)."""
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:
        if source not in JUDGMENT_SOURCES:
            raise ValueError(f"source must be one of {', '.join(JUDGMENT_SOURCES)}, not {source!r}")
        rows = sentence_judgment_rows(study=study, exclude_excluded=exclude_excluded) if source != "llm" else iter(())
        return rows, SENTENCE_JUDGMENT_COLUMNS
    return judgment_export_rows(study=study, exclude_excluded=exclude_excluded, source=source), JUDGMENT_COLUMNS


def below_gold_threshold(*, study: Study) -> list[int]:
    """Participant ids of a preference study whose share of gold pairs answered right is below its threshold."""
    if study.kind != Study.Kind.PREFERENCE or study.gold_threshold is None:
        return []
    return [row.participant.pk for row in study_participants(study=study) if row.below_gold]


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
