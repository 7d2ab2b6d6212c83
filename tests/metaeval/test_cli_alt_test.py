"""``python -m metaeval alt-test``: the rows, the annotators table, the parameters, errors (exit 2)."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import pytest

from tests.metaeval.cli_run import run

COLUMNS = "criterion,judge,epsilon,items,annotators,tested,rejected,omega,rho,verdict"


@pytest.fixture
def judgments(tmp_path):
    """40 cases, three people who err 15 % of the time, a judge that never errs (two runs)."""
    rng = np.random.default_rng(4)
    lines = ["case_id,criterion,model_a,model_b,winner,judge,judge_kind,run"]
    for case in range(40):
        truth = str(rng.choice(["model_a", "model_b"]))
        other = "model_b" if truth == "model_a" else "model_a"
        for person in ("P1", "P2", "P3"):
            lines.append(f"c{case},quality,A,B,{truth if rng.random() < 0.85 else other},{person},human,")
        lines += [f"c{case},quality,A,B,{truth},gpt,llm,1", f"c{case},quality,A,B,{truth},gpt,llm,2"]
    path = tmp_path / "judgments.csv"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_criteria_table(judgments):
    code, out, err = run("alt-test", judgments, "--judge", "gpt")
    assert code == 0 and err == ""
    assert out.splitlines()[0] == COLUMNS
    rows = list(csv.DictReader(io.StringIO(out)))
    assert [(r["criterion"], r["items"], r["tested"], r["verdict"]) for r in rows] == [
        ("quality", "40", "3", "passes"), ("overall", "40", "3", "passes")]
    assert rows[0]["epsilon"] == "0.1" and rows[0]["omega"] == "1.0"


def test_annotators_table_and_parameters(judgments):
    code, out, _ = run("alt-test", judgments, "--judge", "gpt", "--table", "annotators", "--epsilon", "0.2",
                       "--test", "wilcoxon")
    assert code == 0
    assert out.splitlines()[0] == ("criterion,annotator,items,judge_advantage,human_advantage,mean_difference,"
                                   "p_value,rejected")
    assert [r["annotator"] for r in csv.DictReader(io.StringIO(out))] == ["P1", "P2", "P3"] * 2


def test_untested_annotators_are_said(judgments):
    code, out, err = run("alt-test", judgments, "--judge", "gpt", "--min-items", "41")
    assert code == 0
    assert next(csv.DictReader(io.StringIO(out)))["verdict"] == "untested"
    assert "have fewer than 41 items and are not tested" in err


def test_json(judgments):
    code, out, _ = run("alt-test", judgments, "--judge", "gpt", "--format", "json", "--q", "0.1")
    document = json.loads(out)
    assert code == 0 and document["parameters"]["q"] == 0.1
    assert document["advised_epsilon"] == {"experts": 0.2, "skilled": 0.15, "crowd": 0.1}
    assert len(document["annotators"]) == 6


def test_errors(judgments):
    code, _, err = run("alt-test", judgments, "--judge", "gpt", "--min-people", "4")
    assert code == 2 and "4 or more people" in err
    code, _, err = run("alt-test", judgments, "--judge", "gpt", "--epsilon", "1")
    assert code == 2 and "--epsilon must lie in [0, 1)" in err
    code, _, err = run("alt-test", judgments, "--judge", "nobody")
    assert code == 2 and "no valid judgment of judge 'nobody'" in err
    with pytest.raises(SystemExit):
        run("alt-test", judgments, "--judge", "gpt", "--min-items", "1")
