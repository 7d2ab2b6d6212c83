"""The rows of the ratings and judgment exports (docs/conventions.md sec. 2, 17, 18, 19): rater ids, the review cells,
ratings, preference judgments (participants' and judge runs'), sentence judgments; each read in a fixed number of
queries whatever its size."""
from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from metaeval.core.io.exclusions import REVIEW_COLUMNS
from survey.models import (
    JudgeJudgment,
    JudgeRun,
    Judgment,
    PreferenceItem,
    Rating,
    Study,
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
#: the rater (or the LLM judge run's name), the sentence shown first, the criterion and ``judge_kind`` (``human`` or
#: ``llm``), then the rater's review (``REVIEW_COLUMNS``; empty for an LLM judge's row)
SENTENCE_JUDGMENT_COLUMNS = ("topic", "sentence_a", "sentence_b", "winner", "judge", "shown_first", "criterion",
                             "judge_kind", *REVIEW_COLUMNS)
_SIDE = {"model_a": "a", "model_b": "b"}


def sentence_judgment_rows(*, study: Study, exclude_excluded: bool = False, source: str = "human"
                           ) -> Iterator[dict[str, object]]:
    """A sentence preference study's judgments as Zopf judgment-file rows (``SENTENCE_JUDGMENT_COLUMNS``): the
    participants' (``source`` ``human`` or ``all``) in submission order (assignment, then position on the page),
    then the LLM judge runs' (``llm`` or ``all``; oldest run first, in item, criterion and repeat order, ``invalid``
    answers kept as ``invalid``). One query per kind, read as plain values."""
    if source in ("all", "human"):
        rows = Judgment.objects.filter(assignment__questionnaire__study=study, assignment__completed_at__isnull=False)
        if exclude_excluded:
            rows = rows.exclude(assignment__participant__excluded=True)
        values = rows.order_by("assignment__completed_at", "assignment_id", "shown_position", "id").values_list(
            "item__questionnaire__document__external_id", "item__sentence_a__position", "item__sentence_b__position",
            "winner", "assignment__participant_id", "shown_first", "criterion", *_REVIEW_FIELDS)
        for topic, sentence_a, sentence_b, winner, participant, shown_first, criterion, *review in values.iterator(
                chunk_size=2000):
            yield {"topic": topic, "sentence_a": sentence_a, "sentence_b": sentence_b,
                   "winner": _SIDE.get(winner, winner), "judge": rater_id(participant),
                   "shown_first": _SIDE[shown_first], "criterion": criterion, "judge_kind": "human",
                   **review_cells(*review)}
    if source in ("all", "llm"):
        judged = JudgeJudgment.objects.filter(judge_run__study=study).order_by(
            "judge_run__created_at", "judge_run_id", "item__questionnaire__position", "item__questionnaire_id",
            "item__position", "criterion", "run").values_list(
            "item__questionnaire__document__external_id", "item__sentence_a__position", "item__sentence_b__position",
            "winner", "judge_run__name", "shown_first", "criterion")
        for topic, sentence_a, sentence_b, winner, name, shown_first, criterion in judged.iterator(chunk_size=2000):
            yield {"topic": topic, "sentence_a": sentence_a, "sentence_b": sentence_b,
                   "winner": _SIDE.get(winner, winner), "judge": name, "shown_first": _SIDE.get(shown_first, ""),
                   "criterion": criterion, "judge_kind": "llm", **_NO_REVIEW}


def study_judgment_file(*, study: Study, exclude_excluded: bool = False, source: str = "all"
                        ) -> tuple[Iterator[dict[str, object]], tuple[str, ...]]:
    """The rows and columns of a pairwise study's judgment file: a preference study's (sec. 17,
    :func:`judgment_export_rows`) or a sentence preference study's (sec. 18, :func:`sentence_judgment_rows`)."""
    if study.kind == Study.Kind.SENTENCE_PREFERENCE:
        if source not in JUDGMENT_SOURCES:
            raise ValueError(f"source must be one of {', '.join(JUDGMENT_SOURCES)}, not {source!r}")
        return sentence_judgment_rows(study=study, exclude_excluded=exclude_excluded, source=source), \
            SENTENCE_JUDGMENT_COLUMNS
    return judgment_export_rows(study=study, exclude_excluded=exclude_excluded, source=source), JUDGMENT_COLUMNS
