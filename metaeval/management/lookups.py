"""The dataset and study a management command names, or a :class:`CommandError` that lists the known ones."""
from __future__ import annotations

from django.core.management.base import CommandError

from survey.models import Dataset, Study


def dataset_named(name: str) -> Dataset:
    found = Dataset.objects.filter(name=name).first()
    if found is None:
        known = ", ".join(Dataset.objects.values_list("name", flat=True)) or "none"
        raise CommandError(f"unknown dataset {name!r} (known: {known})")
    return found


def study_of(slug: str, dataset: Dataset) -> Study:
    found = Study.objects.filter(slug=slug).first()
    if found is None or found.dataset_id != dataset.pk:
        known = ", ".join(Study.objects.filter(dataset=dataset).values_list("slug", flat=True)) or "none"
        what = "unknown study" if found is None else "study of another dataset:"
        raise CommandError(f"{what} {slug!r} (studies of dataset {dataset.name!r}: {known})")
    return found
