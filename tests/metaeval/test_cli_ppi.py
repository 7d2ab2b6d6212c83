"""``python -m metaeval ppi``: the contract's columns, values equal to ppi-python, alpha, errors (exit 2)."""
from __future__ import annotations

import csv
import io
import json

import numpy as np
import ppi_py
import pytest

from tests.metaeval.cli_run import run
from tests.metaeval.core.judges.hand_items import csv_text

HEADER = ("criterion,system,labeled,unlabeled,human,human_low,human_high,ppi,ppi_low,ppi_high,ppi_plus,"
          "ppi_plus_low,ppi_plus_high")


@pytest.fixture
def judgments(tmp_path):
    path = tmp_path / "judgments.csv"
    path.write_text(csv_text(lengths=False), encoding="utf-8")
    return str(path)


def test_rows_columns_and_values(judgments):
    code, out, err = run("ppi", judgments, "--judge", "gpt", "--alpha", "0.1")
    assert code == 0
    assert out.splitlines()[0].startswith(HEADER + ",")
    rows = {(r["criterion"], r["system"]): r for r in csv.DictReader(io.StringIO(out))}
    overall_a = rows[("overall", "A")]
    assert (overall_a["labeled"], overall_a["unlabeled"]) == ("2", "1")
    low, high = ppi_py.ppi_mean_ci(np.array([1.0, 0.0]), np.array([1.0, 1.0]), np.array([0.5]), alpha=0.1, lam=1)
    assert float(overall_a["ppi_low"]) == pytest.approx(low[0], abs=1e-12)
    assert float(overall_a["ppi_high"]) == pytest.approx(high[0], abs=1e-12)
    assert rows[("quality", "B")]["ppi"] == ""  # no unlabelled item for B: no PPI
    assert "labelled items; overall mean interval width" in err


def test_json(judgments):
    code, out, _ = run("ppi", judgments, "--judge", "gpt", "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["alpha"] == 0.05 and "ppi_plus" in document["conventions"]
    assert {row["criterion"] for row in document["rows"]} == {"quality", "relevance", "overall"}


@pytest.mark.parametrize("alpha", ["1", "1.5"])
def test_alpha_outside_zero_one(judgments, alpha):
    code, out, err = run("ppi", judgments, "--judge", "gpt", "--alpha", alpha)
    assert code == 2 and out == "" and "--alpha must lie strictly between 0 and 1" in err


def test_alpha_zero_is_a_usage_error(judgments):
    with pytest.raises(SystemExit) as caught:
        run("ppi", judgments, "--judge", "gpt", "--alpha", "0")
    assert caught.value.code == 2


def test_nothing_labelled(tmp_path):
    path = tmp_path / "apart.csv"
    path.write_text("case_id,criterion,model_a,model_b,winner,judge,judge_kind\nc1,q,A,B,model_a,P1,human\n"
                    "c2,q,A,B,model_a,gpt,llm\n", encoding="utf-8")
    code, _, err = run("ppi", str(path), "--judge", "gpt")
    assert code == 2 and "nothing is labelled" in err
