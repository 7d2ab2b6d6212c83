"""Topics of a sentence preference study (Zopf sec. 3; docs/conventions.md sec. 18-19): the source sentences S* of
each topic, read from a Zopf topics file (``metaeval.core.pairwise.zopf_files.load_topics``: JSON Lines ``{"topic": ...,
"sentences": [...]}``, or ``"documents"`` split by Punkt) and stored as one :class:`~survey.models.Document` per
topic (``external_id`` = ``headline`` = ``topic`` = the topic id, the body its sentences one per line) with its
:class:`~survey.models.TopicSentence` rows in file order (index 0, 1, ... as in the Zopf judgment files).

All or nothing. Importing the same topic with the same sentences again changes nothing; a topic already in the
dataset with other sentences, one with fewer than two sentences, or a topic id longer than ``MAX_KEY_LENGTH``, is an
error naming the file and line.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from django.db import transaction

from metaeval.core.io.fileio import ImportFileError
from metaeval.core.pairwise.zopf_files import load_topics
from survey.importers.records import MAX_KEY_LENGTH
from survey.importers.store import dataset_name_check
from survey.models import Dataset, Document, TopicSentence

__all__ = ["TopicsResult", "topics_import"]


@dataclass(frozen=True)
class TopicsResult:
    dataset: str
    created: int
    unchanged: int
    sentences: int

    def describe(self) -> str:
        return (f"dataset {self.dataset}: {self.created} topics imported ({self.sentences} sentences), "
                f"{self.unchanged} already there unchanged")


def topics_import(path: str | Path, *, dataset: str) -> TopicsResult:
    """Store the topics of ``path`` in ``dataset`` (created when missing); see the module docstring."""
    path = Path(path)
    name = dataset_name_check(dataset)
    topics = load_topics(path)
    problems: list[str] = []
    for topic in topics.values():
        if len(topic.topic) > MAX_KEY_LENGTH:  # the document's external_id, headline and topic
            problems.append(f'{path.name}:{topic.line}: field "topic" is longer than {MAX_KEY_LENGTH} characters')
        if len(topic.sentences) < 2:
            problems.append(f'{path.name}:{topic.line}: field "sentences": topic "{topic.topic}" has '
                            f"{len(topic.sentences)} sentence(s); a sentence pair needs at least two")
    existing: dict[str, list[str]] = {}
    found = Dataset.objects.filter(name=name).first()
    if found is not None:
        for doc in found.documents.filter(external_id__in=list(topics)).prefetch_related("sentences"):
            existing[doc.external_id] = [s.text for s in doc.sentences.all()]
    for topic in topics.values():
        if topic.topic in existing and existing[topic.topic] != topic.sentences:
            problems.append(f'{path.name}:{topic.line}: field "topic": "{topic.topic}" is already in dataset '
                            f"{name} with other sentences (or as a document); import it under another name")
    if problems:
        raise ImportFileError(problems)
    created = sentences = 0
    with transaction.atomic():
        target = found or Dataset.objects.create(name=name)
        for topic in topics.values():
            if topic.topic in existing:
                continue
            document = Document.objects.create(dataset=target, external_id=topic.topic, headline=topic.topic,
                                               topic=topic.topic, body="\n".join(topic.sentences))
            TopicSentence.objects.bulk_create(TopicSentence(document=document, position=index, text=text)
                                              for index, text in enumerate(topic.sentences))
            created += 1
            sentences += len(topic.sentences)
    return TopicsResult(dataset=name, created=created, unchanged=len(existing), sentences=sentences)
