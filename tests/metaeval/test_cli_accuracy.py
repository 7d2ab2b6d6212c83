"""``python -m metaeval accuracy``: hand-worked shares, the bootstrap of the function that defines it, errors."""
from __future__ import annotations

import csv
import io
import json

import pytest

from metaeval.core.pairwise.accuracy import truth_accuracy
from tests.metaeval.test_cli_consistency import run

HEADER = "case_id,criterion,model_a,model_b,winner\n"
LINES = [
    "c1,quality,gold,xl,model_a",     # agrees
    "c1,quality,xl,xxl,model_b",      # agrees (xxl above xl)
    "c2,quality,xl,gold,model_a",     # disagrees
    "c2,quality,gold,xxl,tie",        # a tie: tie credit
    "c3,quality,gold,other,model_a",  # unranked system: skipped
    "c3,relevance,gold,xl,model_b",   # disagrees
    "c3,relevance,xxl,xl,model_a",    # agrees
    "c4,relevance,gold,xl,invalid",   # left out
]


@pytest.fixture
def judgments(tmp_path) -> str:
    path = tmp_path / "j.csv"
    path.write_text(HEADER + "\n".join(LINES) + "\n", encoding="utf-8")
    return str(path)


def rows(text: str) -> dict[str, dict[str, str]]:
    return {row["criterion"]: row for row in csv.DictReader(io.StringIO(text))}


def test_shares_by_hand_and_the_first_columns(judgments):
    code, out, err = run("accuracy", judgments, "--truth", "gold,xxl,xl", "--seed", "3", "--n-boot", "200")
    assert code == 0, err
    assert out.splitlines()[0] == "criterion,accuracy,ci_low,ci_high,judgments,cases,skipped"
    table = rows(out)
    assert list(table) == ["quality", "relevance", "overall"]
    assert float(table["quality"]["accuracy"]) == 2 / 4  # 1 + 1 + 0 + tie 0
    assert (table["quality"]["judgments"], table["quality"]["cases"], table["quality"]["skipped"]) == ("4", "2", "1")
    assert float(table["relevance"]["accuracy"]) == 1 / 2
    assert float(table["overall"]["accuracy"]) == 3 / 6 and table["overall"]["cases"] == "3"
    half = rows(run("accuracy", judgments, "--truth", "gold,xxl,xl", "--tie-credit", "0.5", "--seed", "3")[1])
    assert float(half["quality"]["accuracy"]) == 2.5 / 4


def test_the_interval_is_the_functions_cluster_bootstrap(judgments):
    code, out, _ = run("accuracy", judgments, "--truth", "gold,xxl,xl", "--criterion", "overall", "--seed", "9",
                       "--n-boot", "500", "--format", "json")
    document = json.loads(out)
    assert code == 0 and document["invalid"] == 1 and document["parameters"]["seed"] == 9
    quads = [tuple(line.split(",")[i] for i in (0, 2, 3, 4)) for line in LINES if not line.endswith("invalid")]
    expected = truth_accuracy(quads, ["gold", "xxl", "xl"], n_boot=500, seed=9)
    (row,) = document["rows"]
    assert (row["accuracy"], row["ci_low"], row["ci_high"]) == (expected.accuracy, expected.low, expected.high)


def test_errors_say_what_is_wrong(judgments):
    code, _, err = run("accuracy", judgments, "--truth", "gold,xxl", "--criterion", "style")
    assert code == 2 and "no criterion 'style'; the file has quality, relevance, overall" in err
    code, _, err = run("accuracy", judgments, "--truth", "other,nobody")
    assert code == 2 and "quality: no judgment compares two systems of the truth ranking" in err
    assert run("accuracy", judgments, "--truth", "gold")[0] == 2  # one system is no ranking
    assert run("accuracy", judgments, "--truth", "gold,gold")[0] == 2
    code, _, err = run("accuracy", judgments, "--truth", "gold,xl", "--tie-credit", "2")
    assert code == 2 and "--tie-credit must lie between 0 and 1" in err
