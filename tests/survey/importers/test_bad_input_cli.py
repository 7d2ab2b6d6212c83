"""Bad input to the CLI imports (import_consolidated, import_pens, import_summaries, import_topics,
import_judgments, import_feedback) and metaeval_report: a CommandError naming ``file:line`` (no traceback: a
psycopg DataError or a RecursionError before), nothing stored, on SQLite and PostgreSQL alike. One test per class:
NUL characters, nesting depth, integer range, field length. (Body size is the HTTP API's and the pages' matter:
files have no such limit here.)"""
from __future__ import annotations

import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from metaeval.core.jsonsafe import MAX_JSON_DEPTH
from metaeval.core.options import SEED_MAX
from metaeval.models import JudgmentSet
from survey.models import Dataset
from tests.survey.importers.helpers import NEWS_HEADER, TEST_HEADER, doc, news_row, snapshot, write_jsonl, write_lines

pytestmark = pytest.mark.django_db
FEEDBACK = Path(__file__).resolve().parents[2] / "data" / "feedback" / "axis_evals_small.jsonl"
DEEP = "[" * 50_000 + "]" * 50_000
JUDGMENT = {"case_id": "c1", "criterion": "quality", "model_a": "A", "model_b": "B", "winner": "model_a"}


def fails(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        call_command(*args, stdout=StringIO(), stderr=StringIO())
    return str(info.value)


def _base(tmp_path: Path) -> None:
    """A dataset "base" (for import_summaries), stored before each bad import."""
    call_command("import_consolidated", str(write_jsonl(tmp_path / "base.jsonl", [doc("d1")])), "--dataset", "base",
                 stdout=StringIO())


def _feedback(tmp_path: Path, change) -> Path:
    records = [json.loads(line) for line in FEEDBACK.read_text(encoding="utf-8").splitlines()]
    change(records[1])
    return write_jsonl(tmp_path / "feedback.jsonl", records)


def _raw(path: Path, text: str) -> Path:
    path.write_bytes(text.encode("utf-8"))
    return path


def test_nul_characters(tmp_path):
    """Raw in a CSV, TSV or JSON file (a binary file) and escaped (\\u0000) in a JSON string: file:line."""
    _base(tmp_path)
    before = snapshot()
    news = write_lines(tmp_path / "news.tsv", [NEWS_HEADER, news_row("N1"), news_row("N2", body="a\x00b")])
    test = write_lines(tmp_path / "personalized_test.tsv", [TEST_HEADER, "U1\tN1\tN2\tT2"])
    escaped = doc("d2")
    escaped["m_summary_dict"]["u1"]["sysA"] = "x\x00y"
    cases = [
        (("import_consolidated", str(write_jsonl(tmp_path / "c.jsonl", [doc("d2"), escaped]))),
         'c.jsonl:2: NUL character in "m_summary_dict.u1.sysA"'),
        (("import_consolidated", str(_raw(tmp_path / "r.jsonl", json.dumps(doc("d2")) + "\n\x00\n"))),
         "r.jsonl:2: NUL character (a text file has none: is it a binary file?)"),
        (("import_pens", "--news", str(news), "--test", str(test)), "news.tsv:3: NUL character"),
        (("import_summaries", str(_raw(tmp_path / "s.csv", "doc_id,reader_id,system,text\nd1,u1,sysC,a\x00b\n")),
          "--dataset", "base"), "s.csv:2: NUL character"),
        (("import_summaries", str(write_jsonl(tmp_path / "s.jsonl", [{"doc_id": "d1", "reader_id": "u1",
                                                                       "system": "sysC", "text": "a\x00"}])),
          "--dataset", "base"), 's.jsonl:1: NUL character in "text"'),
        (("import_topics", str(write_jsonl(tmp_path / "t.jsonl", [{"topic": "t1", "sentences": ["a", "b\x00"]}])),
          "--dataset", "topics"), 't.jsonl:1: NUL character in "sentences[1]"'),
        (("import_judgments", "nul", str(_raw(tmp_path / "j.csv", "case_id,criterion,model_a,model_b,winner\n"
                                                                   "c1,quality,A\x00,B,model_a\n"))),
         "j.csv:2: NUL character"),
        (("import_judgments", "nul", str(write_jsonl(tmp_path / "j.jsonl", [JUDGMENT, {**JUDGMENT, "judge": "\x00"}]))),
         'j.jsonl:2: NUL character in "judge"'),
        (("import_feedback", str(_feedback(tmp_path, lambda r: r["summary"].update(policy="p\x00"))),
          "--dataset", "feedback"), 'feedback.jsonl:2: NUL character in "summary.policy"'),
    ]
    for args, message in cases:
        assert message in fails(*args), args
    assert snapshot() == before and not JudgmentSet.objects.exists()


def test_json_nested_too_deeply(tmp_path):
    """A value nested beyond MAX_JSON_DEPTH (Python's decoder raised RecursionError past ~1000 levels)."""
    _base(tmp_path)
    before = snapshot()
    deep_value = doc("d2", category=json.loads("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)))
    too_deep = f"nested deeper than {MAX_JSON_DEPTH} levels"
    cases = [
        (("import_consolidated", str(_raw(tmp_path / "c.jsonl", json.dumps(doc("d2")) + "\n" + DEEP + "\n"))),
         f"c.jsonl:2: {too_deep}"),
        (("import_consolidated", str(write_jsonl(tmp_path / "v.jsonl", [deep_value]))),
         f'v.jsonl:1: {too_deep} at "category'),
        (("import_summaries", str(_raw(tmp_path / "s.jsonl", DEEP + "\n")), "--dataset", "base"),
         f"s.jsonl:1: {too_deep}"),
        (("import_topics", str(_raw(tmp_path / "t.jsonl", DEEP)), "--dataset", "topics"), f"t.jsonl:1: {too_deep}"),
        (("import_judgments", "deep", str(_raw(tmp_path / "j.jsonl", json.dumps(JUDGMENT) + "\n" + DEEP))),
         f"j.jsonl:2: {too_deep}"),
        (("import_feedback", str(_raw(tmp_path / "f.jsonl", FEEDBACK.read_text(encoding="utf-8") + DEEP)),
          "--dataset", "feedback"), f"f.jsonl:{len(FEEDBACK.read_text().splitlines()) + 1}: {too_deep}"),
    ]
    for args, message in cases:
        assert message in fails(*args), args
    assert snapshot() == before and not JudgmentSet.objects.exists()


def test_integers_beyond_their_column(tmp_path):
    """metaeval_report's seed is a bigint column: beyond SEED_MAX it is an argument error (it was an overflow); a
    judgment's run is at most 32767 (a file judge's runs are a smallint column); a number longer than Python
    converts (4300 digits) is a file:line problem (a bare ValueError before)."""
    _base(tmp_path)
    for seed in (str(2**70), str(SEED_MAX + 1), "-1"):
        message = fails("metaeval_report", "--dataset", "base", "--seed", seed, "--unless-exists")
        assert f"argument --seed: '{seed}' is not an integer from 0 to {SEED_MAX}" in message
    header = "case_id,criterion,model_a,model_b,winner,run\n"
    cases = [
        (_raw(tmp_path / "r.csv", header + "c1,quality,A,B,model_a,1\nc2,quality,A,B,model_a,40000\n"),
         "r.csv:3: field \"run\" must be an integer from 1 to 32767, found '40000'"),
        (_raw(tmp_path / "d.csv", header + "c1,quality,A,B,model_a," + "9" * 5000 + "\n"),
         "d.csv:2: field \"run\" must be an integer from 1 to 32767, found '9999999999999999999..."),
        (write_jsonl(tmp_path / "r.jsonl", [{**JUDGMENT, "run": 2**70}]),
         'r.jsonl:1: field "run" must be an integer from 1 to 32767, found 1180591620717411303424'),
        (_raw(tmp_path / "d.jsonl", json.dumps(JUDGMENT) + "\n" + '{"run": ' + "9" * 5000 + "}\n"),
         "d.jsonl:2: invalid JSON: a number of more than 4300 digits"),
    ]
    for path, message in cases:
        assert message in fails("import_judgments", "runs", str(path)), path
    assert not JudgmentSet.objects.exists()


def test_names_longer_than_their_column(tmp_path):
    """Ids, names and topics longer than their column (100 characters): file:line naming the field (a topic id
    was a DataError on PostgreSQL, and stored whole on SQLite)."""
    _base(tmp_path)
    before = snapshot()
    long = "x" * 5_000
    cases = [
        (("import_consolidated", str(write_jsonl(tmp_path / "c.jsonl", [doc(long)]))),
         'c.jsonl:1: field "doc_id" is longer than 100 characters'),
        (("import_summaries", str(write_jsonl(tmp_path / "s.jsonl", [{"doc_id": "d1", "reader_id": "u1",
                                                                       "system": long, "text": "t"}])),
          "--dataset", "base"), 's.jsonl:1: field "system" is longer than 100 characters'),
        (("import_topics", str(write_jsonl(tmp_path / "t.jsonl", [{"topic": "t1", "sentences": ["a", "b"]},
                                                                    {"topic": long, "sentences": ["a", "b"]}])),
          "--dataset", "topics"), 't.jsonl:2: field "topic" is longer than 100 characters'),
        (("import_judgments", long, str(write_jsonl(tmp_path / "j.jsonl", [JUDGMENT]))), "(1 to 100)"),
        (("import_judgments", "judges", str(write_jsonl(tmp_path / "judge.jsonl", [{**JUDGMENT, "judge": long}]))),
         'judge.jsonl:1: field "judge" is longer than 200 characters'),
        (("import_consolidated", str(write_jsonl(tmp_path / "n.jsonl", [doc("d9")])), "--dataset", "n" * 101),
         "longer than 100 characters"),
    ]
    for args, message in cases:
        assert message in fails(*args), args
    assert snapshot() == before and not JudgmentSet.objects.exists()
    assert not Dataset.objects.filter(name="topics").exists()
