"""``python -m metaeval surrogates`` end to end: build from the hand-made axis-evals fixture, score the built dataset
with rouge_l, then the OpenAI HJ variant (``score --feedback-ratings --aux rouge_l``) and ``correlate``
(docs/conventions.md sec. 25)."""
from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from metaeval.cli import build_parser
from tests.metaeval.cli_run import run

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "feedback" / "axis_evals_small.jsonl"
A, B = "sup4_ppo_rm3_kl10", "sup4_6b_ppo_rm4_6b_kl14"


def rows_of(path: Path) -> list[dict[str, str]]:
    return list(csv.DictReader(path.open(encoding="utf-8")))


def test_registered_after_probes() -> None:
    choices = list(build_parser()._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert choices.index("surrogates") == choices.index("probes") + 1


def test_build_score_and_hj_openai_end_to_end(tmp_path: Path) -> None:
    out = tmp_path / "built" / "dataset.jsonl"
    code, printed, err = run("surrogates", str(FIXTURE), "--axis", "overall", "--out", str(out))
    assert code == 0, err
    assert "articles: 4 read, 3 kept, dropped: 1 too_few_annotators" in printed
    assert "score with --missing drop" in printed
    report = json.loads((tmp_path / "built" / "dataset.jsonl.report.json").read_text(encoding="utf-8"))
    assert report["totals"]["articles_kept"] == 3 and report["axis"] == "overall"
    ratings = tmp_path / "built" / "dataset.jsonl.ratings.csv"
    assert ratings.read_text(encoding="utf-8").splitlines()[0] == "doc_id,reader,system,rating,gold_mean,scale_max"

    scores = tmp_path / "scores.csv"
    code, _, err = run("score", str(out), "--measures", "rouge_l", "--missing", "drop", "--no-cache",
                       "--out", str(scores))
    assert code == 0, err
    automatic = rows_of(scores)
    assert {row["measure"] for row in automatic} == {"rouge_l"} and len(automatic) == 4

    code, _, err = run("score", str(out), "--missing", "drop", "--no-cache", "--feedback-ratings", str(ratings),
                       "--aux", "rouge_l", "--out", str(scores))
    assert code == 0, err
    rows = {(row["system"], row["measure"]): row for row in rows_of(scores)}
    assert {measure for _, measure in rows} == {"rouge_l", "hj-openai:rouge_l"}
    hj = rows[(A, "hj-openai:rouge_l")]
    # accuracy = pooled |r - gold mean| / 6 over the readers: a1 (7, 3), a2 (7, 2), t3_x1 (7, 6), gold means 7
    assert float(hj["accuracy"]) == pytest.approx((0 + 4 + 0 + 5 + 0 + 1) / 6 / 6, abs=1e-15)
    assert (hj["documents"], hj["readers"], hj["rows"], hj["rated_pairs"]) == ("3", "6", "6", "6")
    # every gold mean is 7 (gold-min 7): sigma(u_j, u_k) = 0, so X = 0 and p = 1e-5 / (Y + 1e-5) unless Y = 0;
    # for B the a2 annotators rated 7 and 7 (Y = 0, p = 1), a1 7 vs 4 and t3_x1 6 vs 7 (p ~ 0)
    assert float(rows[(B, "hj-openai:rouge_l")]["degress"]) == pytest.approx(1 / 3, abs=1e-4)

    code, grid, err = run("correlate", str(scores))
    assert code == 0, err
    cells = list(csv.DictReader(io.StringIO(grid)))
    assert [(cell["auto_measure"], cell["hj_measure"], cell["n"]) for cell in cells] == [
        ("rouge_l", "hj-openai:rouge_l", "4")]


def test_options_and_errors(tmp_path: Path) -> None:
    out = tmp_path / "d.jsonl"
    code, printed, err = run("surrogates", str(FIXTURE), "--out", str(out), "--policy-pattern", "ppo",
                             "--gold-from", "kept", "--separator", r"\n", "--report", str(tmp_path / "r.json"),
                             "--ratings-out", str(tmp_path / "r.csv"))
    assert code == 0, err
    assert f"systems: {B}, {A}; filtered out: ref, sup4_6b" in printed
    assert (tmp_path / "r.json").exists() and (tmp_path / "r.csv").exists()
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert "\n" in first["m_summary_dict"]["w2"][A]
    code, _, err = run("surrogates", str(FIXTURE), "--out", str(out), "--duplicates", "error")
    assert code == 2 and 'axis_evals_small.jsonl:17: field "summary.policy"' in err
    code, _, err = run("surrogates", str(FIXTURE), "--out", str(out), "--gold-min", "9")
    assert code == 2 and "gold_min must lie in 1..7" in err
    code, _, err = run("surrogates", str(FIXTURE), "--out", str(out), "--axis", "fluency")
    assert code == 2 and 'axis_evals_small.jsonl:1: field "summary.axes.fluency" is missing' in err
    code, _, err = run("score", str(out), "--feedback-ratings", str(tmp_path / "r.csv"), "--feedback-scale-max", "5",
                       "--missing", "drop", "--no-cache")
    assert code == 2 and 'r.csv:2: field "scale_max": 7 differs from 5' in err  # the file says 7


def test_a_full_report_of_the_openai_variant(tmp_path: Path) -> None:
    """``report --full --feedback-ratings``: the hj-openai rows are the human side of the correlations, their
    numbers equal ``score``'s, and the page-facing names say which variant it is."""
    from metaeval.core.display import measure_name

    out = tmp_path / "dataset.jsonl"
    assert run("surrogates", str(FIXTURE), "--out", str(out))[0] == 0
    ratings = tmp_path / "dataset.jsonl.ratings.csv"
    folder = tmp_path / "report"
    code, printed, err = run("report", str(out), "--measures", "rouge_l,jsd", "--missing", "drop", "--no-cache",
                             "--feedback-ratings", str(ratings), "--aux", "rouge_l", "--full", "--seed", "1",
                             "--n-boot", "20", "--n-permutations", "20", "--stability-samples", "2",
                             "--out-dir", str(folder))
    assert code == 0, err
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    assert report["parameters"]["measures"] == ["rouge_l", "jsd"]
    assert report["parameters"]["hj_measures"] == ["hj-openai:rouge_l"]
    assert {(c["auto_measure"], c["hj_measure"]) for c in report["correlations"]} == {
        ("rouge_l", "hj-openai:rouge_l"), ("jsd", "hj-openai:rouge_l")}
    code, _, err = run("score", str(out), "--measures", "rouge_l,jsd", "--missing", "drop", "--no-cache",
                       "--feedback-ratings", str(ratings), "--aux", "rouge_l", "--beta", "1.7",
                       "--out", str(tmp_path / "s.csv"))
    assert code == 0, err
    expected = {(r["system"], r["measure"]): float(r["perseval"]) for r in rows_of(tmp_path / "s.csv")}
    got = {(r["system"], r["measure"]): float(r["perseval"]) for r in rows_of(folder / "scores.csv")}
    assert got == expected and ("ref", "hj-openai:rouge_l") in got
    assert measure_name("hj-openai:rouge_l") == "HJ-OpenAI (ROUGE-L)"
