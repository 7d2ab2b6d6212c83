"""The atomic upsert: counts, idempotency, updates, system kinds, all-or-nothing."""
from __future__ import annotations

import pytest

from metaeval.core.io.fileio import ImporterError
from survey.importers import store
from survey.importers.consolidated import parse_consolidated
from survey.importers.records import MAX_KEY_LENGTH, DatasetRecords, DocumentRecord, ReaderRecord, SummaryRecord
from survey.models import Dataset, Document, Reader, Summary, System
from tests.survey.importers.helpers import doc, snapshot, write_jsonl

pytestmark = pytest.mark.django_db


def consolidated(tmp_path, docs, name="data.jsonl"):
    return parse_consolidated(write_jsonl(tmp_path / name, docs))


def test_counts_and_rows(tmp_path):
    result = store.dataset_import(name="demo", records=consolidated(tmp_path, [doc("d1"), doc("d2")]), source="x.jsonl")
    assert result.describe() == (
        "dataset demo (new): 2 documents (2 created, 0 updated, 0 unchanged), "
        "2 readers (2 created, 0 updated, 0 unchanged), 3 systems (3 created, 0 updated, 0 unchanged), "
        "12 summaries (12 created, 0 updated, 0 unchanged)"
    )
    dataset = Dataset.objects.get(name="demo")
    assert dataset.source == "x.jsonl"
    assert list(dataset.documents.values_list("external_id", "headline", "body")) == [
        ("d1", "Headline d1", "Body of d1."),
        ("d2", "Headline d2", "Body of d2."),
    ]
    assert Summary.objects.get(document__external_id="d2", reader__external_id="u1", system__name="sysB").text == (
        "sysB for u1 on d2"
    )


def test_reimport_changes_nothing(tmp_path):
    records = consolidated(tmp_path, [doc("d1"), doc("d2")])
    store.dataset_import(name="demo", records=records)
    before = snapshot()
    again = store.dataset_import(name="demo", records=records)
    assert snapshot() == before
    assert not again.changed
    assert again.describe() == (
        "dataset demo: 2 documents (0 created, 0 updated, 2 unchanged), 2 readers (0 created, 0 updated, 2 unchanged), "
        "3 systems (0 created, 0 updated, 3 unchanged), 12 summaries (0 created, 0 updated, 12 unchanged)"
    )


def test_changed_text_is_updated_in_place(tmp_path):
    store.dataset_import(name="demo", records=consolidated(tmp_path, [doc("d1"), doc("d2")]))
    changed = doc("d2")
    changed["doc_summ"] = "New headline"
    changed["m_summary_dict"]["u2"]["sysA"] = "revised"
    pk = Summary.objects.get(document__external_id="d2", reader__external_id="u2", system__name="sysA").pk
    result = store.dataset_import(name="demo", records=consolidated(tmp_path, [doc("d1"), changed], "v2.jsonl"))
    assert (result.documents.updated, result.documents.unchanged) == (1, 1)
    assert (result.summaries.created, result.summaries.updated, result.summaries.unchanged) == (0, 1, 11)
    assert Summary.objects.get(pk=pk).text == "revised"
    assert Document.objects.get(external_id="d2").headline == "New headline"
    assert Summary.objects.count() == 12


def test_datasets_are_separate_but_systems_shared(tmp_path):
    records = consolidated(tmp_path, [doc("d1")])
    store.dataset_import(name="one", records=records)
    result = store.dataset_import(name="two", records=records)
    assert result.dataset_created and result.documents.created == 1 and result.systems.unchanged == 3
    assert Document.objects.count() == 2 and System.objects.count() == 3


def test_reader_history_and_profile_are_upserted():
    records = DatasetRecords(readers=[ReaderRecord("u1", ["n1", "n2"]), ReaderRecord("u2")])
    store.dataset_import(name="demo", records=records)
    records.readers[1] = ReaderRecord("u2", ["n3"], "likes sports")
    result = store.dataset_import(name="demo", records=records)
    assert (result.readers.updated, result.readers.unchanged) == (1, 1)
    assert list(Reader.objects.values_list("external_id", "history", "profile")) == [
        ("u1", ["n1", "n2"], ""),
        ("u2", ["n3"], "likes sports"),
    ]


def test_a_source_without_histories_keeps_stored_ones():
    """A consolidated re-import (no history, no profile) must not wipe what a PENS import stored."""
    store.dataset_import(name="demo", records=DatasetRecords(readers=[ReaderRecord("u1", ["n1"], "p")]))
    result = store.dataset_import(name="demo", records=DatasetRecords(readers=[ReaderRecord("u1")]))
    assert result.readers.unchanged == 1
    assert list(Reader.objects.values_list("history", "profile")) == [(["n1"], "p")]


def test_system_kinds(tmp_path):
    System.objects.create(name="sysA", kind=System.Kind.LLM)
    store.dataset_import(name="demo", records=consolidated(tmp_path, [doc("d1", systems=["sysA", "sysB"])]))
    assert dict(System.objects.values_list("name", "kind")) == {
        "user": "reference", "sysA": "llm", "sysB": "unspecified"
    }
    records = DatasetRecords(system_kinds={"sysA": "generic", "sysC": "personalized"})
    result = store.dataset_import(name="demo", records=records)
    assert (result.systems.created, result.systems.updated) == (1, 1)
    assert dict(System.objects.values_list("name", "kind")) == {
        "user": "reference", "sysA": "generic", "sysB": "unspecified", "sysC": "personalized"
    }
    with pytest.raises(ImporterError, match='unknown system kind "robot"'):
        store.dataset_import(name="demo", records=DatasetRecords(system_kinds={"sysA": "robot"}))


def test_failure_midway_rolls_everything_back(tmp_path, monkeypatch):
    store.dataset_import(name="demo", records=consolidated(tmp_path, [doc("d1")]))
    before = snapshot()
    bigger = consolidated(tmp_path, [doc("d1", systems=["sysA", "sysB", "sysNew"]), doc("d2")], "v2.jsonl")
    bigger.summaries[0].text = "changed"
    original = Summary.objects.bulk_create

    def failing_bulk_create(objs, *args, **kwargs):
        original(objs, *args, **kwargs)
        raise RuntimeError("disk full")

    monkeypatch.setattr(Summary.objects, "bulk_create", failing_bulk_create)
    with pytest.raises(RuntimeError):
        store.dataset_import(name="demo", records=bigger)
    with pytest.raises(RuntimeError):
        store.dataset_import(name="fresh", records=bigger)
    assert snapshot() == before


def test_summary_for_unknown_document_rolls_back(tmp_path):
    before = snapshot()
    records = DatasetRecords(
        documents=[DocumentRecord("d1", "h", "b")],
        readers=[ReaderRecord("u1")],
        summaries=[SummaryRecord("d1", "u1", "user", "t"), SummaryRecord("d2", "u1", "user", "t")],
    )
    with pytest.raises(ImporterError, match='unknown document "d2" in dataset "demo"'):
        store.dataset_import(name="demo", records=records)
    assert snapshot() == before


def test_duplicate_records_are_refused():
    records = DatasetRecords(documents=[DocumentRecord("d1", "h", "b"), DocumentRecord("d1", "h", "b")])
    with pytest.raises(ImporterError, match="duplicate document 'd1'"):
        store.dataset_import(name="demo", records=records)


def test_missing_dataset_when_not_creating():
    with pytest.raises(ImporterError, match='dataset "nope" does not exist'):
        store.dataset_import(name="nope", records=DatasetRecords(), create_dataset=False)
    with pytest.raises(ImporterError, match='dataset "nope" does not exist'):
        store.dataset_keys(name="nope")
    assert not Dataset.objects.exists()


def test_dataset_keys(tmp_path):
    store.dataset_import(name="demo", records=consolidated(tmp_path, [doc("d1"), doc("d2", readers=["u3"])]))
    assert store.dataset_keys(name="demo") == ({"d1", "d2"}, {"u1", "u2", "u3"})


@pytest.mark.parametrize("name", ["has space", "", "ü-name", "x" * 101])
def test_invalid_dataset_names(name):
    with pytest.raises(ImporterError, match="invalid dataset name"):
        store.dataset_name_check(name)


def test_dataset_name_from_file():
    assert store.dataset_name_from_file("My Data_v2") == "my-data_v2"
    with pytest.raises(ImporterError, match="--dataset"):
        store.dataset_name_from_file("!!!")


def test_bulk_batches(tmp_path):
    docs = [doc(f"d{i}", readers=[f"u{i % 7}"], systems=["sysA"]) for i in range(1200)]
    result = store.dataset_import(name="big", records=consolidated(tmp_path, docs))
    assert (result.documents.created, result.summaries.created) == (1200, 2400)
    assert store.dataset_import(name="big", records=consolidated(tmp_path, docs)).summaries.unchanged == 2400


def test_key_length_matches_the_model():
    for model, name in [(Document, "external_id"), (Reader, "external_id"), (System, "name"), (Document, "topic")]:
        assert model._meta.get_field(name).max_length == MAX_KEY_LENGTH
