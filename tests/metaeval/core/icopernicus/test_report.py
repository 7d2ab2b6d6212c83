"""The report's prompt-probes section: the grid, probe rows and summary of MODEL:STYLE systems on jsd (else the
first measure), and the HJ paradox flags beside the automatic ones."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from metaeval.core.icopernicus.report import probes_section


def s(egises: float) -> SimpleNamespace:
    return SimpleNamespace(egises=egises)


SCORES = {
    "rouge_l": {"m1:0-shot": s(0.9), "m1:2-shot-wo-hist": s(0.1)},
    "jsd": {"m1:0-shot": s(0.40), "m1:2-shot-wo-hist": s(0.38), "m2:0-shot": s(0.30), "m2:2-shot-wo-hist": s(0.30),
            "m2:c-0-shot": s(float("nan")), "plain": s(0.2)},
    "hj:jsd": {"m1:0-shot": s(0.5), "m1:2-shot-wo-hist": s(0.6), "m2:0-shot": s(0.7), "m2:2-shot-wo-hist": s(0.7)},
}


def test_the_section_by_hand():
    found = probes_section(SCORES, ["rouge_l", "jsd", "hj:jsd"])  # type: ignore[arg-type]
    assert found is not None
    section, tables = found
    assert section["measure"] == "jsd" and section["models"] == ["m1", "m2"]
    assert section["styles"] == ["0-shot", "2-shot-wo-hist"]  # the undefined c-0-shot score is left out
    assert [(r["model"], r["probe"], r["paradox"]) for r in section["rows"]] == [("m1", "PX-1", False),
                                                                               ("m2", "PX-1", True)]  # a tie
    assert section["rows"][0]["delta_pp"] == pytest.approx(2.0, abs=1e-12)
    px1 = next(row for row in section["summary"] if row["probe"] == "PX-1")
    assert (px1["models"], px1["paradox_models"], px1["mean_drop_pp"], px1["pass_models"]) == (2, 1, 0.0, 1)
    assert px1["mean_boost_pp"] == pytest.approx(2.0, abs=1e-12)
    # HJ: m1's 0.6 >= 0.5 is a paradox where the automatic flag passes; m2 ties both ways
    assert [(r["model"], r["paradox"], r["paradox_hj"], r["agree"]) for r in section["agreement"]] == [
        ("m1", False, True, False), ("m2", True, True, True)]
    assert set(tables) == {"probe_grid", "probe_rows", "probe_summary", "probe_hj_agreement"}
    assert len(tables["probe_grid"]) == 4


def test_no_styled_system_or_no_jsd():
    assert probes_section({"jsd": {"plain": s(0.2)}}, ["jsd"]) is None  # type: ignore[arg-type]
    found = probes_section({"rouge_l": SCORES["rouge_l"]}, ["rouge_l"])  # type: ignore[arg-type]
    assert found is not None and found[0]["measure"] == "rouge_l" and found[0]["hj_measure"] is None
    assert probes_section(SCORES, ["hj:jsd"]) is None  # type: ignore[arg-type]


def test_adversarial_worsening_in_the_section():
    scores = {"jsd": {"m1:0-shot": s(0.38), "m1:c-0-shot": s(0.40), "m1:c-0-shot-adversarial": s(0.43),
                      "m2:c-0-shot": s(0.5)}}
    found = probes_section(scores, ["jsd"])  # type: ignore[arg-type]
    assert found is not None
    section, tables = found
    assert section["styles"] == ["0-shot", "c-0-shot", "c-0-shot-adversarial"]
    assert [r["probe"] for r in section["rows"]] == ["PX-3"]  # the adversarial style is in no probe
    (row,) = section["adversarial"]
    assert (row["model"], row["probe"], row["style"], row["worsened"], row["a"]) == (
        "m1", "PX-3", "c-0-shot", True, "0-shot")
    assert row["worsening_pp"] == pytest.approx(3.0, abs=1e-12) and row["worsening_pct"] == pytest.approx(7.5)
    assert row["gap_pp"] == pytest.approx(2.0, abs=1e-12) and row["gap_adversarial_pp"] == pytest.approx(5.0)
    assert tables["probe_adversarial"] == section["adversarial"]
    (total,) = tables["probe_adversarial_summary"]
    assert (total["probe"], total["models"], total["worsened_models"]) == ("PX-3", 1, 1)
    assert "probe_hj_agreement" not in tables
