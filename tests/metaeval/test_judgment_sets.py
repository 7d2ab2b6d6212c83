"""Pairwise judgment sets: the all-or-nothing import, and a report run that adds their section (conventions
sec. 17, item 11) with the numbers of the functions that define it, its seed, and its file in the data hash."""
from __future__ import annotations

import gzip
import hashlib

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from metaeval import selectors, services
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.pairwise.games import play
from metaeval.core.pairwise.judgments import judgments_from_bytes
from metaeval.core.pairwise.leaderboard import leaderboard
from metaeval.core.pairwise.report import NoGames, build_pairwise_report
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import JudgmentSet, MetaevalRun
from tests.metaeval.test_views_runs import rate_all

pytestmark = pytest.mark.django_db


def judgment_csv(systems=("SysnameA", "SysnameB", "SysnameC"), cases: int = 12) -> bytes:
    """Judgments where the first system beats the second beats the third most of the time, two criteria."""
    lines = ["case_id,criterion,model_a,model_b,winner,judge_kind"]
    for criterion in ("quality", "personalization"):
        for case in range(cases):
            for i, a in enumerate(systems):
                for b in systems[i + 1:]:
                    winner = "model_a" if case % 4 else "model_b" if case % 8 else "tie"
                    lines.append(f"c{case},{criterion},{a},{b},{winner},human")
    lines.append("c0,quality,SysnameA,SysnameB,invalid,llm")
    return ("\n".join(lines) + "\n").encode()


def test_an_import_stores_the_file_and_its_counts():
    data = judgment_csv()
    stored = services.judgment_set_import(name="prefs-1", data=data, file_name="prefs.csv", description="pilot")
    stored = JudgmentSet.objects.get(pk=stored.pk)
    assert (stored.judgments, stored.invalid, stored.games) == (73, 1, 72)
    assert stored.criteria == ["personalization", "quality", "overall"]
    assert stored.systems == ["SysnameA", "SysnameB", "SysnameC"]
    assert stored.sha256 == hashlib.sha256(data).hexdigest() and gzip.decompress(bytes(stored.content)) == data
    assert selectors.judgment_table(stored) == judgments_from_bytes(data, "prefs.csv")


@pytest.mark.parametrize(("data", "file_name", "error", "message"), [
    (b"case_id,criterion,model_a,model_b,winner\nc1,q,A,A,model_a\nc2,q,A,B,left\n", "bad.csv", ImportFileError,
     'bad.csv:2: field "model_b"'),
    (b'{"case_id": "c1", "criterion": "q", "model_a": "A", "model_b": "B", "winner": "invalid"}\n', "j.jsonl",
     NoGames, r"j\.jsonl: no valid judgment \(1 invalid\)"),
    (b"", "empty.csv", ImportFileError, "empty.csv:1: no judgments"),
])
def test_a_bad_file_stores_nothing_and_says_where(data, file_name, error, message):
    services.judgment_set_import(name="kept", data=judgment_csv(), file_name="kept.csv")
    with pytest.raises(error, match=message):
        services.judgment_set_import(name="new", data=data, file_name=file_name)
    assert list(JudgmentSet.objects.values_list("name", flat=True)) == ["kept"]


def test_names_are_slugs_and_unique():
    services.judgment_set_import(name="one", data=judgment_csv(), file_name="a.csv")
    with pytest.raises(ValueError, match="exists already"):
        services.judgment_set_import(name="one", data=judgment_csv(), file_name="a.csv")
    with pytest.raises(ValueError, match='name "two words": use letters'):
        services.judgment_set_import(name="two words", data=judgment_csv(), file_name="a.csv")
    assert JudgmentSet.objects.count() == 1


def test_the_command_imports_and_reports_errors(tmp_path, capsys):
    good = tmp_path / "good.csv"
    good.write_bytes(judgment_csv())
    call_command("import_judgments", "cmd-set", str(good), "--description", "from the CLI")
    assert "cmd-set: 73 judgments (1 invalid), 72 games" in capsys.readouterr().out
    assert JudgmentSet.objects.get(name="cmd-set").description == "from the CLI"
    bad = tmp_path / "bad.csv"
    bad.write_text("case_id,criterion,model_a,model_b,winner\nc1,q,A,B,nobody\n")
    with pytest.raises(CommandError, match='bad.csv:2: field "winner"'):
        call_command("import_judgments", "bad-set", str(bad))
    with pytest.raises(CommandError, match="exists already"):
        call_command("import_judgments", "cmd-set", str(good))
    assert JudgmentSet.objects.count() == 1


def _report(study, judgment_set, seed=3) -> MetaevalRun:
    run = services.run_enqueue(
        dataset=study.dataset, study=study, options=RunOptions(measures=["rouge_l"], aux=["rouge_l"]), kind="report",
        seed=seed, report={"n_boot": 40, "n_permutations": 10, "stability_samples": 2}, judgment_set=judgment_set,
    )
    services.run_launch(run)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def test_a_report_run_adds_the_pairwise_section(study):
    rate_all(study, participants=2)
    data = judgment_csv()
    judgment_set = services.judgment_set_import(name="prefs", data=data, file_name="prefs.csv")
    run = _report(study, judgment_set)
    plain = _report(study, None)
    assert "pairwise" not in plain.report and "pairwise_ratings" not in plain.report["tables"]
    section = run.report["pairwise"]
    table = judgments_from_bytes(data, "prefs.csv")
    expected = build_pairwise_report(table, seed=3 + services.PAIRWISE_SEED_OFFSET, n_boot=40)
    assert section["ratings"] == expected["ratings"]
    rank_keys = ("rank", "rank_best", "rank_worst")  # the report adds each system's rank range (issue 31)
    assert [{k: v for k, v in row.items() if k not in rank_keys} for row in section["ratings"]] \
        == leaderboard(play(table.judgments), n_boot=40, seed=10).rows
    assert all(row["rank_best"] <= row["rank"] <= row["rank_worst"] for row in section["ratings"])
    for name in ("wtl", "win_fraction", "consistency", "judgments", "parameters"):
        assert section[name] == expected[name], name
    for name, rows in expected["tables"].items():
        assert run.report["tables"][name] == rows, name
    # the judgment file is part of the data: same ratings, different hash
    assert run.data_hash != plain.data_hash
    again = services.run_repeat(run)
    services.run_launch(again)
    again.refresh_from_db()
    assert again.judgment_set == judgment_set and again.data_hash == run.data_hash
    assert again.report["pairwise"] == section


def test_judgments_need_a_report_run_and_are_protected(study):
    judgment_set = services.judgment_set_import(name="prefs", data=judgment_csv(), file_name="prefs.csv")
    with pytest.raises(ValueError, match="pairwise judgments go with a full report"):
        services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]),
                             judgment_set=judgment_set)
    assert not MetaevalRun.objects.exists()
    services.run_enqueue(dataset=study.dataset, options=RunOptions(measures=["rouge_l"]), kind="report",
                         judgment_set=judgment_set)
    from django.db.models import ProtectedError

    with pytest.raises(ProtectedError):
        judgment_set.delete()
