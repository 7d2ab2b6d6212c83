"""Reads of the corpus: a dataset's systems, documents with their summaries' completeness."""
from __future__ import annotations

from django.db.models import Count, F, OuterRef, QuerySet, Subquery

from survey.models import (
    REFERENCE_SYSTEM,
    Dataset,
    Document,
    Summary,
    System,
)


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
