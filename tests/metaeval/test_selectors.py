"""metaeval.selectors: the database as core types, the same as the file loaders give."""
from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError

from metaeval import selectors
from metaeval.core.io.corpus import REFERENCE
from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.models import MetaevalRun
from survey import services
from survey.importers import store
from survey.importers.consolidated import parse_consolidated
from survey.models import REFERENCE_SYSTEM, Dataset, Document, Reader, Summary, System
from survey.selectors import ratings_export_rows
from tests.conftest import build_dataset, build_study
from tests.metaeval.core.io.test_loaders import record

pytestmark = pytest.mark.django_db


# neither documents, readers nor systems in sorted order: the corpus must keep the file's order
RECORDS = [
    record("N2", ("R9", "R1", "R5"), ("SysB", "SysA")),
    record("N1", ("R2", "R9"), ("SysC", "SysA")),
    record("N10", ("R5", "R2"), ("SysB", "SysD")),
]


def view(corpus):
    return [(d.doc_id, d.headline, d.body, list(d.summaries.items())) for d in corpus.documents], corpus.systems


def test_reference_names_agree():
    assert REFERENCE == REFERENCE_SYSTEM == "user"


def test_imported_dataset_converts_like_the_file(tmp_path):
    path = tmp_path / "data.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in RECORDS) + "\n", encoding="utf-8")
    store.dataset_import(name="ordered", records=parse_consolidated(path, missing="error"))
    from_db = selectors.corpus_from_dataset(dataset=Dataset.objects.get(name="ordered"))
    assert view(from_db) == view(load_corpus(path))
    assert [d.doc_id for d in from_db.documents] == ["N2", "N1", "N10"]
    assert from_db.documents[0].readers == ["R9", "R1", "R5"]
    assert from_db.systems == ("SysB", "SysA", "SysC", "SysD")


def test_readers_in_summary_import_order_and_ids_are_strings():
    dataset = build_dataset(name="small", docs=2, readers=2, systems=["SysnameA"])
    first, second = Reader.objects.filter(dataset=dataset).order_by("pk")
    doc = Document.objects.create(dataset=dataset, external_id="42", headline="H", body="B")
    user, system = System.objects.get(name="user"), System.objects.get(name="SysnameA")
    # the later-created reader's summaries are imported first: it comes first
    Summary.objects.create(document=doc, reader=second, system=user, text="u2")
    Summary.objects.create(document=doc, reader=first, system=system, text="s1")
    Summary.objects.create(document=doc, reader=first, system=user, text="u1")
    Summary.objects.create(document=doc, reader=second, system=system, text="s2")
    Document.objects.create(dataset=dataset, external_id="7", headline="", body="no summaries")
    build_dataset(name="other", docs=1, readers=2, systems=["SysnameA"])  # never mixed in

    corpus = selectors.corpus_from_dataset(dataset=dataset)
    assert [d.doc_id for d in corpus.documents] == ["N0", "N1", "42", "7"]
    assert corpus.systems == ("SysnameA",)
    added = corpus.document("42")
    assert added.readers == [second.external_id, first.external_id]
    assert added.summaries[second.external_id] == {"user": "u2", "SysnameA": "s2"}
    assert (added.headline, added.body, added.text) == ("H", "B", "H B")
    assert corpus.document("7").summaries == {}
    n0 = corpus.document("N0")
    assert n0.readers == ["R0", "R1"] and n0.summary("R1", "user") == "gold headline 0 written by reader R1"
    assert corpus.source == "dataset small"


def rate(study, value_for):
    participant = services.participant_register(study=study)
    assignment = services.assignment_claim(participant=participant)
    values = {e["key"]: str(value_for(i)) for i, e in enumerate(assignment.presentation)}
    services.ratings_submit(assignment_public_id=assignment.public_id, participant=participant, values=values)


def test_ratings_for_study_maps_the_export_rows(study, tmp_path):
    rate(study, lambda i: 1 + i % 6)
    rate(study, lambda i: 6 - i % 6)
    other = build_study(study.dataset, slug="other")
    rate(other, lambda i: 3)
    table = selectors.ratings_for_study(study=study)
    rows = list(ratings_export_rows(study=study))
    assert len(table) == len(rows) > 0
    for rating, row in zip(table.rows, rows, strict=True):
        assert (rating.doc_id, rating.system, rating.uid1, rating.uid2, rating.rating, rating.rater) == (
            row["doc_id"], row["system"], row["uid1"], row["uid2"], float(row["rating"]), row["rater"]
        )
    assert "user" in {r.system for r in table.rows}
    assert (table.scale_min, table.scale_max) == (1, 6) and table.source == f"study {study.slug}"
    # the same as the export CSV read by the CLI's loader
    path = tmp_path / "ratings.csv"
    path.write_text("doc_id,system,uid1,uid2,rating,rater\n" + "".join(
        f"{r['doc_id']},{r['system']},{r['uid1']},{r['uid2']},{r['rating']},{r['rater']}\n" for r in rows
    ))
    assert [(r.doc_id, r.system, r.uid1, r.uid2, r.rating, r.rater) for r in load_ratings(path).rows] == [
        (r.doc_id, r.system, r.uid1, r.uid2, r.rating, r.rater) for r in table.rows
    ]


def test_one_rating_scale_and_studies_with_other_labels_are_refused(study):
    """The scale is 1..6 everywhere (ratings' constraint, questionnaire, HJ distance); scale_labels must match it."""
    assert selectors.study_scale(study=study) == (1, 6)
    assert len(selectors.ratings_for_study(study=study)) == 0
    study.full_clean()
    for labels, words in [
        (["no", "a bit", "mostly", "yes"], "must have exactly 6 labels, one per rating from 1 to 6"),
        ([f"l{i}" for i in range(7)], "must have exactly 6 labels"),
        (["a", "b", "c", "d", "e", " "], "must be a list of 6 non-empty labels"),
        ("1-6", "must be a list of 6 non-empty labels"),
    ]:
        study.scale_labels = labels
        with pytest.raises(ValidationError) as caught:
            study.full_clean()
        assert words in str(caught.value.message_dict["scale_labels"])


def test_data_hash_changes_with_any_text_or_rating(dataset):
    corpus = selectors.corpus_from_dataset(dataset=dataset)
    before = selectors.data_hash(corpus=corpus)
    assert before == selectors.data_hash(corpus=selectors.corpus_from_dataset(dataset=dataset))
    assert len(before) == 64
    Summary.objects.filter(pk=Summary.objects.order_by("pk").last().pk).update(text="changed")
    assert selectors.data_hash(corpus=selectors.corpus_from_dataset(dataset=dataset)) != before


def test_run_list_and_get(dataset, study):
    first = MetaevalRun.objects.create(dataset=dataset, status=MetaevalRun.Status.DONE)
    second = MetaevalRun.objects.create(dataset=dataset, study=study, status=MetaevalRun.Status.FAILED)
    assert list(selectors.run_list()) == [second, first]
    assert list(selectors.run_list(study=study)) == [second]
    assert list(selectors.run_list(dataset=dataset, status="done")) == [first]
    assert selectors.run_get(pk=first.pk) == first
    with pytest.raises(MetaevalRun.DoesNotExist):
        selectors.run_get(pk=second.pk + 1000)
