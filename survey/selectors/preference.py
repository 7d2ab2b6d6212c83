"""Preference and sentence preference studies (docs/conventions.md sec. 18-19): their questionnaires' plans, what a
participant sees beside a case (the reader's own texts), gold items."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from survey import pairwise_design
from survey.models import (
    REFERENCE_SYSTEM,
    Assignment,
    Document,
    Reader,
    Study,
    Summary,
    TopicSentence,
)
from survey.selectors.participants import study_participants


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


@dataclass(frozen=True)
class PreferenceCases:
    """A preference study's systems (names, sorted; the reference left out), its cases (document, reader external
    ids, dataset order) with a summary of every system, the summaries by (document, reader, system), the documents
    and readers by external id, and how many cases lack some system's summary."""

    systems: list[str]
    cases: list[tuple[str, str]]
    summaries: dict[tuple[str, str, str], Summary]
    documents: dict[str, Document]
    readers: dict[str, Reader]
    partial: int


def preference_cases(*, study: Study) -> PreferenceCases:
    """The cases a preference study draws from (:class:`PreferenceCases`); ValueError for fewer than two systems."""
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
    return PreferenceCases(systems, cases, summaries, documents, readers, partial)


def preference_plan(*, study: Study) -> tuple[list[PlannedPreference], list[str]]:
    """What *Generate questionnaires* creates for a preference study (``survey.pairwise_design.preference_design``):
    the cases are the (document, reader) pairs with a summary of every study system, in dataset order, of which the
    design deals about ``pairs_per_questionnaire`` pairs to each case it uses; a case's items, in the order dealt,
    are cut into questionnaires of ``pairs_per_questionnaire``. Also the cases left out
    (in words). ValueError for fewer than two systems or no usable case."""
    found = preference_cases(study=study)
    systems, cases, summaries = found.systems, found.cases, found.summaries
    documents, readers, partial = found.documents, found.readers, found.partial
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


def below_gold_threshold(*, study: Study) -> list[int]:
    """Participant ids of a preference study whose share of gold pairs answered right is below its threshold."""
    if study.kind != Study.Kind.PREFERENCE or study.gold_threshold is None:
        return []
    return [row.participant.pk for row in study_participants(study=study) if row.below_gold]
