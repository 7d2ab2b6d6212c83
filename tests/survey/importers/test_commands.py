"""The three management commands: success output, CommandError, all-or-nothing, idempotency end to end."""
from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from survey.models import Dataset, Document, Reader, Summary, System
from tests.survey.importers.helpers import (
    NEWS_HEADER,
    TEST_HEADER,
    doc,
    news_row,
    snapshot,
    write_jsonl,
    write_lines,
    write_pretty,
)

pytestmark = pytest.mark.django_db


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue().strip()


def fails(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        run(*args)
    assert info.value.returncode == 1
    return str(info.value)


# ------------------------------------------------------------------------------------------- import_consolidated


def test_consolidated_success_and_rerun(tmp_path):
    path = write_jsonl(tmp_path / "My Demo.jsonl", [doc("d1"), doc("d2", category="news")])
    assert run("import_consolidated", str(path)) == (
        "dataset my-demo (new): 2 documents (2 created, 0 updated, 0 unchanged), "
        "2 readers (2 created, 0 updated, 0 unchanged), 3 systems (3 created, 0 updated, 0 unchanged), "
        "12 summaries (12 created, 0 updated, 0 unchanged)"
    )
    assert Document.objects.get(external_id="d2").category == "news"
    counts = (Document.objects.count(), Reader.objects.count(), System.objects.count(), Summary.objects.count())
    second = run("import_consolidated", str(path))
    assert "0 created, 0 updated" in second and "12 summaries (0 created, 0 updated, 12 unchanged)" in second
    assert (Document.objects.count(), Reader.objects.count(), System.objects.count(), Summary.objects.count()) == counts


def test_consolidated_dataset_option_and_pretty_file(tmp_path):
    path = write_pretty(tmp_path / "x.json", [doc("d1")])
    assert run("import_consolidated", str(path), "--dataset", "custom").startswith("dataset custom (new): 1 documents")
    message = fails("import_consolidated", str(path), "--dataset", "bad name")
    assert message.startswith('invalid dataset name "bad name"')


def test_consolidated_bad_record_at_the_end_writes_nothing(tmp_path):
    good = write_jsonl(tmp_path / "demo.jsonl", [doc("d1")])
    run("import_consolidated", str(good))
    before = snapshot()
    bad_last = {**doc("d9"), "m_summary_dict": {"u1": {"user": 3}}}
    bad = write_jsonl(tmp_path / "demo2.jsonl", [doc("d1", systems=["sysA", "sysNew"]), doc("d2"), bad_last])
    message = fails("import_consolidated", str(bad), "--dataset", "demo")
    assert message == (
        'demo2.jsonl:3: field "m_summary_dict" summary of system "user" for reader "u1" must be a string '
        '(doc "d9", found number)'
    )
    assert fails("import_consolidated", str(bad)).startswith("demo2.jsonl:3:")  # a new dataset is not created either
    assert snapshot() == before


def test_consolidated_missing_option(tmp_path):
    record = doc("d1")
    del record["m_summary_dict"]["u2"]["sysB"]
    path = write_jsonl(tmp_path / "demo.jsonl", [record])
    assert fails("import_consolidated", str(path)) == (
        'demo.jsonl:1: reader "u2" has no summary from system "sysB", which other readers of this document have '
        '(doc "d1")'
    )
    assert not Dataset.objects.exists()
    assert "5 summaries (5 created" in run("import_consolidated", str(path), "--missing", "drop")


def test_consolidated_several_problems_in_one_message(tmp_path):
    path = write_jsonl(tmp_path / "demo.jsonl", [doc("d1"), doc("d1"), {**doc("d2"), "doc_text": None}])
    assert fails("import_consolidated", str(path)).split("\n") == [
        'demo.jsonl:2: field "doc_id": duplicate doc_id "d1" (first at line 1, again at line 2)',
        'demo.jsonl:3: field "doc_text" must be a string (doc "d2", found null)',
    ]


def test_missing_files(tmp_path):
    missing = tmp_path / "nope.jsonl"
    assert fails("import_consolidated", str(missing)) == f"file not found: {missing}"
    assert fails("import_consolidated", str(tmp_path)) == f"not a file: {tmp_path}"
    assert fails("import_pens", "--news", str(missing), "--test", str(missing)) == f"file not found: {missing}"
    assert fails("import_summaries", str(missing), "--dataset", "demo") == f"file not found: {missing}"


# ---------------------------------------------------------------------------------------------------- import_pens


def pens_files(tmp_path, users=None):
    news = write_lines(tmp_path / "news.tsv", [NEWS_HEADER] + [news_row(f"N{i}") for i in range(1, 5)])
    users = users or ["U1\tN1 N2\tN2,N1\tT2#TAB#T1", "U2\tN4\tN3\tT3"]
    test = write_lines(tmp_path / "personalized_test.tsv", [TEST_HEADER] + users)
    return str(news), str(test)


def test_pens_success_and_rerun(tmp_path):
    news, test = pens_files(tmp_path)
    assert run("import_pens", "--news", news, "--test", test) == (
        "dataset pens (new): 3 documents (3 created, 0 updated, 0 unchanged), "
        "2 readers (2 created, 0 updated, 0 unchanged), 1 systems (1 created, 0 updated, 0 unchanged), "
        "3 summaries (3 created, 0 updated, 0 unchanged)"
    )
    assert list(Document.objects.values_list("external_id", flat=True)) == ["N2", "N1", "N3"]
    assert Reader.objects.get(external_id="U1").history == ["N1", "N2"]
    assert System.objects.get(name="user").kind == System.Kind.REFERENCE
    before = snapshot()
    assert "3 summaries (0 created, 0 updated, 3 unchanged)" in run("import_pens", "--news", news, "--test", test)
    assert snapshot() == before


def test_pens_dataset_option_and_error(tmp_path):
    news, test = pens_files(tmp_path)
    assert run("import_pens", "--news", news, "--test", test, "--dataset", "pens-test").startswith("dataset pens-test")
    news, test = pens_files(tmp_path, users=["U1\t\tN2,N1\tonly one title"])
    before = snapshot()
    message = fails("import_pens", "--news", news, "--test", test, "--dataset", "pens-test")
    assert message.startswith(
        'personalized_test.tsv:2: field "posnewID" has 2 news ids but field "rewrite_titles" has 1'
    )
    assert snapshot() == before


# ------------------------------------------------------------------------------------------------ import_summaries


def test_summaries_csv_and_jsonl(tmp_path):
    run("import_consolidated", str(write_jsonl(tmp_path / "demo.jsonl", [doc("d1"), doc("d2")])))
    csv_path = tmp_path / "model.csv"
    csv_path.write_text('doc_id,reader_id,system,text\nd1,u1,sysC,"c, for u1"\nd1,u2,sysC,c for u2\n')
    assert run("import_summaries", str(csv_path), "--dataset", "demo", "--kind", "llm") == (
        "dataset demo: 0 documents (0 created, 0 updated, 0 unchanged), 0 readers (0 created, 0 updated, 0 unchanged), "
        "1 systems (1 created, 0 updated, 0 unchanged), 2 summaries (2 created, 0 updated, 0 unchanged)"
    )
    assert System.objects.get(name="sysC").kind == "llm"
    assert Summary.objects.get(system__name="sysC", reader__external_id="u1").text == "c, for u1"
    jsonl = write_jsonl(tmp_path / "model.jsonl", [
        {"doc_id": "d1", "reader_id": "u1", "system": "sysC", "text": "revised"},
        {"doc_id": "d2", "reader_id": "u1", "system": "sysA", "text": "sysA for u1 on d2"},
    ])
    output = run("import_summaries", str(jsonl), "--dataset", "demo")
    assert "2 systems (0 created, 0 updated, 2 unchanged), 2 summaries (0 created, 1 updated, 1 unchanged)" in output
    assert System.objects.get(name="sysC").kind == "llm"  # no --kind: kind kept
    assert Summary.objects.get(system__name="sysC", reader__external_id="u1").text == "revised"


def test_summaries_errors_write_nothing(tmp_path):
    run("import_consolidated", str(write_jsonl(tmp_path / "demo.jsonl", [doc("d1")])))
    before = snapshot()
    path = tmp_path / "model.csv"
    path.write_text("doc_id,reader_id,system,text\nd1,u1,sysC,fine\nd1,u1,sysD,fine\nd7,u9,sysC,x\n")
    assert fails("import_summaries", str(path), "--dataset", "demo").split("\n") == [
        'model.csv:4: unknown doc_id "d7" in dataset "demo"',
        'model.csv:4: unknown reader_id "u9" in dataset "demo"',
    ]
    message = fails("import_summaries", str(path), "--dataset", "other")
    assert message == 'dataset "other" does not exist; import it first'
    path.write_text("doc_id,reader_id,system,text\nd1,u1,user,mine\n")
    assert fails("import_summaries", str(path), "--dataset", "demo").startswith('model.csv:2: field "system" is "user"')
    assert snapshot() == before


def test_summaries_with_prompt_style_variants(tmp_path):
    """iCOPERNICUS outputs: one model in several prompt styles, stored as MODEL:STYLE with the style as variant."""
    run("import_consolidated", str(write_jsonl(tmp_path / "demo.jsonl", [doc("d1")])))
    path = tmp_path / "styles.csv"
    path.write_text("doc_id,reader_id,system,variant,text\nd1,u1,llama,0-shot,zero\nd1,u1,llama,c-0-shot,contrast\n"
                    "d1,u2,llama,,no variant column value\n")
    output = run("import_summaries", str(path), "--dataset", "demo", "--variant", "2-shot-w-hist", "--kind", "llm")
    assert "3 systems (3 created" in output
    stored = {s.name: (s.variant, s.kind) for s in System.objects.filter(name__startswith="llama")}
    assert stored == {"llama:0-shot": ("0-shot", "llm"), "llama:c-0-shot": ("c-0-shot", "llm"),
                      "llama:2-shot-w-hist": ("2-shot-w-hist", "llm")}
    assert Summary.objects.get(system__name="llama:c-0-shot").text == "contrast"
    before = snapshot()
    path.write_text("doc_id,reader_id,system,variant,text\nd1,u1,llama:x,0-shot,a\nd1,u1,llama,a:b,b\n")
    assert fails("import_summaries", str(path), "--dataset", "demo").split("\n") == [
        'styles.csv:2: field "system" may not contain ":" when a variant is given (the stored name is SYSTEM:VARIANT)',
        'styles.csv:3: field "variant" may not contain ":"',
    ]
    assert snapshot() == before


def test_summaries_kind_choices(tmp_path):
    path = tmp_path / "model.csv"
    path.write_text("doc_id,reader_id,system,text\n")
    with pytest.raises(CommandError, match="invalid choice"):
        run("import_summaries", str(path), "--dataset", "demo", "--kind", "reference")


def test_unreadable_json_is_a_command_error(tmp_path):
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(doc("d1"))[:-1])
    assert fails("import_consolidated", str(path)).startswith("demo.json:1: invalid JSON: ")
