"""export_ratings: the conventions-doc layout, both formats, unknown study."""
from __future__ import annotations

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command

from survey import services
from survey.selectors import EXPORT_COLUMNS
from tests.conftest import build_study

pytestmark = pytest.mark.django_db


def rate_one(study, value_for):
    p = services.participant_register(study=study)
    a = services.assignment_claim(participant=p)
    values = {e["key"]: str(value_for(i)) for i, e in enumerate(a.presentation)}
    services.ratings_submit(assignment_public_id=a.public_id, participant=p, values=values)
    return a


def test_csv_layout_and_values(study, tmp_path):
    a = rate_one(study, lambda i: 1 + i)
    out = tmp_path / "r.csv"
    call_command("export_ratings", "--format", "csv", "--study", study.slug, "--out", str(out))
    lines = out.read_text().splitlines()
    assert lines[0] == ",".join(EXPORT_COLUMNS)
    assert lines[0].startswith("doc_id,system,uid1,uid2,rating,rater,study,questionnaire")
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    by_key = {(r["system"]): r for r in rows}
    for position, entry in enumerate(a.presentation):
        item = a.questionnaire.items.get(pk=entry["item"])
        row = by_key[item.system.name]
        assert row["rating"] == str(1 + position)
        assert row["shown_position"] == str(position) and row["swapped"] == str(int(entry["swap"]))
        assert (row["doc_id"], row["uid1"], row["uid2"]) == (
            a.questionnaire.document.external_id, a.questionnaire.reader_j.external_id,
            a.questionnaire.reader_k.external_id)
        assert row["rater"] == f"P{a.participant_id}" and row["study"] == study.slug
    assert "user" in by_key


def test_jsonl_to_stdout_and_unfinished_work_not_exported(study):
    rate_one(study, lambda i: 6)
    services.assignment_claim(participant=services.participant_register(study=study))  # claimed, not done
    out = io.StringIO()
    call_command("export_ratings", "--format", "jsonl", stdout=out, stderr=io.StringIO())
    records = [json.loads(line) for line in out.getvalue().splitlines()]
    assert len(records) == 6 and {r["rating"] for r in records} == {6}
    assert list(records[0])[:5] == ["doc_id", "system", "uid1", "uid2", "rating"]


def test_export_filters_by_study(dataset):
    s1 = build_study(dataset, slug="s1")
    s2 = build_study(dataset, slug="s2")
    rate_one(s1, lambda i: 2)
    rate_one(s2, lambda i: 5)
    out = io.StringIO()
    call_command("export_ratings", "--study", "s2", stdout=out, stderr=io.StringIO())
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert {r["study"] for r in rows} == {"s2"} and {r["rating"] for r in rows} == {"5"}


def test_unknown_study_is_a_clear_error(study):
    with pytest.raises(CommandError, match="unknown study 'nope'"):
        call_command("export_ratings", "--study", "nope")


def test_csv_cells_that_look_like_formulas_are_written_as_text_and_read_back(study, tmp_path):
    """A document id like ``=HYPERLINK(...)`` would run in a spreadsheet: the CSV writes it with a leading ``'``
    (JSON Lines keep it as it is), and the ratings reader removes that ``'`` again."""
    from metaeval.core.io.loaders import load_ratings
    from survey.models import Document, Reader

    formula = '=HYPERLINK("http://evil.example","x")'
    Document.objects.filter(dataset=study.dataset, external_id="N0").update(external_id=formula)
    for document in Document.objects.filter(dataset=study.dataset).exclude(external_id=formula):
        document.external_id = "-" + document.external_id
        document.save()
    for reader in Reader.objects.filter(dataset=study.dataset):
        reader.external_id = "@" + reader.external_id
        reader.save()
    rate_one(study, lambda i: 1 + i % 6)
    out = tmp_path / "r.csv"
    call_command("export_ratings", "--format", "csv", "--study", study.slug, "--out", str(out))
    rows = list(csv.DictReader(io.StringIO(out.read_text())))
    cells = {row[column] for row in rows for column in ("doc_id", "uid1", "uid2")}
    assert all(cell.startswith("'") for cell in cells)
    assert not any(cell.startswith(("=", "+", "-", "@")) for cell in cells)
    read = {value for row in load_ratings(out).rows for value in (row.doc_id, row.uid1, row.uid2)}
    assert read == {cell.removeprefix("'") for cell in cells}
    jsonl = tmp_path / "r.jsonl"
    call_command("export_ratings", "--format", "jsonl", "--study", study.slug, "--out", str(jsonl))
    assert formula in {json.loads(line)["doc_id"] for line in jsonl.read_text().splitlines()}
