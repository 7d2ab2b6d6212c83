"""``manage.py import_feedback``: builds the surrogate dataset of the hand-made axis-evals fixture and imports it
(all or nothing; docs/conventions.md sec. 25)."""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from survey.models import Dataset, Document, Summary

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parents[2] / "data" / "feedback" / "axis_evals_small.jsonl"


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def test_import_builds_and_stores(tmp_path: Path) -> None:
    printed = run("import_feedback", str(FIXTURE), "--dataset", "openai-small", "--policy-pattern", "ppo",
                  "--report", str(tmp_path / "report.json"))
    assert "articles: 4 read, 3 kept, dropped: 1 too_few_annotators" in printed
    assert "dataset openai-small (new): 3 documents (3 created" in printed
    dataset = Dataset.objects.get(name="openai-small")
    assert sorted(Document.objects.filter(dataset=dataset).values_list("external_id", flat=True)) == [
        "a1", "a2", "t3_x1"]
    summary = Summary.objects.get(document__dataset=dataset, document__external_id="a1", reader__external_id="w1",
                                  system__name="user")
    assert summary.text == ("Council shuts the river bridge for repairs; traffic moves north. The river bridge "
                            "closes for six weeks of repairs and shops fear fewer visitors.")
    systems = set(Summary.objects.filter(document__dataset=dataset).values_list("system__name", flat=True))
    assert systems == {"user", "sup4_ppo_rm3_kl10", "sup4_6b_ppo_rm4_6b_kl14"}
    report = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert report["policies"]["kept"] == ["sup4_6b_ppo_rm4_6b_kl14", "sup4_ppo_rm3_kl10"]
    again = run("import_feedback", str(FIXTURE), "--dataset", "openai-small", "--policy-pattern", "ppo")
    assert "0 created, 0 updated" in again


def test_errors_write_nothing(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match=r'axis_evals_small.jsonl:17: field "summary.policy"'):
        run("import_feedback", str(FIXTURE), "--dataset", "x", "--duplicates", "error")
    with pytest.raises(CommandError, match="no article kept"):
        run("import_feedback", str(FIXTURE), "--dataset", "x", "--min-annotators", "9")
    with pytest.raises(CommandError, match="file not found"):
        run("import_feedback", str(tmp_path / "missing.jsonl"), "--dataset", "x")
    assert not Dataset.objects.filter(name="x").exists()
