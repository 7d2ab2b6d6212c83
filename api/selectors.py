"""Reads the API needs beyond survey.selectors and metaeval.selectors: datasets with counts, their systems,
studies. Counts are subqueries (one per figure), never joins of documents x readers x summaries."""
from __future__ import annotations

from django.db.models import Count, IntegerField, OuterRef, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce

from survey.models import REFERENCE_SYSTEM, Dataset, Document, Reader, Study, Summary


def _count(queryset: QuerySet, group: str, *, distinct: str | None = None) -> Coalesce:
    counted = Count(distinct, distinct=True) if distinct else Count("pk")
    sub = queryset.order_by().values(group).annotate(n=counted).values("n")[:1]
    return Coalesce(Subquery(sub, output_field=IntegerField()), Value(0))


def dataset_list() -> QuerySet[Dataset]:
    """Datasets by name, each annotated with ``documents``, ``readers``, ``systems`` (systems other than the
    readers' own ``user`` summaries that have a summary in it) and ``summaries`` counts, and ``studies``."""
    in_dataset = Summary.objects.filter(document__dataset=OuterRef("pk"))
    return Dataset.objects.annotate(
        document_count=_count(Document.objects.filter(dataset=OuterRef("pk")), "dataset"),
        reader_count=_count(Reader.objects.filter(dataset=OuterRef("pk")), "dataset"),
        system_count=_count(
            in_dataset.exclude(system__name=REFERENCE_SYSTEM), "document__dataset", distinct="system"
        ),
        summary_count=_count(in_dataset, "document__dataset"),
        study_count=_count(Study.objects.filter(dataset=OuterRef("pk")), "dataset"),
    ).order_by("name")


def dataset_get(*, name: str) -> Dataset:
    """One dataset with the counts of :func:`dataset_list`; raises ``Dataset.DoesNotExist``."""
    return dataset_list().get(name=name)


def study_list(*, dataset: Dataset | None = None) -> QuerySet[Study]:
    """Studies, newest first, optionally of one dataset."""
    studies = Study.objects.select_related("dataset").prefetch_related("systems")
    if dataset is not None:
        studies = studies.filter(dataset=dataset)
    return studies


def study_get(*, slug: str) -> Study:
    """One study; raises ``Study.DoesNotExist``."""
    return study_list().get(slug=slug)


def dataset_find(*, name: str) -> Dataset | None:
    """The dataset called ``name`` (no counts), or None."""
    return Dataset.objects.filter(name=name).first()


def study_find(*, slug: str) -> Study | None:
    """The study ``slug`` (with its dataset), or None."""
    return Study.objects.select_related("dataset").filter(slug=slug).first()
