"""``python -m metaeval meta-accuracy``: the hand-worked case through the command, the core's rows, the demo data
against ``report``'s correlations, and the errors."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np
import pytest

from metaeval.core.stats.meta_accuracy import DocumentValues, meta_accuracy_rows
from tests.metaeval.cli_run import run

ROOT = Path(__file__).resolve().parents[2]
SYSTEMS = ["A", "B", "C", "D", "E"]
#: per system, two documents; the system value is their mean (human [5, 4, 4, 2, 2], m1 [13, 11, 10, 5, 3]: the
#: hand-worked case of tests/metaeval/core/stats/test_meta_accuracy.py)
DOCS = {
    "m1": [[12, 14], [11, 11], [9, 11], [5, 5], [2, 4]],
    "m2": [[1, 1], [2, 2], [3, 3], [4, 4], [5, 5]],
    "hj:x": [[5, 5], [4, 4], [3, 5], [2, 2], [1, 3]],
}


@pytest.fixture
def files(tmp_path: Path) -> tuple[str, str]:
    scores = ["system,measure,perseval,degress"]
    documents = ["system,measure,doc_id,readers,perseval"]
    for measure, rows in DOCS.items():
        for system, values in zip(SYSTEMS, rows, strict=True):
            scores.append(f"{system},{measure},{sum(values) / 2!r},{-sum(values) / 2!r}")
            documents += [f"{system},{measure},d{k},3,{v}" for k, v in enumerate(values)]
    (tmp_path / "scores.csv").write_text("\n".join(scores) + "\n", encoding="utf-8")
    (tmp_path / "documents.csv").write_text("\n".join(documents) + "\n", encoding="utf-8")
    return str(tmp_path / "scores.csv"), str(tmp_path / "documents.csv")


def table(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_first_columns_and_the_hand_worked_values(files):
    scores, _ = files
    code, out, err = run("meta-accuracy", scores, "--human", "hj:x")
    assert code == 0, err
    assert out.splitlines()[0].startswith("metric,human,pairs,accuracy,acc_eq,epsilon,")
    rows = table(out)
    assert [(r["metric"], r["human"], r["level"]) for r in rows] == [("m1", "hj:x", "system"), ("m2", "hj:x", "system")]
    m1, m2 = rows
    assert (m1["pairs"], float(m1["accuracy"]), float(m1["acc_eq"]), float(m1["epsilon"])) == ("10", 1.0, 0.8, 0.0)
    assert (m1["concordant"], m1["ties_human"], m1["compared"]) == ("8", "2", "8")
    assert float(m2["accuracy"]) == 0.0 and m2["discordant"] == "8"  # m2 orders every pair the other way
    calibrated = table(run("meta-accuracy", scores, "--human", "hj:x", "--metrics", "m1", "--tie-calibration")[1])
    assert len(calibrated) == 1 and (float(calibrated[0]["epsilon"]), float(calibrated[0]["acc_eq"])) == (1.0, 0.9)
    fixed = table(run("meta-accuracy", scores, "--human", "hj:x", "--metrics", "m1", "--epsilon", "2")[1])
    assert (float(fixed[0]["epsilon"]), float(fixed[0]["acc_eq"]), fixed[0]["ties_both"]) == (2.0, 0.9, "2")
    # --value: degress is minus perseval on both sides, so every order is kept
    negated = table(run("meta-accuracy", scores, "--human", "hj:x", "--metrics", "m1", "--value", "degress")[1])
    assert float(negated[0]["accuracy"]) == 1.0 and float(negated[0]["acc_eq"]) == 0.8


def test_documents_add_spa_intervals_and_the_document_row_as_the_core_computes_them(files, tmp_path):
    scores, documents = files
    out_file = tmp_path / "out" / "meta.json"
    code, out, err = run("meta-accuracy", scores, "--human", "hj:x", "--metrics", "m1", "--documents", documents,
                         "--tie-calibration", "--buckets", "0,1.5,inf", "--seed", "7", "--n-boot", "50",
                         "--n-permutations", "64", "--format", "json", "--out", str(out_file))
    assert code == 0 and out == "" and "seed 7, 50 bootstrap rounds, 64 permutations" in err
    document = json.loads(out_file.read_text(encoding="utf-8"))
    assert document["parameters"]["seed"] == 7 and document["parameters"]["buckets"] == [0, 1.5, None]

    def values(measure: str) -> DocumentValues:
        return DocumentValues.of({(s, f"d{k}"): float(v) for s, row in zip(SYSTEMS, DOCS[measure], strict=True)
                                  for k, v in enumerate(row)})

    means = {m: {s: sum(v) / 2 for s, v in zip(SYSTEMS, DOCS[m], strict=True)} for m in ("m1", "hj:x")}
    expected = meta_accuracy_rows("m1", "hj:x", means["m1"], means["hj:x"], metric_documents=values("m1"),
                                  human_documents=values("hj:x"), tie_calibration=True, buckets=[0, 1.5, math.inf],
                                  n_boot=50, n_permutations=64, seed=7)
    rows = document["rows"]
    assert [(r["level"], r["bucket_low"], r["bucket_high"]) for r in rows] == [
        ("system", None, None), ("system", 0.0, 1.5), ("system", 1.5, None), ("document", None, None)]
    for got, want in zip(rows, expected, strict=True):
        for key, value in want.items():
            if isinstance(value, float) and not math.isfinite(value):
                assert got[key] is None, key
            else:
                assert got[key] == value, key
    assert 0 <= rows[0]["spa"] <= 1 and rows[0]["spa_low"] <= rows[0]["spa_high"]
    assert rows[1]["pairs"] + rows[2]["pairs"] == 10


def test_the_demo_data_against_reports_correlations(tmp_path):
    folder = tmp_path / "report"
    code, _, err = run("report", str(ROOT / "fixtures/demo/consolidated.jsonl"), "--ratings",
                       str(ROOT / "fixtures/demo/ratings.csv"), "--measures", "rouge_l,jsd", "--aux", "rouge_l,jsd",
                       "--out-dir", str(folder), "--cache-dir", str(tmp_path / "cache"))
    assert code == 0, err
    code, out, err = run("meta-accuracy", str(folder / "scores.csv"), "--human", "hj:rouge_l", "--documents",
                         str(folder / "documents.csv"), "--tie-calibration", "--seed", "2026", "--n-boot", "100")
    assert code == 0, err
    rows = table(out)
    assert [(r["metric"], r["level"]) for r in rows] == [
        ("rouge_l", "system"), ("rouge_l", "document"), ("jsd", "system"), ("jsd", "document")]
    with open(folder / "correlations.csv", encoding="utf-8") as handle:
        grid = {(r["auto_measure"], r["hj_measure"]): r for r in csv.DictReader(handle)}
    for row in rows:
        if row["level"] == "system":
            assert (row["pairs"], row["systems"], row["documents"]) == ("45", "10", "14")
            for method in ("pearson", "spearman", "kendall"):
                assert float(row[method]) == pytest.approx(float(grid[(row["metric"], "hj:rouge_l")][method]),
                                                           abs=1e-12)
            assert 0 <= float(row["spa"]) <= 1 and float(row["acc_eq_low"]) <= float(row["acc_eq_high"])
        else:
            assert row["documents"] == "14" and int(row["pairs"]) <= 14 * 45
        assert 0 <= float(row["accuracy"]) <= 1 and row["dropped"] == ""


@pytest.mark.parametrize(("extra", "message"), [
    (["--human", "hj:y"], "no measure 'hj:y'; the file has m1, m2, hj:x"),
    (["--human", "hj:x", "--metrics", "m1,m9"], "no measure 'm9'"),
    (["--human", "hj:x", "--value", "egises"], "no column 'egises'"),
    (["--human", "hj:x", "--buckets", "0.5,0.1"], "--buckets: bucket edges must increase strictly"),
    (["--human", "hj:x", "--metrics", "hj:x"], None),
])
def test_errors_name_the_file_and_what_is_wrong(files, extra, message):
    scores, _ = files
    code, out, err = run("meta-accuracy", scores, *extra)
    if message is None:  # the human measure against itself is allowed: every pair agrees
        assert code == 0 and float(table(out)[0]["acc_eq"]) == 1.0
        return
    assert code == 2 and out == "" and err.startswith("error: ") and message in err


def test_bad_input_files(files, tmp_path):
    scores, documents = files
    bad = tmp_path / "bad.csv"
    bad.write_text(Path(scores).read_text(encoding="utf-8").replace("A,m1,13.0", "A,m1,thirteen"), encoding="utf-8")
    code, _, err = run("meta-accuracy", str(bad), "--human", "hj:x")
    assert code == 2 and f"{bad}:2: field 'perseval': 'thirteen' is not a number" in err
    shifted = tmp_path / "shifted.csv"
    shifted.write_text(Path(documents).read_text(encoding="utf-8").replace("B,m1,d0,3,11", "B,m1,d0,3,12"),
                       encoding="utf-8")
    code, _, err = run("meta-accuracy", scores, "--human", "hj:x", "--documents", str(shifted), "--n-boot", "0")
    assert code == 2 and "m1: the per-document values of m1 do not average to its system value for B" in err
    twice = tmp_path / "twice.csv"
    twice.write_text(Path(documents).read_text(encoding="utf-8") + "A,m1,d0,3,12\n", encoding="utf-8")
    code, _, err = run("meta-accuracy", scores, "--human", "hj:x", "--documents", str(twice))
    assert code == 2 and f"{twice}:32: system 'A', measure 'm1', document 'd0' again" in err
    code, _, err = run("meta-accuracy", scores, "--human", "hj:x", "--documents", scores)
    assert code == 2 and "not a per-document file" in err
    code, _, err = run("meta-accuracy", str(tmp_path / "none.csv"), "--human", "hj:x")
    assert code == 2 and "No such file" in err
    with pytest.raises(SystemExit) as stop:
        run("meta-accuracy", scores, "--human", "hj:x", "--tie-calibration", "--epsilon", "1")
    assert stop.value.code == 2


def test_a_system_without_a_value_is_dropped_and_named(files, tmp_path):
    scores, _ = files
    gap = tmp_path / "gap.csv"
    gap.write_text(Path(scores).read_text(encoding="utf-8").replace("E,m1,3.0", "E,m1,nan"), encoding="utf-8")
    rows = table(run("meta-accuracy", str(gap), "--human", "hj:x", "--metrics", "m1")[1])
    assert (rows[0]["pairs"], rows[0]["systems"], rows[0]["dropped"]) == ("6", "4", "E")
    assert np.isclose(float(rows[0]["acc_eq"]), 5 / 6)  # AB AC AD BD CD concordant, BC tied in people only
