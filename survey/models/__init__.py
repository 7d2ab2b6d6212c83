"""Survey data model: datasets of documents, readers and summaries; studies of blind questionnaires.

A questionnaire shows one document's summary pairs for two readers (j, k): the readers' own reference
summaries (system ``user``) and, for each of a group of systems, that system's summaries for j and k.
Participants claim questionnaires through assignments; each questionnaire has ``raters_per_questionnaire``
slots, and a slot is held by at most one unreleased assignment (a database constraint).

A *preference* study (AuPEL, issue 15) uses the same questionnaires, slots and assignments: a questionnaire is one
case (a document and a reader: ``reader_j`` and ``reader_k`` are both that reader) with a few system pairs
(:class:`PreferenceItem`), and the participant answers one forced choice per pair and criterion
(:class:`Judgment`). The 1-6 similarity ratings (:class:`Item`, :class:`Rating`) stay as they are.

Split by concern (import jobs: ``imports``): ``corpus``, ``studies``, ``participation``, ``judges``."""
from __future__ import annotations

from survey.models.corpus import (
    CRITERION_MAX,
    DEFAULT_CRITERIA,
    DEFAULT_SCALE_LABELS,
    RATING_MAX,
    RATING_MIN,
    REFERENCE_SYSTEM,
    SENTENCE_CRITERION,
    Dataset,
    Document,
    Reader,
    Summary,
    System,
    TopicSentence,
    default_criteria,
    default_scale_labels,
    validate_criteria,
    validate_scale_labels,
)
from survey.models.imports import ImportJob, ImportUpload
from survey.models.judges import (
    JudgeEndpoint,
    JudgeJudgment,
    JudgeRun,
)
from survey.models.participation import (
    Assignment,
    Judgment,
    Participant,
    Rating,
)
from survey.models.studies import (
    Item,
    PreferenceItem,
    Questionnaire,
    Study,
)

__all__ = [
    "ImportJob",
    "ImportUpload",
    "Assignment",
    "CRITERION_MAX",
    "DEFAULT_CRITERIA",
    "DEFAULT_SCALE_LABELS",
    "Dataset",
    "Document",
    "Item",
    "JudgeEndpoint",
    "JudgeJudgment",
    "JudgeRun",
    "Judgment",
    "Participant",
    "PreferenceItem",
    "Questionnaire",
    "RATING_MAX",
    "RATING_MIN",
    "REFERENCE_SYSTEM",
    "Rating",
    "Reader",
    "SENTENCE_CRITERION",
    "Study",
    "Summary",
    "System",
    "TopicSentence",
    "default_criteria",
    "default_scale_labels",
    "validate_criteria",
    "validate_scale_labels",
]
