"""How a report's numbers and names are shown: one number format, p-values, headings, captions and the warnings a
correlation needs (display only: the numbers themselves never change)."""
from __future__ import annotations

import copy
import csv
import json
import math
import re

import numpy as np
import pytest

from metaeval.core import display
from metaeval.core.display import (
    FEW_SYSTEMS,
    ascii_text,
    caption,
    cell_flags,
    cells_of,
    column_heading,
    correlation_view,
    correlation_warnings,
    figure_texts,
    fmt_cell,
    fmt_number,
    fmt_p,
    measure_name,
    table_view,
)
from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.core.perseval import report, studies
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from tests.metaeval.core.perseval.test_report import DATASET, RATINGS


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.5474555235729122, "0.5475"),
        (2.963e-12, "< 0.0001"),  # never 2.963e-12
        (-1.1856875013260826e-05, "> -0.0001"),
        (0.0, "0.0000"),
        (-0.0, "0.0000"),
        (1.0, "1.0000"),
        (0.99995, "1.0000"),
        (-0.1177, "-0.1177"),
        (0.03125, "0.0313"),  # an exact tie rounds away from zero (as JavaScript's toFixed)
        (-0.03125, "-0.0313"),
        (5e-05, "0.0001"),  # the float nearest 0.00005 lies above it
        (12345.678912, "12345.6789"),
        (1e30, f"{1e30:.4f}"),
        (np.float64(0.25), "0.2500"),
        (10, "10"),
        (np.int64(7), "7"),
        (True, "yes"),
        (False, "no"),
        (None, "–"),
        (math.nan, "–"),
        (math.inf, "inf"),
        (-math.inf, "-inf"),
        ("text", "text"),
    ],
)
def test_one_number_format(value, text) -> None:
    assert fmt_number(value) == text


def test_no_number_is_shown_in_exponent_notation() -> None:
    rng = np.random.default_rng(3)
    values = [*(10.0 ** -k for k in range(1, 20)), *rng.normal(0, 1e-3, 200), *rng.uniform(-1, 1, 200)]
    for value in values:
        text = fmt_number(float(value))
        assert "e" not in text.lower(), (value, text)
        if not text.startswith(("<", ">")):
            assert len(text.split(".")[1]) == 4
            assert abs(float(text) - value) <= 0.00005 + 1e-12  # rounded, never changed


@pytest.mark.parametrize(
    ("p", "text"),
    [(1.5930994521720158e-19, "< 0.001"), (0.0005, "< 0.001"), (0.001, "0.001"), (0.0425, "0.043"),
     (0.7623762376237624, "0.762"), (1.0, "1.000"), (None, "–"), (math.nan, "–")],
)
def test_p_values(p, text) -> None:
    assert fmt_p(p) == text


def test_missing_text_can_be_chosen() -> None:
    assert fmt_number(None, missing="n/a") == fmt_p(math.nan, missing="n/a") == "n/a"


def test_cells_pick_the_format_of_their_column() -> None:
    assert fmt_cell("pearson_p", 1.6e-19) == "< 0.001"
    assert fmt_cell("p_value", 0.7623762376237624) == "0.762"
    assert fmt_cell("pearson", 0.999986186045935) == "1.0000"
    assert fmt_cell("beta", 1.1) == "1.1" and fmt_cell("confidence", 0.95) == "0.95"  # settings as typed
    assert fmt_cell("scores", "0.5628031535328398;0.5389012084606587;2.9e-13") == "0.5628; 0.5389; < 0.0001"
    assert fmt_cell("draw_seeds", "2530306911;3042318410") == "2530306911; 3042318410"
    assert fmt_cell("systems", "PersonaPointer;ClickAttnSum") == "PersonaPointer; ClickAttnSum"
    assert fmt_cell("measure", "hj:rouge_l") == "HJ (ROUGE-L)" and fmt_cell("auto_measure", "bleu4") == "BLEU-4"
    assert fmt_cell("system", "rouge_l") == "rouge_l"  # a system is never renamed
    assert fmt_cell("quote", True) == "yes" and fmt_cell("n", 10) == "10"


def test_measure_names() -> None:
    assert [measure_name(m) for m in ("rouge_l", "rouge_su4", "bleu4", "jsd", "bertscore", "infolm", "hj:jsd")] == [
        "ROUGE-L", "ROUGE-SU4", "BLEU-4", "JSD", "BERTScore", "InfoLM", "HJ (JSD)"]
    assert measure_name("my_measure") == "my_measure"


@pytest.mark.parametrize(
    ("column", "heading"),
    [("perseval_low", "PerSEval, lower bound"), ("p_acc", "P-Acc"), ("pearson", "Pearson r"),
     ("pearson_p", "Pearson p-value"), ("spearman_label", "Spearman strength"),
     ("kendall_low", "Kendall τ, lower bound"), ("spearman_n_valid", "Spearman: valid samples"),
     ("hj:rouge_l_rank", "HJ (ROUGE-L) rank"), ("rouge_su4", "ROUGE-SU4"),
     ("epsilon_spearman_min", "ε-stability (Spearman), worst draw"), ("auto_measure", "Automatic measure"),
     ("significant_0.05", "Significant at 0.05"), ("something_new", "Something new")],
)
def test_headings_are_words(column, heading) -> None:
    assert column_heading(column) == heading


def test_every_column_of_a_report_has_a_heading_without_underscores(report_document) -> None:
    for name, rows in report_document["tables"].items():
        title, text = caption(name)
        assert title and text and "_" not in title, name
        for column in dict.fromkeys(key for row in rows for key in row):
            assert "_" not in column_heading(column), (name, column)


def _cells(values, n=10, note=""):
    return [{"r": r, "n": n, "note": note} for r in values]


def test_no_warning_for_a_healthy_grid() -> None:
    assert correlation_warnings(_cells([0.62, 0.41, -0.3]), "pearson") == []
    assert correlation_warnings([], "pearson") == []
    assert cell_flags({"r": 0.5, "n": 10}) == []


def test_few_systems() -> None:
    warnings = correlation_warnings(_cells([0.6, 0.5], n=5), "spearman")
    assert len(warnings) == 1
    assert warnings[0].startswith("Few systems: every correlation rests on fewer than 8 systems (n = 5)")
    assert "intervals are wide" in warnings[0]
    mixed = correlation_warnings([*_cells([0.6], n=4), *_cells([0.5], n=6), *_cells([0.2], n=12)], "kendall")
    assert "2 of 3 correlations rest on fewer than 8 systems (n = 4 to 6)" in mixed[0]
    assert cell_flags({"r": 0.6, "n": FEW_SYSTEMS - 1}) == ["few systems (n = 7)"]
    assert cell_flags({"r": 0.6, "n": FEW_SYSTEMS}) == []


def test_every_cell_plus_or_minus_one_is_degenerate() -> None:
    warnings = correlation_warnings(_cells([0.999986, 0.999998, -0.9990]), "pearson")
    assert len(warnings) == 1 and warnings[0].startswith("Degenerate: every Pearson r is ±1 (|r| ≥ 0.99)")
    assert "outlier" in warnings[0] and "Spearman, Kendall" in warnings[0]
    assert correlation_warnings(_cells([1.0]), "pearson")[0].startswith("Degenerate: the only Pearson r is ±1")
    some = correlation_warnings(_cells([1.0, 0.5, 0.995, 0.2]), "spearman")
    assert some == ["2 of 4 Spearman ρ values are ±1 (|r| ≥ 0.99): one outlying system can decide such a "
                    "correlation alone."]
    assert cell_flags({"r": -0.995, "n": 10}) == ["±1"]


def test_undefined_cells_say_why() -> None:
    constant = "undefined: y is constant over the 10 pairs"
    warnings = correlation_warnings([*_cells([None], note=constant), *_cells([math.nan], note=constant),
                                     *_cells([0.4])], "kendall")
    assert warnings == [f"Undefined: 2 of 3 correlations could not be computed ({constant})."]
    assert correlation_warnings(_cells([None, None]), "pearson") == [
        "Undefined: no correlation could be computed (a constant score or too few systems)."]
    assert cell_flags({"r": None, "n": 2}) == ["undefined", "few systems (n = 2)"]


def test_flat_rows_and_ascii() -> None:
    rows = [{"pearson": 0.5, "pearson_p": 0.1, "spearman": 0.4, "n": 5, "note": ""}]
    assert cells_of(rows, "pearson") == [{"r": 0.5, "p": 0.1, "n": 5, "note": ""}]
    assert ascii_text("every Pearson r is ±1 (|r| ≥ 0.99) – ρ, τ") == "every Pearson r is +-1 (|r| >= 0.99) - rho, tau"


@pytest.fixture(scope="module")
def report_document():
    """A small report of the demo data (the numbers the page shows)."""
    options = RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=Params(beta=1.7))
    data = studies.prepare_study(load_corpus(DATASET), options, ratings=load_ratings(RATINGS))
    with open(RATINGS, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return report.build_report(data, params=Params(beta=1.7), seed=11, rating_rows=rows, n_boot=50,
                               n_permutations=50, stability_samples=2)


def test_the_page_shows_every_table_in_words_and_one_format(report_document) -> None:
    for name, rows in report_document["tables"].items():
        view = table_view(name, rows)
        assert view["name"] == name and view["title"] == caption(name)[0]
        assert [c["key"] for c in view["columns"]] == list(dict.fromkeys(k for row in rows for k in row))
        assert len(view["rows"]) == len(rows)
        for row in view["rows"]:
            for cell in row:
                assert "e-" not in cell["text"] and "nan" not in cell["text"].lower(), (name, cell)


def test_the_correlation_section_per_coefficient(report_document) -> None:
    view = correlation_view(report_document)
    assert view is not None
    assert [m["method"] for m in view["methods"]] == ["pearson", "spearman", "kendall"]
    assert [m["selected"] for m in view["methods"]] == [True, False, False]
    pearson = view["methods"][0]
    assert len(pearson["rows"]) == 2 and pearson["name"] == "Pearson r"
    # on the demo, ROUGE-L against its own HJ variant is about 1 (JSD is not): the section says so, that cell flagged
    assert pearson["warnings"] and pearson["warnings"][0].startswith("1 of 2 Pearson r values are ±1 (|r| ≥ 0.99)")
    assert [row["flags"] for row in pearson["rows"]] == ["±1", ""]
    assert pearson["rows"][0]["p"] == "< 0.001" and pearson["rows"][0]["auto"] == "ROUGE-L"
    texts = figure_texts(report_document)
    assert texts["method"] == "pearson" and texts["measures"]["hj:rouge_l"] == "HJ (ROUGE-L)"
    assert texts["warnings"]["pearson"] == pearson["warnings"]
    assert texts["flags"]["pearson"]["rouge_l | hj:rouge_l"] == ["±1"]
    assert set(texts["beta_warnings"]) == {"pearson", "spearman", "kendall"}
    assert correlation_view({"correlations": []}) is None


def test_display_changes_no_number(report_document) -> None:
    """Everything on the page is derived; the document itself is left as it was."""
    before = copy.deepcopy(report_document)
    for name, rows in report_document["tables"].items():
        table_view(name, rows)
    correlation_view(report_document)
    figure_texts(report_document)
    assert json.dumps(report_document, sort_keys=True) == json.dumps(before, sort_keys=True)
    assert display.DECIMALS == 4 and display.P_DECIMALS == 3


# ------------------------------------------------------------------------------------------ pairwise judgments
def _pairwise_report(regularise: bool = False) -> dict:
    """A report with a pairwise section built from judgments (A > B > C; ``regularise``: A never loses in
    ``fit``)."""
    from metaeval.core.pairwise.judgments import Judgment, JudgmentTable
    from metaeval.core.pairwise.report import build_pairwise_report

    rows, line = [], 1
    for criterion in ("quality", "fit"):
        for case in range(10):
            for a, b, wins in (("A", "B", 7), ("B", "C", 6), ("A", "C", 8)):
                winner = "model_a" if case < wins else "tie" if case == wins else "model_b"
                if regularise and criterion == "fit" and a == "A":
                    winner = "model_a"
                rows.append(Judgment(case_id=f"c{case}", criterion=criterion, model_a=a, model_b=b, winner=winner,
                                     line=line))
                line += 1
    rows.append(Judgment(case_id="c0", criterion="fit", model_a="A", model_b="B", winner="invalid", line=line))
    section = build_pairwise_report(JudgmentTable(tuple(rows), source="j.csv"), seed=9, n_boot=30, repetitions=50)
    tables = section.pop("tables")
    return {"pairwise": section, "tables": tables}


def test_pairwise_tables_have_captions_and_headings_in_words() -> None:
    document = _pairwise_report()
    for name, rows in document["tables"].items():
        title, text = caption(name)
        assert title.startswith("Pairwise judgments · ") and text, name
        view = table_view(name, rows)
        assert len(view["rows"]) == len(rows)
        for column in view["columns"]:
            assert "_" not in column["heading"] and column["heading"] != column["key"], (name, column)
        for row in view["rows"]:
            for cell in row:
                assert not re.search(r"\d[eE][-+]?\d", cell["text"]) and "nan" not in cell["text"].lower()
    assert column_heading("elo_ci_low") == "Elo, 2.5th percentile"
    assert column_heading("bt_ci_high") == "Bradley-Terry, 97.5th percentile"
    # the same CSV column reads differently in another table
    assert column_heading("n", "pairwise_consistency") == "Sample size (games)" and column_heading("n") == "n (systems)"
    assert column_heading("wins", "pairwise_wtl") == "Games A won" and column_heading("wins") == "Wins"
    heads = {c["key"]: c["heading"] for c in table_view("pairwise_consistency", document["tables"][
        "pairwise_consistency"])["columns"]}
    assert heads["n"] == "Sample size (games)" and heads["ties"] == "Games tied"


def test_pairwise_view_per_criterion() -> None:
    document = _pairwise_report()
    view = display.pairwise_view(document)
    assert view is not None
    assert [c["criterion"] for c in view["criteria"]] == ["fit", "quality", "overall"]
    assert [c["name"] for c in view["criteria"]] == ["Fit", "Quality", "Overall (all criteria)"]
    assert [c["selected"] for c in view["criteria"]] == [False, False, True] and view["selected"] == "overall"
    assert view["judgments"] == {"read": "61", "invalid": "1", "games": "60", "source": "j.csv",
                                 "systems": ["A", "B", "C"]}
    stored = [row for row in document["pairwise"]["wtl"] if row["criterion"] == "quality"]
    quality = view["criteria"][1]["rows"]
    assert [(r["model_a"], r["model_b"]) for r in quality] == [("A", "B"), ("B", "C"), ("A", "C")]
    assert [r["win"] for r in quality] == [fmt_number(row["win"]) for row in stored] == ["70.0000", "60.0000",
                                                                                           "80.0000"]
    assert quality[0]["cases"] == "10" and quality[0]["ties"] == "1" and quality[0]["losses"] == "2"
    assert view["settings"]["elo"] == "K = 4, scale 400, base 10, initial rating 1000"
    assert view["settings"]["bootstrap"] == ("30 bootstrap rounds of the games, intervals from the 2.5th to the "
                                             "97.5th percentile")
    assert view["settings"]["consistency"].startswith("50 repetitions at n = 5, 10, 20, 50, 100, 200, 500")
    assert "α = 0.05" in view["settings"]["consistency"] and view["settings"]["seed"] == "9 (bootstrap), 10 " \
        "(consistency curves)"
    assert view["regularised"] == []
    assert display.pairwise_view({"tables": {}}) is None and display.pairwise_view({"pairwise": None}) is None
    texts = figure_texts({**document, "parameters": {}})
    assert texts["pairwise"] == {"criterion": "overall",
                                 "criteria": {"fit": "Fit", "quality": "Quality", "overall": "Overall (all criteria)"}}
    assert figure_texts({"parameters": {}})["pairwise"] == {}


def test_pairwise_view_notes_a_regularised_fit() -> None:
    document = _pairwise_report(regularise=True)
    regularised = document["pairwise"]["regularised"]
    assert regularised["fit"]["point"] and not regularised["quality"]["point"]
    notes = display.pairwise_view(document)["regularised"]  # type: ignore[index]
    assert len(notes) == 1 + bool(regularised["quality"]["bootstrap_rounds"])
    assert notes[0].startswith("Fit: Bradley-Terry was regularised in the point fit")
    rounds = regularised["fit"]["bootstrap_rounds"]
    assert (f" and {rounds} of 30 bootstrap rounds" in notes[0]) is bool(rounds)


def test_criterion_names() -> None:
    assert display.criterion_name("overall") == "Overall (all criteria)"
    assert display.criterion_name("personal_fit") == "Personal fit"
    assert display.criterion_name("Quality") == "Quality"
