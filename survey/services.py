"""Writes: creating studies and questionnaires, registering participants, claiming and submitting.

Concurrency: a claim locks the questionnaire row (``select_for_update``) inside a transaction, releases
that questionnaire's expired slots and takes a free slot; the conditional unique constraint
``(questionnaire, slot) where released_at is null`` guarantees in the database that no questionnaire ever
holds more than ``raters_per_questionnaire`` live or completed assignments, whatever the isolation level.
"""
from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable, Mapping
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import Count, Exists, OuterRef
from django.utils import timezone

from metaeval.core.io.corpus import same_text
from survey import design, selectors
from survey.models import (
    RATING_MAX,
    RATING_MIN,
    REFERENCE_SYSTEM,
    Assignment,
    Item,
    Judgment,
    Participant,
    PreferenceItem,
    Questionnaire,
    Rating,
    Study,
    Summary,
)

log = logging.getLogger(__name__)


class SurveyError(Exception):
    """A participant- or researcher-facing problem with a clear message."""


class NoQuestionnaireAvailable(SurveyError):
    pass


class AssignmentExpired(SurveyError):
    pass


class SubmissionInvalid(SurveyError):
    def __init__(self, message: str, field_errors: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.field_errors = dict(field_errors or {})


def _token(nbytes: int = 18) -> str:
    return secrets.token_urlsafe(nbytes)


def _key_maker() -> Callable[[], str]:
    """A source of random field keys for one assignment's page, none repeated (they name the form fields, so they
    carry no ids)."""
    keys: set[str] = set()

    def fresh_key() -> str:
        key = _token(6)
        while key in keys:
            key = _token(6)
        keys.add(key)
        return key

    return fresh_key


# --------------------------------------------------------------------------------------------- design


@transaction.atomic
def questionnaires_generate(*, study: Study) -> design.DesignReport:
    """Materialise the study's design (``selectors.study_design_plan``) as Questionnaire and Item rows, each item
    flagged ``identical`` when its two texts are the same.

    Refuses to regenerate once any participant has claimed a questionnaire of the study, and unless the study is a
    draft (participants arriving meanwhile would find questionnaires vanishing).
    """
    if Assignment.objects.filter(questionnaire__study=study).exists():
        raise SurveyError(f"study {study.slug!r} already has assignments; its questionnaires cannot be regenerated")
    if study.status != Study.Status.DRAFT:
        raise SurveyError(
            f"study {study.slug!r} is {study.get_status_display().lower()}: questionnaires are generated while it is a "
            "draft (close it and reopen it as a draft first)"
        )
    Questionnaire.objects.filter(study=study).delete()
    if study.kind == Study.Kind.PREFERENCE:
        return _preference_questionnaires(study)
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:
        return _sentence_questionnaires(study)
    try:
        plan = selectors.study_design_plan(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    for position, planned in enumerate(plan.questionnaires):
        q = Questionnaire.objects.create(
            study=study,
            position=position,
            document=planned.document,
            reader_j=planned.reader_j,
            reader_k=planned.reader_k,
            group=planned.spec.group,
        )
        Item.objects.bulk_create(
            Item(questionnaire=q, position=i, system=a.system, summary_j=a, summary_k=b, identical=same)
            for i, ((a, b), same) in enumerate(zip(planned.pairs, planned.identical, strict=True))
        )
    return design.DesignReport([planned.spec for planned in plan.questionnaires], plan.skipped)


def _preference_questionnaires(study: Study) -> design.DesignReport:
    """The preference study's questionnaires (``selectors.preference_plan``): one per case and group of pairs."""
    try:
        planned, skipped = selectors.preference_plan(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    specs = []
    for position, plan in enumerate(planned):
        q = Questionnaire.objects.create(
            study=study, position=position, document=plan.document, reader_j=plan.reader, reader_k=plan.reader,
            group=plan.group,
        )
        PreferenceItem.objects.bulk_create(
            PreferenceItem(questionnaire=q, position=i, system_a=a.system, system_b=b.system, summary_a=a,
                           summary_b=b)
            for i, (a, b) in enumerate(plan.items)
        )
        systems = tuple(dict.fromkeys(name for a, b in plan.items for name in (a.system.name, b.system.name)))
        specs.append(design.QuestionnaireSpec(plan.document.external_id, plan.reader.external_id,
                                              plan.reader.external_id, plan.group, systems))
    return design.DesignReport(specs, skipped)


def _sentence_questionnaires(study: Study) -> design.DesignReport:
    """The sentence preference study's questionnaires (``selectors.sentence_plan``): one per topic and group."""
    try:
        planned, skipped = selectors.sentence_plan(study=study)
    except ValueError as exc:
        raise SurveyError(str(exc)) from None
    specs = []
    for position, plan in enumerate(planned):
        q = Questionnaire.objects.create(study=study, position=position, document=plan.document, group=plan.group)
        PreferenceItem.objects.bulk_create(
            PreferenceItem(questionnaire=q, position=i, sentence_a=a, sentence_b=b)
            for i, (a, b) in enumerate(plan.items)
        )
        specs.append(design.QuestionnaireSpec(plan.document.external_id, "", "", plan.group, ()))
    return design.DesignReport(specs, skipped)


# --------------------------------------------------------------------------------------- participants


def participant_register(
    *, study: Study, external_id: str = "", external_source: str = "", now=None
) -> Participant:
    """A consenting participant; ``token`` is the opaque identity kept in the participant's session."""
    if study.status != Study.Status.OPEN:
        raise SurveyError("This study is not accepting participants at the moment.")
    return Participant.objects.create(
        study=study,
        token=_token(24),
        external_id=external_id[:200],
        external_source=external_source[:50],
        consent_at=now or timezone.now(),
    )


def participant_update_demographics(*, participant: Participant, name: str, gender: str, occupation: str) -> None:
    participant.name = name.strip()[:200]
    participant.gender = gender
    participant.occupation = occupation
    participant.save(update_fields=["name", "gender", "occupation"])


# ---------------------------------------------------------------------------------------- assignments


def assignments_release_expired(*, study: Study | None = None, now=None) -> int:
    """Release the slots of unfinished assignments whose time ran out; returns how many were released."""
    now = now or timezone.now()
    qs = Assignment.objects.filter(completed_at__isnull=True, released_at__isnull=True, expires_at__lte=now)
    if study is not None:
        qs = qs.filter(questionnaire__study=study)
    return qs.update(released_at=now)


def _free_slot(questionnaire: Questionnaire, capacity: int, now) -> int | None:
    """The lowest slot of ``questionnaire`` that no live assignment holds (``selectors.holds_a_slot``, here on the
    fetched rows; call with the questionnaire locked).

    Holds whose time ran out are released here, so their slots can be given again (the slot is unique among
    unreleased assignments)."""
    held: set[int] = set()
    expired: list[int] = []
    rows = (
        Assignment.objects.filter(questionnaire=questionnaire, released_at__isnull=True)
        .order_by()
        .values_list("pk", "slot", "completed_at", "expires_at")
    )
    for pk, slot, completed_at, expires_at in rows:
        if completed_at is None and expires_at <= now:
            expired.append(pk)
        else:
            held.add(slot)
    free = next((s for s in range(capacity) if s not in held), None)
    if free is not None and expired:
        Assignment.objects.filter(pk__in=expired).update(released_at=now)
    return free


ATTENTION_PASS = {"same": lambda value: value >= RATING_MAX - 1, "different": lambda value: value <= RATING_MIN + 1}


def _attention_pairs(study: Study, questionnaire: Questionnaire, seed: int) -> list[dict[str, object]]:
    """``study.attention_checks`` known-answer pairs for one assignment (seeded by it), each starting from a text of
    the questionnaire's own document, so that nothing sets them apart from the real pairs: alternately that text
    with itself ("same": passed with 5 or 6) and that text with a text of another document of the dataset
    ("different": passed with 1 or 2). Studies that hide identical pairs get only "different" ones, so no page ever
    shows two identical texts. The texts are stored with the assignment (``first``, ``second``)."""
    wanted = study.attention_checks
    if not wanted:
        return []
    own = list(
        Summary.objects.filter(document_id=questionnaire.document_id).order_by("pk").values_list("text", flat=True)
    )
    others = Summary.objects.filter(document__dataset_id=study.dataset_id).exclude(
        document_id=questionnaire.document_id
    )
    count = others.count()
    if not own or not count:
        return []
    rng = random.Random(seed)
    kinds = ["same", "different"] if study.identical_pairs == Study.IdenticalPairs.SHOW else ["different"]
    checks: list[dict[str, object]] = []
    for n in range(wanted):
        kind = kinds[n % len(kinds)]
        first = rng.choice(own)
        second = first if kind == "same" else others.order_by("pk").values_list("text", flat=True)[rng.randrange(count)]
        if rng.random() < 0.5:
            first, second = second, first
        checks.append({"attention": kind, "first": first, "second": second})
    return checks


def _new_assignment(
    *, study: Study, questionnaire: Questionnaire, participant: Participant, slot: int, now,
    presentation_seed: int | None = None,
) -> Assignment:
    seed = secrets.randbits(62) if presentation_seed is None else presentation_seed
    if study.is_pairwise:
        return _assignment_row(study, questionnaire, participant, slot, now, seed,
                               _preference_presentation(study, questionnaire, seed))
    items = questionnaire.items.order_by("position")
    if study.identical_pairs != Study.IdenticalPairs.SHOW:
        items = items.filter(identical=False)
    item_ids = list(items.values_list("id", flat=True))
    order = design.presentation_order(item_ids, seed, shuffle=not study.reference_first)
    fresh_key = _key_maker()
    presentation: list[dict[str, object]] = [{"key": fresh_key(), "item": p.item, "swap": p.swap} for p in order]
    first = 1 if study.reference_first and presentation else 0  # the readers' own pair stays first
    for check in _attention_pairs(study, questionnaire, seed):
        presentation.insert(random.Random(seed + len(presentation)).randrange(first, len(presentation) + 1),
                            {"key": fresh_key(), **check})
    return _assignment_row(study, questionnaire, participant, slot, now, seed, presentation)


#: the criterion a gold pair has a known answer on (the reader's own headline is "more like the reader's")
GOLD_CRITERION = "personalization"


def gold_pair_count(study: Study, pairs: int) -> int:
    """Gold pairs in a set of ``pairs`` real pairs: round(gold_rate x pairs), at least one when the rate is above 0;
    none when the study does not ask about personalization."""
    if study.gold_rate <= 0 or GOLD_CRITERION not in {c["name"] for c in study.criteria}:
        return 0
    return max(1, round(study.gold_rate * pairs))


def _gold_pairs(study: Study, questionnaire: Questionnaire, count: int, rng: random.Random) -> list[dict[str, object]]:
    """``count`` known-answer pairs for one set: the case reader's own headline (``user`` summary) of the document
    against another reader's own headline of it, sides drawn at random; the right answer is the reader's own on
    the personalization criterion. The texts are stored with the assignment. None when the document has no other
    reader's headline or the reader has none (or the questionnaire, a topic's, has no reader)."""
    if questionnaire.reader_j_id is None:
        return []
    own = Summary.objects.filter(document_id=questionnaire.document_id, reader_id=questionnaire.reader_j_id,
                                 system__name=REFERENCE_SYSTEM).values_list("text", flat=True).first()
    others = list(
        Summary.objects.filter(document_id=questionnaire.document_id, system__name=REFERENCE_SYSTEM)
        .exclude(reader_id=questionnaire.reader_j_id).order_by("pk").values_list("text", flat=True)
    )
    others = [text for text in others if own is not None and not same_text(text, own)]
    if own is None or not others:
        return []
    pairs: list[dict[str, object]] = []
    for _ in range(count):
        other = rng.choice(others)
        own_first = rng.random() < 0.5
        pairs.append({"gold": GOLD_CRITERION, "first": own if own_first else other,
                      "second": other if own_first else own, "answer": "a" if own_first else "b"})
    return pairs


def _preference_presentation(study: Study, questionnaire: Questionnaire, seed: int) -> list[dict[str, object]]:
    """The pairs in a seeded order, each with a fresh key and ``swap`` (system_b's text shown first), and the
    study's gold pairs (:func:`_gold_pairs`) at seeded positions among them."""
    item_ids = list(questionnaire.preference_items.order_by("position").values_list("id", flat=True))
    fresh_key = _key_maker()
    presentation: list[dict[str, object]] = [
        {"key": fresh_key(), "pitem": shown.item, "swap": shown.swap}
        for shown in design.presentation_order(item_ids, seed)
    ]
    rng = random.Random(f"{seed}|gold")
    for gold in _gold_pairs(study, questionnaire, gold_pair_count(study, len(item_ids)), rng):
        presentation.insert(rng.randrange(len(presentation) + 1), {"key": fresh_key(), **gold})
    return presentation


def _assignment_row(
    study: Study, questionnaire: Questionnaire, participant: Participant, slot: int, now, seed: int,
    presentation: list[dict[str, object]],
) -> Assignment:
    return Assignment.objects.create(
        questionnaire=questionnaire,
        participant=participant,
        public_id=_token(18),
        slot=slot,
        presentation_seed=seed,
        presentation=presentation,
        claimed_at=now,
        expires_at=now + timedelta(minutes=study.assignment_timeout_minutes),
    )


def _live_assignment(participant: Participant, now) -> Assignment | None:
    """The participant's unfinished, unreleased assignment whose time has not run out, if any.

    The database holds at most one unfinished, unreleased assignment per participant; one whose time ran out is
    released here, so that the participant can claim again."""
    current = (
        Assignment.objects.filter(participant=participant, completed_at__isnull=True, released_at__isnull=True)
        .order_by()
        .first()
    )
    if current is None or current.expires_at > now:
        return current
    Assignment.objects.filter(pk=current.pk, completed_at__isnull=True).update(released_at=now)
    return None


def assignment_claim(*, participant: Participant, now=None, presentation_seed: int | None = None) -> Assignment:
    """Give the participant an open questionnaire they have never had, or their unfinished live one.

    Questionnaires with the fewest held slots come first (then design order), so ratings spread evenly.
    ``presentation_seed`` fixes the shuffled order and sides of a new assignment (the demo's simulated
    participants, so that their ratings reproduce); by default it is random.
    """
    study = participant.study
    if study.status != Study.Status.OPEN:
        raise NoQuestionnaireAvailable("This study is not accepting responses at the moment.")
    now = now or timezone.now()
    capacity = study.raters_per_questionnaire
    with transaction.atomic():
        current = _live_assignment(participant, now)
        if current is not None:
            return current
        # expired holds do not count; they are released when their questionnaire is claimed (_free_slot)
        live = selectors.holds_a_slot(now)
        questionnaires = Questionnaire.objects.filter(study=study)
        if study.kind == Study.Kind.SIMILARITY and study.identical_pairs != Study.IdenticalPairs.SHOW:
            # nothing to show: never handed out
            questionnaires = questionnaires.filter(Exists(Item.objects.filter(questionnaire=OuterRef("pk"),
                                                                              identical=False)))
        candidates = list(
            questionnaires
            .exclude(assignments__participant=participant)
            .annotate(held=Count("assignments", filter=live))
            .filter(held__lt=capacity)
            .order_by("held", "position")
            .values_list("pk", flat=True)
        )
    for pk in candidates:
        try:
            with transaction.atomic():
                questionnaire = Questionnaire.objects.select_for_update().get(pk=pk)
                slot = _free_slot(questionnaire, capacity, now)
                if slot is None:
                    continue
                assignment = _new_assignment(
                    study=study, questionnaire=questionnaire, participant=participant, slot=slot, now=now,
                    presentation_seed=presentation_seed,
                )
                log.info("questionnaire claimed", extra={
                    "event": "assignment.claimed", "study": study.slug, "questionnaire": questionnaire.position,
                    "slot": slot, "participant": participant.pk,
                })
                return assignment
        except IntegrityError:
            # A concurrent claim of the same participant (a double click) won: the database holds one live
            # assignment per participant, so return that one. Otherwise another participant took the slot between
            # our read and write (possible only where row locks are not available): try the next questionnaire.
            current = _live_assignment(participant, now)
            if current is not None:
                return current
            continue
    raise NoQuestionnaireAvailable("Thank you! There are no more questionnaires for you in this study right now.")


def _validate_values(assignment: Assignment, raw: Mapping[str, object]) -> dict[str, int]:
    values: dict[str, int] = {}
    errors: dict[str, str] = {}
    for number, entry in enumerate(assignment.presentation, start=1):
        key = entry["key"]
        value = raw.get(key)
        if isinstance(value, (list, tuple)):
            errors[key] = f"Pair {number}: answered {len(value)} times in one submission; please choose one rating."
            continue
        if value in (None, ""):
            errors[key] = f"Pair {number}: please choose a rating from {RATING_MIN} to {RATING_MAX}."
            continue
        try:
            parsed = int(str(value).strip())
            if str(parsed) != str(value).strip():
                raise ValueError
        except ValueError:
            errors[key] = f"Pair {number}: {value!r} is not a whole number from {RATING_MIN} to {RATING_MAX}."
            continue
        if not RATING_MIN <= parsed <= RATING_MAX:
            errors[key] = f"Pair {number}: {parsed} is outside the scale {RATING_MIN}-{RATING_MAX}."
            continue
        values[key] = parsed
    unknown = sorted(set(raw) - {e["key"] for e in assignment.presentation})
    if unknown:
        errors["__all__"] = f"Unknown fields in the submission: {', '.join(unknown)}."
    if errors:
        missing = sum(1 for k in errors if k != "__all__")
        message = (
            f"{missing} of {len(assignment.presentation)} pairs need a valid rating; nothing was saved."
            if missing
            else errors["__all__"]
        )
        raise SubmissionInvalid(message, errors)
    return values


def _automatic_ratings(assignment: Assignment) -> int:
    """With ``identical_pairs=auto``, the questionnaire's identical pairs that were not shown get the top of the
    scale (RATING_MAX), flagged ``automatic``, with no shown position; returns how many were stored. ``omit`` and
    ``show`` store none (omitted pairs stay missing; shown ones were rated)."""
    if assignment.questionnaire.study.identical_pairs != Study.IdenticalPairs.AUTO:
        return 0
    shown = {entry["item"] for entry in assignment.presentation if "item" in entry}
    hidden = Item.objects.filter(questionnaire_id=assignment.questionnaire_id, identical=True).exclude(pk__in=shown)
    created = Rating.objects.bulk_create(
        Rating(assignment=assignment, item_id=pk, value=RATING_MAX, shown_position=None, swapped=False, automatic=True)
        for pk in hidden.values_list("pk", flat=True)
    )
    return len(created)


def _locked_assignment(public_id: str, participant: Participant) -> Assignment:
    """The participant's assignment, locked for the submission's transaction."""
    try:
        return (
            Assignment.objects.select_for_update()
            .select_related("questionnaire__study")
            .get(public_id=public_id, participant=participant)
        )
    except Assignment.DoesNotExist:
        raise SurveyError("This questionnaire link is not valid for you.") from None


def _take_back_if_expired(assignment: Assignment, now) -> None:
    """A late submission keeps its slot only if nobody took it meanwhile (``AssignmentExpired`` otherwise)."""
    if assignment.released_at is None and assignment.expires_at > now:
        return
    # Lock the questionnaire, then see whether our slot is still free.
    Questionnaire.objects.select_for_update().get(pk=assignment.questionnaire_id)
    taken = Assignment.objects.filter(
        questionnaire_id=assignment.questionnaire_id, slot=assignment.slot, released_at__isnull=True
    ).exclude(pk=assignment.pk)
    if taken.exists():
        raise AssignmentExpired(
            "The time for this questionnaire ran out and it was given to someone else. "
            "Nothing was saved; you can continue with another questionnaire."
        )
    assignment.released_at = None


def ratings_submit(*, assignment_public_id: str, participant: Participant, values: Mapping[str, object], now=None):
    """Store one complete set of ratings for an assignment, all or nothing.

    Idempotent: a repeated submission of a completed assignment stores nothing and returns the
    assignment unchanged. A late submission after expiry is accepted only if its slot is still free
    (then the slot is taken back); otherwise ``AssignmentExpired``.
    """
    now = now or timezone.now()
    with transaction.atomic():
        assignment = _locked_assignment(assignment_public_id, participant)
        if assignment.completed_at is not None:
            return assignment
        cleaned = _validate_values(assignment, values)
        _take_back_if_expired(assignment, now)
        by_item = {e["key"]: (position, e) for position, e in enumerate(assignment.presentation)}
        Rating.objects.bulk_create(
            Rating(
                assignment=assignment,
                item_id=by_item[key][1]["item"],
                value=value,
                shown_position=by_item[key][0],
                swapped=bool(by_item[key][1]["swap"]),
            )
            for key, value in cleaned.items()
            if "item" in by_item[key][1]
        )
        assignment.attention = [
            {"kind": e["attention"], "value": cleaned[e["key"]],
             "passed": ATTENTION_PASS[e["attention"]](cleaned[e["key"]])}
            for e in assignment.presentation
            if "attention" in e
        ]
        automatic = _automatic_ratings(assignment)
        assignment.completed_at = now
        assignment.completion_code = secrets.token_hex(5).upper()
        assignment.save(update_fields=["completed_at", "completion_code", "released_at", "attention"])
        log.info("ratings submitted", extra={"event": "ratings.submitted", "assignment": assignment.pk,
                                             "participant": participant.pk, "ratings": len(cleaned),
                                             "automatic": automatic})
        return assignment


#: a preference answer as the form sends it: the text shown first (A), second (B), or about the same
CHOICES = ("a", "b", "tie")


def choice_field(key: str, criterion: str) -> str:
    """The form field of one pair's answer on one criterion."""
    return f"{key}-{criterion}"


def _validate_choices(assignment: Assignment, raw: Mapping[str, object]) -> dict[tuple[str, str], str]:
    study = assignment.questionnaire.study
    allowed = CHOICES if study.offers_tie else CHOICES[:2]
    words = "A, B or about the same" if study.offers_tie else "A or B"
    criteria = [criterion["name"] for criterion in study.criteria]
    values: dict[tuple[str, str], str] = {}
    errors: dict[str, str] = {}
    for number, entry in enumerate(assignment.presentation, start=1):
        for criterion in criteria:
            field = choice_field(str(entry["key"]), criterion)
            value = raw.get(field)
            if isinstance(value, (list, tuple)):
                errors[field] = f"Pair {number}, {criterion}: answered {len(value)} times; please choose once."
            elif value in (None, ""):
                errors[field] = f"Pair {number}, {criterion}: please choose {words}."
            elif value not in allowed:
                errors[field] = f"Pair {number}, {criterion}: {value!r} is not {words}."
            else:
                values[(str(entry["key"]), criterion)] = str(value)
    expected = {choice_field(str(e["key"]), c) for e in assignment.presentation for c in criteria}
    unknown = sorted(set(raw) - expected)
    if unknown:
        errors["__all__"] = f"Unknown fields in the submission: {', '.join(unknown)}."
    if errors:
        missing = sum(1 for k in errors if k != "__all__")
        total = len(assignment.presentation) * len(criteria)
        raise SubmissionInvalid(
            f"{missing} of {total} questions need an answer; nothing was saved." if missing else errors["__all__"],
            errors,
        )
    return values


def judgments_submit(*, assignment_public_id: str, participant: Participant, values: Mapping[str, object],
                     now=None) -> Assignment:
    """Store one complete set of preference answers (one per pair and criterion), all or nothing; the same
    idempotency and expiry rules as :func:`ratings_submit`. "a" names the text shown first: the stored ``winner``
    is that system (``model_a`` or ``model_b`` of the item) and ``shown_first`` records which one it was."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment = _locked_assignment(assignment_public_id, participant)
        if assignment.completed_at is not None:
            return assignment
        if not assignment.questionnaire.study.is_pairwise:
            raise SurveyError("This questionnaire asks for ratings, not preferences.")
        cleaned = _validate_choices(assignment, values)
        _take_back_if_expired(assignment, now)
        rows = []
        gold: list[dict[str, object]] = []
        for position, entry in enumerate(assignment.presentation):
            if "gold" in entry:  # a known-answer pair: scored, never stored as a judgment
                value = cleaned[(str(entry["key"]), str(entry["gold"]))]
                gold.append({"kind": "gold", "criterion": entry["gold"], "value": value,
                             "passed": value == entry["answer"]})
                continue
            first = "model_b" if entry.get("swap") else "model_a"
            second = "model_a" if first == "model_b" else "model_b"
            for criterion in (c["name"] for c in assignment.questionnaire.study.criteria):
                answer = cleaned[(str(entry["key"]), criterion)]
                winner = {"a": first, "b": second, "tie": "tie"}[answer]
                rows.append(Judgment(assignment=assignment, item_id=entry["pitem"], criterion=criterion,
                                     winner=winner, shown_first=first, shown_position=position))
        Judgment.objects.bulk_create(rows)
        assignment.attention = gold
        assignment.completed_at = now
        assignment.completion_code = secrets.token_hex(5).upper()
        assignment.save(update_fields=["completed_at", "completion_code", "released_at", "attention"])
        log.info("judgments submitted", extra={"event": "judgments.submitted", "assignment": assignment.pk,
                                               "participant": participant.pk, "judgments": len(rows)})
        return assignment


#: iCOPERNICUS App. E.2: 3 sampled readers per document (3 pairs), the readers' pair and 9 systems' pairs per
#: questionnaire, 1 rater each, the 1-6 similarity scale
ICOPERNICUS_PRESET = {"kind": Study.Kind.SIMILARITY, "pair_mode": Study.PairMode.READERS, "pairs_per_document": 3,
                      "systems_per_questionnaire": 9, "raters_per_questionnaire": 1}


def study_apply_icopernicus_preset(*, study: Study, reference_first: bool = False) -> Study:
    """Set a draft study's design to the iCOPERNICUS survey (``ICOPERNICUS_PRESET``; the order shuffled per
    participant unless ``reference_first``); its questionnaires are then generated as usual. Scored as
    EGISES-HJ-JSD by a run with the study and aux ``jsd``."""
    if study.status != Study.Status.DRAFT:
        raise SurveyError(f"study {study.slug!r} is {study.get_status_display().lower()}: presets apply to drafts")
    if Assignment.objects.filter(questionnaire__study=study).exists():
        raise SurveyError(f"study {study.slug!r} already has assignments; its design cannot change")
    for field, value in ICOPERNICUS_PRESET.items():
        setattr(study, field, value)
    study.reference_first = reference_first
    study.save(update_fields=[*ICOPERNICUS_PRESET, "reference_first"])
    return study


def study_open(*, study: Study) -> None:
    if not study.questionnaires.exists():
        raise SurveyError(f"study {study.slug!r} has no questionnaires; generate them first")
    study.status = Study.Status.OPEN
    study.save(update_fields=["status"])


def study_close(*, study: Study) -> None:
    """No new questionnaires are handed out (``assignment_claim`` needs an open study)."""
    if study.status != Study.Status.OPEN:
        raise SurveyError(f"study {study.slug!r} is not open ({study.get_status_display().lower()}); nothing to close")
    study.status = Study.Status.CLOSED
    study.save(update_fields=["status"])


def study_reopen_draft(*, study: Study) -> None:
    """A closed study back to draft (an open one is closed first, so no one is handed a set meanwhile)."""
    if study.status != Study.Status.CLOSED:
        raise SurveyError(f"study {study.slug!r} is {study.get_status_display().lower()}; only a closed study goes "
                          "back to draft (close it first)")
    study.status = Study.Status.DRAFT
    study.save(update_fields=["status"])


# ------------------------------------------------------------------------------------------ crowd review

REVIEW_ACTIONS: dict[str, tuple[dict[str, object], str]] = {
    # action: (fields set, words for the message)
    "approve": ({"review": Participant.Review.APPROVED}, "approved"),
    "reject": ({"review": Participant.Review.REJECTED, "excluded": True}, "rejected and excluded from scoring"),
    "exclude": ({"excluded": True}, "excluded from scoring"),
    "include": ({"excluded": False}, "included in scoring again"),
}


def participants_exclude_below_gold(*, study: Study, now=None) -> int:
    """Exclude from scoring every participant of a preference study below its gold threshold (recorded with a note
    naming their gold share; *Include in scoring* undoes it); returns how many. SurveyError without a threshold."""
    if study.kind != Study.Kind.PREFERENCE or study.gold_threshold is None:
        raise SurveyError("Set the study's gold threshold first (a preference study with gold pairs).")
    ids = selectors.below_gold_threshold(study=study)
    if not ids:
        return 0
    count, _words = participants_review(
        study=study, participant_ids=ids, action="exclude",
        note=f"gold share below the threshold {study.gold_threshold:g}", now=now,
    )
    return count


def participants_review(
    *, study: Study, participant_ids: list[int], action: str, note: str = "", now=None
) -> tuple[int, str]:
    """Record a crowd-work decision for participants of ``study``: approve, reject (also excludes: rejected work is
    not scored), exclude from or include in scoring (later runs leave excluded participants' ratings out and record
    them with the run). ``note``, when given, replaces the note. Returns (count, words for a message); raises
    SurveyError for an unknown action, no participant, or ids that are not participants of the study."""
    if action not in REVIEW_ACTIONS:
        raise SurveyError(f"unknown action {action!r}; choose one of {', '.join(REVIEW_ACTIONS)}")
    ids = sorted({pk for pk in participant_ids if 0 < pk < 2**63})
    if not ids:
        raise SurveyError("Select at least one participant.")
    known = set(study.participants.filter(pk__in=ids).values_list("pk", flat=True))
    unknown = [selectors.rater_id(pk) for pk in ids if pk not in known]
    if unknown:
        raise SurveyError(f"Not participants of {study.slug}: {', '.join(unknown)}; nothing was changed.")
    fields, words = REVIEW_ACTIONS[action]
    changes: dict[str, object] = {**fields, "reviewed_at": now or timezone.now()}
    if note.strip():
        changes["review_note"] = note.strip()[:500]
    count = study.participants.filter(pk__in=ids).update(**changes)
    log.info("participants reviewed", extra={"event": "participants.reviewed", "study": study.slug,
                                              "action": action, "participants": ids})
    return count, words
