"""Write parsed records to the database: one atomic, idempotent upsert by natural keys.

Natural keys: Dataset.name; Document and Reader (dataset, external_id); System.name; Summary (document, reader,
system). Rows are updated only when a field differs, so re-running an import changes nothing. Nothing is ever
deleted. If anything fails, the transaction rolls back and nothing is written.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from django.core.exceptions import ValidationError
from django.core.validators import validate_slug
from django.db import models, transaction
from django.utils.text import slugify

from metaeval.core.io.fileio import ImporterError
from survey.importers.records import DatasetRecords
from survey.models import REFERENCE_SYSTEM, Dataset, Document, Reader, Summary, System

log = logging.getLogger(__name__)
BATCH_SIZE = 500
DATASET_NAME_MAX = cast(int, Dataset._meta.get_field("name").max_length)  # a SlugField: always set


@dataclass
class Counts:
    created: int = 0
    updated: int = 0
    unchanged: int = 0

    @property
    def total(self) -> int:
        return self.created + self.updated + self.unchanged

    def describe(self, noun: str) -> str:
        return f"{self.total} {noun} ({self.created} created, {self.updated} updated, {self.unchanged} unchanged)"


@dataclass
class ImportResult:
    dataset: str
    dataset_created: bool
    documents: Counts = field(default_factory=Counts)
    readers: Counts = field(default_factory=Counts)
    systems: Counts = field(default_factory=Counts)
    summaries: Counts = field(default_factory=Counts)

    @property
    def changed(self) -> bool:
        parts = (self.documents, self.readers, self.systems, self.summaries)
        return self.dataset_created or any(c.created or c.updated for c in parts)

    def describe(self) -> str:
        """One line, e.g. ``dataset demo (new): 14 documents (14 created, 0 updated, 0 unchanged), ...``."""
        state = " (new)" if self.dataset_created else ""
        parts = [
            self.documents.describe("documents"),
            self.readers.describe("readers"),
            self.systems.describe("systems"),
            self.summaries.describe("summaries"),
        ]
        return f"dataset {self.dataset}{state}: " + ", ".join(parts)


def dataset_name_check(name: str) -> str:
    """Return ``name`` if it is a valid dataset name (a slug of at most 100 characters)."""
    try:
        validate_slug(name)
    except ValidationError:
        example = slugify(name) or "my-data"
        raise ImporterError(
            f'invalid dataset name "{name}": use letters, digits, "-" and "_" only (e.g. "{example}")'
        ) from None
    if len(name) > DATASET_NAME_MAX:
        raise ImporterError(f'invalid dataset name "{name[:20]}...": longer than {DATASET_NAME_MAX} characters')
    return name


def dataset_name_from_file(stem: str) -> str:
    """The default dataset name for a file: its stem, slugified."""
    name = slugify(stem)[:DATASET_NAME_MAX]
    if not name:
        raise ImporterError(f'cannot derive a dataset name from "{stem}"; give one with --dataset')
    return name


def dataset_keys(*, name: str) -> tuple[set[str], set[str]]:
    """(document ids, reader ids) of an existing dataset; ImporterError if there is no such dataset."""
    dataset = Dataset.objects.filter(name=name).first()
    if dataset is None:
        raise ImporterError(f'dataset "{name}" does not exist; import it first')
    doc_ids = set(Document.objects.filter(dataset=dataset).values_list("external_id", flat=True))
    reader_ids = set(Reader.objects.filter(dataset=dataset).values_list("external_id", flat=True))
    return doc_ids, reader_ids


def dataset_import(
    *, name: str, records: DatasetRecords, create_dataset: bool = True, source: str = ""
) -> ImportResult:
    """Upsert everything in ``records`` into dataset ``name`` inside one transaction.

    ``create_dataset=False`` requires the dataset to exist. ``source`` is stored on a newly created dataset.
    New systems get the kind from ``records.system_kinds``, else "reference" for ``user`` and "unspecified"
    otherwise; existing systems change kind only when ``records.system_kinds`` names them.
    """
    dataset_name_check(name)
    for kind in records.system_kinds.values():
        if kind not in System.Kind.values:
            raise ImporterError(f'unknown system kind "{kind}" (choose from {", ".join(System.Kind.values)})')
    _check_unique("document", [d.external_id for d in records.documents])
    _check_unique("reader", [r.external_id for r in records.readers])
    _check_unique("summary", [(s.doc_id, s.reader_id, s.system) for s in records.summaries])

    with transaction.atomic():
        if create_dataset:
            dataset, created = Dataset.objects.get_or_create(name=name, defaults={"source": source[:200]})
        else:
            found, created = Dataset.objects.filter(name=name).first(), False
            if found is None:
                raise ImporterError(f'dataset "{name}" does not exist; import it first')
            dataset = found
        dataset = Dataset.objects.select_for_update().get(pk=dataset.pk)  # serialise imports into one dataset
        result = ImportResult(dataset=name, dataset_created=created)

        result.documents = _upsert(
            Document,
            Document.objects.filter(dataset=dataset),
            key="external_id",
            fields=("headline", "body", "category", "topic"),
            wanted={
                d.external_id: {"headline": d.headline, "body": d.body, "category": d.category, "topic": d.topic}
                for d in records.documents
            },
            make=lambda key, values: Document(dataset=dataset, external_id=key, **values),
        )
        result.readers = _upsert(
            Reader,
            Reader.objects.filter(dataset=dataset),
            key="external_id",
            fields=("history", "profile"),
            wanted=_reader_values(dataset, records),
            make=lambda key, values: Reader(dataset=dataset, external_id=key, **values),
        )
        result.systems = _systems_upsert(records)

        doc_pk = dict(Document.objects.filter(dataset=dataset).values_list("external_id", "pk"))
        reader_pk = dict(Reader.objects.filter(dataset=dataset).values_list("external_id", "pk"))
        system_pk = dict(System.objects.filter(name__in=records.systems).values_list("name", "pk"))
        wanted: dict[tuple[int, int, int], dict[str, Any]] = {}
        for s in records.summaries:
            if s.doc_id not in doc_pk:
                raise ImporterError(f'summary for unknown document "{s.doc_id}" in dataset "{name}"')
            if s.reader_id not in reader_pk:
                raise ImporterError(f'summary for unknown reader "{s.reader_id}" in dataset "{name}"')
            wanted[(doc_pk[s.doc_id], reader_pk[s.reader_id], system_pk[s.system])] = {"text": s.text}
        result.summaries = _upsert(
            Summary,
            Summary.objects.filter(document__dataset=dataset, system_id__in=set(system_pk.values())),
            key=("document_id", "reader_id", "system_id"),
            fields=("text",),
            wanted=wanted,
            make=lambda key, values: Summary(document_id=key[0], reader_id=key[1], system_id=key[2], **values),
        )
    log.info("dataset imported", extra={"event": "import.done", "dataset": name, "created": created,
                                        "documents": vars(result.documents), "readers": vars(result.readers),
                                        "systems": vars(result.systems), "summaries": vars(result.summaries)})
    return result


def _reader_values(dataset: Dataset, records: DatasetRecords) -> dict[str, dict[str, Any]]:
    """Reader fields to store; a field the source does not carry (None) keeps its stored value."""
    stored = {
        key: {"history": history, "profile": profile}
        for key, history, profile in Reader.objects.filter(dataset=dataset).values_list(
            "external_id", "history", "profile"
        )
    }
    values: dict[str, dict[str, Any]] = {}
    for r in records.readers:
        before = stored.get(r.external_id, {"history": [], "profile": ""})
        values[r.external_id] = {
            "history": list(r.history) if r.history is not None else before["history"],
            "profile": r.profile if r.profile is not None else before["profile"],
        }
    return values


def _systems_upsert(records: DatasetRecords) -> Counts:
    names = records.systems
    variants = {s.system: s.variant for s in records.summaries if s.variant}
    existing = {s.name: s for s in System.objects.filter(name__in=names)}
    counts = Counts()
    new: list[System] = []
    changed: list[System] = []
    for name in names:
        kind = records.system_kinds.get(name)
        system = existing.get(name)
        if system is None:
            default = System.Kind.REFERENCE if name == REFERENCE_SYSTEM else System.Kind.UNSPECIFIED
            new.append(System(name=name, kind=kind or default, variant=variants.get(name, "")))
        elif (kind is not None and system.kind != kind) or (name in variants and system.variant != variants[name]):
            system.kind = kind or system.kind
            system.variant = variants.get(name, system.variant)
            changed.append(system)
        else:
            counts.unchanged += 1
    System.objects.bulk_create(new, batch_size=BATCH_SIZE)
    System.objects.bulk_update(changed, ["kind", "variant"], batch_size=BATCH_SIZE)
    counts.created, counts.updated = len(new), len(changed)
    return counts


def _upsert(
    model: type[models.Model],
    queryset: models.QuerySet,
    *,
    key: str | tuple[str, ...],
    fields: tuple[str, ...],
    wanted: dict[Any, dict[str, Any]],
    make: Callable[[Any, dict[str, Any]], models.Model],
) -> Counts:
    """Create rows for new keys, update rows whose ``fields`` differ, count the rest as unchanged."""
    key_fields = (key,) if isinstance(key, str) else key
    existing: dict[Any, tuple[Any, ...]] = {}
    for row in queryset.values_list("pk", *key_fields, *fields):
        row_key = row[1] if isinstance(key, str) else tuple(row[1 : 1 + len(key_fields)])
        existing[row_key] = row
    counts = Counts()
    new: list[models.Model] = []
    changed: list[models.Model] = []
    offset = 1 + len(key_fields)
    for item_key, values in wanted.items():
        row = existing.get(item_key)
        if row is None:
            new.append(make(item_key, values))
        elif any(row[offset + i] != values[f] for i, f in enumerate(fields)):
            changed.append(model(pk=row[0], **values))
        else:
            counts.unchanged += 1
    manager = model._default_manager
    manager.bulk_create(new, batch_size=BATCH_SIZE)
    manager.bulk_update(changed, list(fields), batch_size=BATCH_SIZE)
    counts.created, counts.updated = len(new), len(changed)
    return counts


def _check_unique(what: str, keys: Sequence[object]) -> None:
    seen: set[object] = set()
    for key in keys:
        if key in seen:
            raise ImporterError(f"duplicate {what} {key!r} in the records to import")
        seen.add(key)
