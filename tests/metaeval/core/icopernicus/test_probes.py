"""iCOPERNICUS probes (docs/conventions.md sec. 23): the paper's Table 3 gives the PROTOCOLS *check* numbers, hand
cases pin the tie rule and missing styles, the score file's errors name file:line, and the sign-flip test agrees
with a brute-force enumeration."""
from __future__ import annotations

import itertools
import math
from decimal import ROUND_HALF_UP, Decimal

import numpy as np
import pytest

from metaeval.core.icopernicus.probes import (
    ADVERSARIAL_STYLES,
    PROBES,
    STYLES,
    StyleScore,
    paired_differences,
    probe_rows,
    probe_significance,
    probe_table,
    read_scores,
    sign_flip_test,
    split_system,
    summarise,
    summarise_worsening,
    worsening_rows,
)
from metaeval.core.io.fileio import ImportFileError
from tests.metaeval.core.icopernicus_table3 import grid, write_scores

# PROTOCOLS.md sec. 2 *check* (recomputed independently of this code): probe -> (paradox models, mean drop pp,
# pass models, mean boost pp), reported mode
CHECK_REPORTED = {
    "PX-1": (7, "1.657", 10, "2.590"),
    "PX-2": (7, "2.043", 10, "2.530"),
    "PX-3": (8, "1.563", 9, "3.778"),
    "PX-4": (11, "3.609", 6, "4.050"),
    "PX-5": (14, "1.579", 3, "0.633"),
}
CHECK_DEFINED_PARADOXES = {"PX-2": 11, "PX-5": 8}


def three_dp(value: Decimal | None) -> str:
    """The value as the paper's averages are printed: 3 decimals, half up."""
    assert value is not None
    return str(value.quantize(Decimal("0.001"), rounding=ROUND_HALF_UP))


def table3_scores() -> list[StyleScore]:
    return [StyleScore(model, style, Decimal(value)) for model, style, value in grid()]


def scores(*cells: tuple[str, str, str]) -> list[StyleScore]:
    return [StyleScore(model, style, Decimal(value)) for model, style, value in cells]


# ------------------------------------------------------------------------------------------------------ golden
@pytest.mark.parametrize("probe", sorted(CHECK_REPORTED))
def test_table3_reproduces_the_check_numbers_reported_mode(probe):
    summary = {item.probe: item for item in summarise(probe_rows(table3_scores()), "reported")}
    item = summary[probe]
    paradoxes, drop, passes, boost = CHECK_REPORTED[probe]
    assert (item.models, item.paradox_models, item.pass_models) == (17, paradoxes, passes)
    assert three_dp(item.mean_drop_pp) == drop
    assert three_dp(item.mean_boost_pp) == boost


def test_table3_defined_mode_paradox_counts_and_no_px6():
    rows = probe_rows(table3_scores(), "defined")
    summary = {item.probe: item for item in summarise(rows, "defined")}
    assert list(summary) == ["PX-1", "PX-2", "PX-3", "PX-4", "PX-5"]
    for probe, count in CHECK_DEFINED_PARADOXES.items():
        assert summary[probe].paradox_models == count
    # the probes both modes share give the same answer
    reported = {item.probe: item for item in summarise(probe_rows(table3_scores()), "reported")}
    for probe in ("PX-1", "PX-3", "PX-4"):
        assert summary[probe] == reported[probe]
    assert {row.probe for row in rows} == set(summary)


def test_table3_px3_tie_is_the_llama_2_7b_row():
    rows = [row for row in probe_rows(table3_scores()) if row.probe == "PX-3" and row.delta_pp == 0]
    assert [(row.model, row.paradox, str(row.egises_a), str(row.egises_b)) for row in rows] == [
        ("Llama 2 7B", True, "0.408", "0.408")
    ]


def test_table3_file_reads_back_the_printed_digits(tmp_path):
    read = read_scores(write_scores(tmp_path / "t3.csv"))
    assert len(read) == 17 * 6
    zephyr = next(score for score in read if score.model == "Zephyr 7B α" and score.style == "0-shot")
    assert str(zephyr.egises) == "0.360" and zephyr.line == 1 + 6 * 15 + 1  # header, 15 models before it


# ------------------------------------------------------------------------------------------------- hand cases
def test_hand_worked_deltas_paradox_and_means():
    # PX-1 (0-shot < 2-shot-wo-hist): m1 boosts by 5 pp, m2 ties ("0.4" vs "0.400"), m3 drops by 2 pp
    rows = probe_rows(scores(
        ("m1", "0-shot", "0.45"), ("m1", "2-shot-wo-hist", "0.40"),
        ("m2", "0-shot", "0.4"), ("m2", "2-shot-wo-hist", "0.400"),
        ("m3", "0-shot", "0.30"), ("m3", "2-shot-wo-hist", "0.32"),
    ))
    assert [(row.model, row.probe, row.delta_pp, row.paradox) for row in rows] == [
        ("m1", "PX-1", Decimal("5"), False), ("m2", "PX-1", Decimal("0"), True), ("m3", "PX-1", Decimal("-2"), True),
    ]
    assert str(rows[0].delta_pp) == "5.00"  # exact: no 4.999999999999999
    px1 = summarise(rows)[0]
    assert (px1.models, px1.paradox_models, px1.pass_models) == (3, 2, 1)
    assert px1.mean_drop_pp == Decimal(1)  # (0 + 2) / 2: the tie counts with a drop of 0
    assert px1.mean_boost_pp == Decimal(5)


def test_missing_styles_give_no_row_and_empty_means():
    rows = probe_rows(scores(
        ("m1", "0-shot", "0.5"), ("m1", "c-0-shot", "0.6"),  # PX-3 only (a paradox)
        ("m2", "2-shot-w-hist", "0.5"),                      # no probe
    ))
    assert [(row.model, row.probe) for row in rows] == [("m1", "PX-3")]
    summary = {item.probe: item for item in summarise(rows)}
    assert summary["PX-3"].paradox_models == 1 and summary["PX-3"].mean_boost_pp is None
    assert summary["PX-3"].mean_drop_pp == Decimal(10)
    assert summary["PX-1"].models == 0 and summary["PX-1"].mean_drop_pp is None


def test_probe_tables_and_styles():
    assert len(PROBES["reported"]) == 6 and len(PROBES["defined"]) == 5
    for probes in PROBES.values():
        assert all(probe.a in STYLES and probe.b in STYLES and probe.a != probe.b for probe in probes)
    with pytest.raises(ValueError, match="mode"):
        probe_rows([], "literal")  # type: ignore[arg-type]


def test_split_system():
    assert split_system("Llama 2 7B:c-2-shot-w-hist") == ("Llama 2 7B", "c-2-shot-w-hist")
    assert split_system("org:model:0-shot") == ("org:model", "0-shot")
    assert split_system("m:1-shot") is None and split_system(":0-shot") is None and split_system("m") is None
    assert split_system("m:c-0-shot-adversarial") == ("m", "c-0-shot-adversarial")
    assert split_system("m:0-shot-adversarial") is None  # only the contrastive styles have adversarial prompts
    assert ADVERSARIAL_STYLES == ("c-0-shot-adversarial", "c-2-shot-wo-hist-adversarial",
                                  "c-2-shot-w-hist-adversarial")


# ---------------------------------------------------------------------------------------- adversarial probes
def test_adversarial_worsening_by_hand():
    # m1: c-0-shot 0.40 -> adversarial 0.42 (worse by 2 pp = 5 % of 0.40); its PX-3 A (0-shot) is 0.38, so the
    #     paradox gap grows from 2 to 4 pp. c-2-shot-w-hist 0.50 -> 0.49: better under the wrong partner (-1 pp,
    #     -2 %), not worsened; PX-5's A (c-0-shot) 0.40: gap 10 -> 9 pp.
    # m2: c-2-shot-wo-hist 0.3 -> "0.300": a tie, not worsened; no 2-shot-wo-hist, so no gap.
    #     c-0-shot-adversarial without c-0-shot: no row. m3: c-0-shot 0 -> 0.1: no relative change.
    rows = worsening_rows(scores(
        ("m1", "0-shot", "0.38"), ("m1", "c-0-shot", "0.40"), ("m1", "c-0-shot-adversarial", "0.42"),
        ("m1", "c-2-shot-w-hist", "0.50"), ("m1", "c-2-shot-w-hist-adversarial", "0.49"),
        ("m2", "c-2-shot-wo-hist", "0.3"), ("m2", "c-2-shot-wo-hist-adversarial", "0.300"),
        ("m2", "c-0-shot-adversarial", "0.9"),
        ("m3", "c-0-shot", "0"), ("m3", "c-0-shot-adversarial", "0.1"),
    ))
    got = [(r.model, r.probe, r.adversarial, r.worsening_pp, r.worsening_pct, r.worsened, r.a, r.gap_pp,
            r.gap_adversarial_pp) for r in rows]
    assert got == [
        ("m1", "PX-3", "c-0-shot-adversarial", Decimal(2), Decimal(5), True, "0-shot", Decimal(2), Decimal(4)),
        ("m1", "PX-5", "c-2-shot-w-hist-adversarial", Decimal(-1), Decimal(-2), False, "c-0-shot", Decimal(10),
         Decimal(9)),
        ("m2", "PX-4", "c-2-shot-wo-hist-adversarial", Decimal(0), Decimal(0), False, "2-shot-wo-hist", None, None),
        ("m3", "PX-3", "c-0-shot-adversarial", Decimal(10), None, True, "0-shot", None, None),
    ]
    assert str(rows[0].worsening_pp) == "2.00"  # exact decimals
    summary = {item.probe: item for item in summarise_worsening(rows)}
    assert list(summary) == ["PX-3", "PX-4", "PX-5"]
    px3 = summary["PX-3"]
    assert (px3.models, px3.worsened_models, px3.mean_worsening_pp) == (2, 2, Decimal(6))
    assert px3.mean_worsening_pct == Decimal(5)  # m3's relative change is undefined and left out
    assert summary["PX-5"].worsened_models == 0 and summary["PX-5"].mean_worsening_pp == Decimal(-1)
    defined = worsening_rows(scores(("m", "2-shot-w-hist", "0.2"), ("m", "c-2-shot-w-hist", "0.5"),
                                    ("m", "c-2-shot-w-hist-adversarial", "0.6")), "defined")
    assert [(r.a, r.gap_pp, r.gap_adversarial_pp) for r in defined] == [("2-shot-w-hist", Decimal(30), Decimal(40))]
    assert probe_rows(scores(("m", "c-0-shot", "0.1"), ("m", "c-0-shot-adversarial", "0.2"))) == []


# ----------------------------------------------------------------------------------------------- score files
def write(tmp_path, text: str):
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    return path


def test_scores_file_extra_columns_blank_lines_and_spaces(tmp_path):
    read = read_scores(write(tmp_path, "model,style,egises,measure,system\n\nm , 0-shot , 0.40 ,jsd,x\n"))
    assert read == [StyleScore("m", "0-shot", Decimal("0.40"), 3)]


@pytest.mark.parametrize(("text", "message"), [
    ("model,egises,style\nm,0-shot,0.4\n", 's.csv:1: field "style": missing'),
    ("model,style\nm,0-shot\n", 's.csv:1: field "egises": missing'),
    ("", 's.csv:1: field "model": missing'),
    ("model,style,egises\n\nm,1-shot,0.4\n", 's.csv:3: field "style": unknown style "1-shot"'),
    ("model,style,egises\nm,0-shot,abc\n", 's.csv:2: field "egises": "abc" is not a finite number'),
    ("model,style,egises\nm,0-shot,nan\n", 's.csv:2: field "egises": "nan" is not a finite number'),
    ("model,style,egises\nm,0-shot,0.4\nm,0-shot,0.400\n",
     's.csv:3: field "style": duplicate (model, style) ("m", "0-shot"), first at line 2'),
    ("model,style,egises\nm,0-shot\n", 's.csv:2: field "egises": missing'),
    ("model,style,egises\n,0-shot,0.4\n", 's.csv:2: field "model": missing'),
])
def test_scores_file_problems_name_file_line_and_field(tmp_path, text, message):
    with pytest.raises(ImportFileError) as caught:
        read_scores(write(tmp_path, text))
    assert len(caught.value.problems) == 1
    assert caught.value.problems[0].startswith(message)


def test_scores_file_reports_every_problem(tmp_path):
    with pytest.raises(ImportFileError) as caught:
        read_scores(write(tmp_path, "model,style,egises\nm,x,0.4\nm,0-shot,y\n"))
    assert [problem.split(": ")[0] for problem in caught.value.problems] == ["s.csv:2", "s.csv:3"]


# ------------------------------------------------------------------------------------------------ significance
def brute_force_p(d: list[float]) -> float:
    """Two-sided sign-flip p by enumerating every sign pattern (independent of the vectorised code)."""
    observed = abs(sum(d) / len(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True)) / len(d)) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_sign_flip_hand_case_exact():
    # d = (1, 2, 3): |sum| over the 8 patterns is 6, 4, 2, 0, 0, 2, 4, 6, so 2 of 8 reach 6
    result = sign_flip_test([1.0, 2.0, 3.0], n_permutations=8)
    assert result.exact and result.p_value == 0.25 and result.statistic == 2.0 and result.n_permutations == 8
    assert sign_flip_test([0.5, -0.5]).p_value == 1.0
    assert math.isnan(sign_flip_test([]).p_value)


@pytest.mark.parametrize("seed", [0, 1])
def test_sign_flip_exact_matches_brute_force(seed):
    d = list(np.random.default_rng(seed).normal(0.02, 0.05, size=9))
    result = sign_flip_test(d, n_permutations=10_000)
    assert result.exact and result.p_value == pytest.approx(brute_force_p(d), abs=1e-15)
    assert sign_flip_test([-x for x in d]).p_value == result.p_value  # two-sided


def test_sign_flip_monte_carlo_approaches_the_exact_p_and_is_seeded():
    d = list(np.random.default_rng(5).normal(0.01, 0.05, size=14))  # 2**14 = 16384 > 10000: drawn
    exact = brute_force_p(d)
    drawn = sign_flip_test(d, n_permutations=10_000, seed=3)
    assert not drawn.exact and drawn.n_permutations == 10_000
    assert abs(drawn.p_value - exact) < 4 * math.sqrt(exact * (1 - exact) / 10_000) + 1e-4
    assert sign_flip_test(d, n_permutations=10_000, seed=3) == drawn
    assert drawn.p_value * 10_001 == pytest.approx(round(drawn.p_value * 10_001))  # (1 + count) / (1 + n)


def test_paired_differences_leave_out_unpaired_and_undefined_documents():
    docs, d = paired_differences({"d1": 0.5, "d2": 0.4, "d3": math.nan, "d4": 0.1}, {"d2": 0.6, "d1": 0.2, "d3": 0.1})
    assert docs == ["d1", "d2"] and d.tolist() == pytest.approx([-0.3, 0.2])


def test_probe_significance_mean_ci_and_constant_difference():
    a = {f"d{i}": 0.5 for i in range(6)}
    b = {f"d{i}": 0.5 + 0.01 * (i + 1) for i in range(6)}
    result = probe_significance(a, b, n_permutations=10_000, n_boot=500, seed=1)
    assert result.documents == 6 and result.mean_diff_pp == pytest.approx(3.5)
    assert result.p_exact and result.p_value == pytest.approx(2 / 64)  # all positive: only +-all reach the mean
    assert result.ci_low_pp <= 3.5 <= result.ci_high_pp and result.ci_low_pp >= 1.0 and result.ci_high_pp <= 6.0
    constant = probe_significance(a, {doc: 0.52 for doc in a}, n_boot=200, seed=2)
    assert constant.ci_low_pp == pytest.approx(2.0) and constant.ci_high_pp == pytest.approx(2.0)
    empty = probe_significance(a, {}, seed=0)
    assert empty.documents == 0 and math.isnan(empty.p_value)


def test_probe_table_adds_significance_without_touching_the_flag():
    rows = probe_rows(scores(("m", "0-shot", "0.40"), ("m", "2-shot-wo-hist", "0.40")))
    per_document = {("m", "0-shot"): {"d1": 0.6, "d2": 0.6}, ("m", "2-shot-wo-hist"): {"d1": 0.9, "d2": 0.9}}
    table = probe_table(rows, per_document, n_boot=50, seed=0)
    assert table[0]["paradox"] is True  # the tie stays a paradox whatever the documents say
    assert table[0]["mean_diff_pp"] == pytest.approx(30.0) and table[0]["documents"] == 2
    assert "p_value" not in probe_table(rows)[0]
