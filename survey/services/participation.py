"""Writes of taking part: a participant registered, a rating set claimed atomically (a free slot, the participant's
live set, attention and gold pairs, the shown order), expired holds released."""
from __future__ import annotations

import logging
import random
import secrets
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
    Document,
    Item,
    Participant,
    Questionnaire,
    Study,
    Summary,
)
from survey.services import adaptive
from survey.services.errors import NoQuestionnaireAvailable, SurveyError
from survey.services.studies import _key_maker, _token

log = logging.getLogger(__name__)

#: what a participant reads when no questionnaire is left for them
NO_MORE = "Thank you! There are no more questionnaires for you in this study right now."


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
#: the second kind of gold pair: the reader's own headline against an unrelated article's headline is the more
#: relevant text to this article
GOLD_RELEVANCE_CRITERION = "relevance"
#: the gold kinds in the order a set's gold pairs take turns: their criterion (docs/conventions.md sec. 19)
GOLD_KINDS = (GOLD_CRITERION, GOLD_RELEVANCE_CRITERION)


def gold_kinds(study: Study) -> list[str]:
    """The gold kinds (their criteria, :data:`GOLD_KINDS` order) a study can have: those whose criterion it asks."""
    asked = {c["name"] for c in study.criteria}
    return [kind for kind in GOLD_KINDS if kind in asked]


def gold_pair_count(study: Study, pairs: int) -> int:
    """Gold pairs in a set of ``pairs`` real pairs: round(gold_rate x pairs), at least one when the rate is above 0;
    none when the study asks neither about personalization nor relevance."""
    if study.gold_rate <= 0 or not gold_kinds(study):
        return 0
    return max(1, round(study.gold_rate * pairs))


def _gold_pairs(study: Study, questionnaire: Questionnaire, count: int, rng: random.Random) -> list[dict[str, object]]:
    """``count`` known-answer pairs for one set, the kinds of :func:`gold_kinds` taking turns (the first pair is of
    the first kind): on personalization the case reader's own headline (``user`` summary) of the document against
    another reader's own headline of it; on relevance the reader's own headline against the headline of another,
    unrelated article of the dataset. Sides are drawn at random and the right answer is the reader's own on the
    kind's criterion. The texts are stored with the assignment. A kind without a text to pair with is skipped;
    none when the reader has no own headline (or the questionnaire, a topic's, has no reader)."""
    if questionnaire.reader_j_id is None:
        return []
    own = Summary.objects.filter(document_id=questionnaire.document_id, reader_id=questionnaire.reader_j_id,
                                 system__name=REFERENCE_SYSTEM).values_list("text", flat=True).first()
    if own is None:
        return []
    others: dict[str, list[str]] = {
        GOLD_CRITERION: list(
            Summary.objects.filter(document_id=questionnaire.document_id, system__name=REFERENCE_SYSTEM)
            .exclude(reader_id=questionnaire.reader_j_id).order_by("pk").values_list("text", flat=True)),
    }
    kinds = gold_kinds(study)
    if GOLD_RELEVANCE_CRITERION in kinds:
        others[GOLD_RELEVANCE_CRITERION] = list(
            Document.objects.filter(dataset_id=study.dataset_id).exclude(pk=questionnaire.document_id)
            .exclude(headline="").order_by("pk").values_list("headline", flat=True))
    usable = [kind for kind in kinds
              if [text for text in others.get(kind, []) if not same_text(text, own)]]
    pairs: list[dict[str, object]] = []
    for number in range(count if usable else 0):
        kind = usable[number % len(usable)]
        other = rng.choice([text for text in others[kind] if not same_text(text, own)])
        own_first = rng.random() < 0.5
        pairs.append({"gold": kind, "first": own if own_first else other,
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
    if adaptive.watches_stopping(study):  # the goal reached: the study stops itself (stop_action "stop")
        adaptive.stop_if_reached(study, now)
    if study.completed_at is not None:
        raise NoQuestionnaireAvailable(adaptive.COMPLETE)
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
    if adaptive.is_adaptive(study):
        return _adaptive_claim(study, participant, now, presentation_seed)
    raise NoQuestionnaireAvailable(NO_MORE)


def _adaptive_claim(study: Study, participant: Participant, now, presentation_seed: int | None) -> Assignment:
    """No free questionnaire in an adaptive study: draw the next set (``adaptive.adaptive_set_create``, the study
    row locked) and give it to the participant, in one transaction. A concurrent claim of the same participant
    waits for the lock and then finds this assignment (or, where locks are not available, loses on the one-live-
    assignment constraint and returns the winner's)."""
    try:
        with transaction.atomic():
            Study.objects.select_for_update().filter(pk=study.pk).first()
            current = _live_assignment(participant, now)
            if current is not None:
                return current
            questionnaire = adaptive.adaptive_set_create(study=study)
            assignment = _new_assignment(study=study, questionnaire=questionnaire, participant=participant, slot=0,
                                         now=now, presentation_seed=presentation_seed)
            log.info("adaptive set drawn and claimed", extra={
                "event": "assignment.claimed", "study": study.slug, "questionnaire": questionnaire.position,
                "slot": 0, "participant": participant.pk,
            })
            return assignment
    except IntegrityError:
        current = _live_assignment(participant, now)
        if current is not None:
            return current
        raise NoQuestionnaireAvailable(NO_MORE) from None
