"""``python -m metaeval judge`` end to end against a local stub server, then ``pairwise`` on its output."""
from __future__ import annotations

import csv
import io
import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

from metaeval.core.judges.prompts import DEFAULT_TEMPLATES, templates_sha256
from metaeval.core.pairwise.judgments import load_judgments
from tests.metaeval.cli_run import run
from tests.metaeval.core.judges.stub_server import Stub

KEY = "sk-cli-secret-456"
HEADER = "case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,doc_id,reader_id,raw,error,seconds"
CRITERIA = ("quality", "relevance", "personalization")


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub()
    yield server
    server.close()


@pytest.fixture
def cases(tmp_path: Path) -> Path:
    rows = [
        {"case_id": "c1", "model_a": "good", "model_b": "bad", "text_a": "GOOD one", "text_b": "BAD one",
         "context": "headline 1", "examples": ["past text"], "doc_id": "d1", "reader_id": "r1"},
        {"case_id": "c2", "model_a": "bad", "model_b": "good", "text_a": "BAD two", "text_b": "GOOD two",
         "context": "headline 2", "examples": ["past", "texts"], "doc_id": "d2", "reader_id": "r2"},
        {"case_id": "c3", "model_a": "good", "model_b": "mid", "text_a": "GOOD three", "text_b": "BAD three",
         "context": "headline 3", "examples": ["more"], "doc_id": "d3", "reader_id": "r1"},
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def judge_args(stub: Stub, cases: Path, out: Path, *extra: str) -> list[str]:
    return ["judge", str(cases), "--judge", "openai", "--base-url", stub.url, "--model", "stub-llm",
            "--api-key-env", "CLI_JUDGE_KEY", "--runs", "4", "--timeout", "5", "--backoff", "0", "--out", str(out),
            *extra]


def test_judge_then_pairwise(stub, cases, tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_JUDGE_KEY", KEY)
    out = tmp_path / "judgments.csv"
    code, stdout, err = run(*judge_args(stub, cases, out))
    assert code == 0, err
    assert "wrote 36 judgments" in err and "0 invalid" in err
    text = out.read_text(encoding="utf-8")
    assert text.splitlines()[0] == HEADER
    rows = list(csv.DictReader(io.StringIO(text)))
    assert len(rows) == 3 * len(CRITERIA) * 4 == len(stub.requests)
    for row in rows:
        assert row[row["winner"]] == "good"  # the stub always prefers the GOOD text, in either order
        assert row["judge"] == "stub-llm" and row["judge_kind"] == "llm" and row["raw"] in ("A", "B")
    sides = Counter((r["case_id"], r["criterion"], r["shown_first"]) for r in rows)
    assert set(sides.values()) == {2} and len(sides) == 3 * 3 * 2
    assert all(r["headers"]["Authorization"] == f"Bearer {KEY}" for r in stub.requests)
    table = load_judgments(out)
    assert len(table.judgments) == 36 and table.invalid == 0 and table.judgments[0].run == 1
    meta = json.loads((tmp_path / "judgments.csv.meta.json").read_text(encoding="utf-8"))
    assert KEY not in json.dumps(meta) and KEY not in text and KEY not in err
    assert meta["judge"]["api_key_env"] == "CLI_JUDGE_KEY" and meta["judge"]["model"] == "stub-llm"
    assert meta["templates_sha256"] == templates_sha256(DEFAULT_TEMPLATES)
    assert meta["criteria"] == list(CRITERIA) and meta["runs"] == 4 and meta["status"] == "finished"
    assert meta["counts"]["judgments"] == 36 and meta["counts"]["invalid"] == 0
    code, stdout, err = run("pairwise", str(out), "--seed", "1", "--n-boot", "20", "--table", "wtl")
    assert code == 0, err
    wtl = {(r["criterion"], r["model_a"], r["model_b"]): r for r in csv.DictReader(io.StringIO(stdout))}
    assert wtl[("quality", "good", "bad")]["win"] == "100.0" and wtl[("quality", "good", "bad")]["cases"] == "2"
    assert wtl[("overall", "good", "mid")]["wins"] == "3"


def test_invalid_answers_and_failed_calls_are_recorded(stub, cases, tmp_path):
    stub.script.extend([("answer", "I cannot tell"), ("status", 500, {}, "down"), ("status", 500, {}, "down")])
    out = tmp_path / "j.csv"
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality", "--concurrency", "1",
                                   "--retries", "0", "--api-key-env", ""))
    assert code == 0, err
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert [r["winner"] for r in rows[:3]] == ["invalid", "invalid", "invalid"]
    assert rows[0]["raw"] == "I cannot tell" and rows[0]["error"] == ""
    assert rows[1]["error"] == "1 attempt failed; last: HTTP 500: down"
    meta = json.loads(Path(str(out) + ".meta.json").read_text(encoding="utf-8"))
    assert meta["counts"]["invalid"] == 3 and meta["counts"]["call_errors"] == 2
    assert meta["this_session"] == {"written": 12, "skipped": 0, "call_errors": 2}


def test_resume_skips_done_and_refuses_other_settings(stub, cases, tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_JUDGE_KEY", KEY)
    out = tmp_path / "j.csv"
    assert run(*judge_args(stub, cases, out, "--criteria", "quality"))[0] == 0
    lines = out.read_text(encoding="utf-8").splitlines(keepends=True)
    # as if killed: five judgments written, the sixth cut off mid-line
    out.write_text("".join(lines[:6]) + lines[6][:10], encoding="utf-8")
    stub.requests.clear()
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality"))
    assert code == 2 and "exists; pass --resume" in err
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality", "--resume"))
    assert code == 0, err
    assert "wrote 7 judgments" in err and "5 already there" in err and len(stub.requests) == 7
    table = load_judgments(out)
    keys = [(j.case_id, j.run) for j in table.judgments]
    assert len(keys) == len(set(keys)) == 12
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality", "--resume"))
    assert code == 0 and "wrote 0 judgments" in err and "12 already there" in err
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality", "--resume", "--temperature", "1"))
    assert code == 2 and "--resume with other judge" in err
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality", "--resume", "--runs", "6"))
    assert code == 2 and "runs" in err


def test_usage_errors(stub, cases, tmp_path, monkeypatch):
    out = tmp_path / "j.csv"
    monkeypatch.delenv("CLI_JUDGE_KEY", raising=False)
    code, _, err = run(*judge_args(stub, cases, out))
    assert code == 2 and "environment variable CLI_JUDGE_KEY is not set" in err
    code, _, err = run(*judge_args(stub, cases, out, "--runs", "3", "--api-key-env", ""))
    assert code == 2 and "must be even" in err
    code, _, err = run(*judge_args(stub, cases, out, "--criteria", "quality,fluency", "--api-key-env", ""))
    assert code == 2 and "no template for the criterion fluency" in err
    code, _, err = run("judge", str(cases), "--judge", "transformers", "--model-path", str(tmp_path))
    assert code == 2 and "not a model folder" in err
    code, _, err = run("judge", str(cases), "--judge", "openai", "--model", "m")
    assert code == 2 and "--base-url: required for the openai judge" in err
    templates = tmp_path / "t.json"
    templates.write_text(json.dumps({"quality": {"system": "", "user": "{first} vs {second}: {stars}"}}),
                         encoding="utf-8")
    code, _, err = run(*judge_args(stub, cases, out, "--templates", str(templates), "--criteria", "quality"))
    assert code == 2 and "unknown placeholder {stars}" in err
    assert not out.exists() and not stub.requests


def test_custom_templates_are_hashed(stub, cases, tmp_path):
    templates = tmp_path / "t.json"
    templates.write_text(json.dumps({"quality": {"system": "Be brief.", "user": "1: {first}\n2: {second}\nA or B?"}}),
                         encoding="utf-8")
    out = tmp_path / "j.csv"
    code, _, err = run(*judge_args(stub, cases, out, "--templates", str(templates), "--criteria", "quality",
                                   "--api-key-env", "", "--runs", "2", "--concurrency", "1"))
    assert code == 0, err
    assert stub.requests[0]["json"]["messages"] == [{"role": "system", "content": "Be brief."},
                                                    {"role": "user", "content": "1: GOOD one\n2: BAD one\nA or B?"}]
    meta = json.loads(Path(str(out) + ".meta.json").read_text(encoding="utf-8"))
    assert meta["templates_sha256"] != templates_sha256(DEFAULT_TEMPLATES) and meta["templates"] == str(templates)


def test_transformers_judge(cases, tmp_path):
    from tests.metaeval.core.judges.test_transformers_local import tiny_gpt2

    model = tiny_gpt2(tmp_path / "tiny")
    out = tmp_path / "j.csv"
    argv = ["judge", str(cases), "--judge", "transformers", "--model-path", str(model), "--criteria",
            "quality,relevance", "--runs", "2", "--seed", "3", "--temperature", "0.7", "--out"]
    code, _, err = run(*argv, str(out))
    assert code == 0, err
    rows = list(csv.DictReader(out.open(encoding="utf-8")))
    assert len(rows) == 3 * 2 * 2 and all(r["raw"] and r["judge"] == "tiny" for r in rows)
    assert load_judgments(out).judgments[-1].run == 2
    meta = json.loads(Path(str(out) + ".meta.json").read_text(encoding="utf-8"))
    assert meta["judge"]["kind"] == "transformers" and meta["judge"]["seed"] == 3
    again = tmp_path / "k.csv"
    assert run(*argv, str(again))[0] == 0
    assert [r["raw"] for r in csv.DictReader(again.open(encoding="utf-8"))] == [r["raw"] for r in rows]
