"""Every judge against the people at once (issue 32's page): the agreement matrix and the people's position bias
worked by hand on the hand table; the per-judge tables are the single-judge functions' rows."""
from __future__ import annotations

import pytest

from metaeval.core.judges.agreement import agreement_rows
from metaeval.core.judges.alt_test import alt_test_rows
from metaeval.core.judges.items import JudgeNotFound, build_items
from metaeval.core.judges.ppi import ppi_rows
from metaeval.core.judges.versus import PEOPLE, judges_vs_people
from metaeval.core.judges.versus_view import versus_view
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable
from tests.metaeval.core.judges.hand_items import LENGTHS, table


def cell(result, criterion, source, other):
    return next((row["items"], row["agreement"]) for row in result["tables"]["matrix"]
                if (row["criterion"], row["source"], row["other"]) == (criterion, source, other))


def test_the_matrix_by_hand():
    result = judges_vs_people(table())
    assert result["judges"] == ["gpt", "other"]
    # quality, people against gpt: c1 A/A, c2 C/C agree, c5 tie/B does not
    assert cell(result, "quality", PEOPLE, "gpt") == (3, pytest.approx(2 / 3))
    assert cell(result, "quality", "gpt", PEOPLE) == (3, pytest.approx(2 / 3))
    # the people played c1, c2, c4, c5 on quality: the diagonal is every item of the source
    assert cell(result, "quality", PEOPLE, PEOPLE) == (4, 1.0)
    assert cell(result, "quality", PEOPLE, "other") == (0, None)
    # relevance c1: people B, gpt A, other B
    assert cell(result, "relevance", PEOPLE, "gpt") == (1, 0.0)
    assert cell(result, "relevance", PEOPLE, "other") == (1, 1.0)
    assert cell(result, "relevance", "gpt", "other") == (1, 0.0)
    assert cell(result, "overall", PEOPLE, "gpt") == (4, pytest.approx(2 / 4))


def test_the_peoples_position_bias_by_hand():
    rows = {(row["judge"], row["criterion"]): row for row in judges_vs_people(table())["tables"]["agreement"]}
    # quality, decisive votes with a shown order: c1 P1 yes, P2 no, P3 yes; c2 P1 no; c4 P1 yes; c5 P1, P2 yes
    assert (rows[("gpt", "quality")]["people_first_shown_judgments"],
            rows[("gpt", "quality")]["people_first_shown"]) == (7, pytest.approx(5 / 7))
    assert rows[("other", "quality")]["people_first_shown"] == pytest.approx(5 / 7)


def test_each_judges_tables_are_the_single_judge_rows():
    result = judges_vs_people(table(), LENGTHS, alpha=0.1)
    for judge in ("gpt", "other"):
        items = build_items(table(), judge)
        mine = [{k: v for k, v in row.items() if not k.startswith("people_")}
                for row in result["tables"]["agreement"] if row["judge"] == judge]
        assert mine == agreement_rows(items, LENGTHS)
        assert [row for row in result["tables"]["ppi"] if row["judge"] == judge] == [
            {"judge": judge, **row} for row in ppi_rows(items, 0.1)]
        assert [row for row in result["tables"]["alt_test"] if row["judge"] == judge] == alt_test_rows(items)[0]


def test_style_boards_per_source():
    """Each source (the people, every judge) gets its own leaderboard without and with the length covariate,
    fitted on its own games, shown in that order."""
    rows = []
    for n in range(12):
        winner = "model_a" if n % 3 else "model_b"
        rows += [Judgment(f"c{n}", "quality", "A", "B", winner, 2 * n + 2, "P1", "human", None, "model_a"),
                 Judgment(f"c{n}", "quality", "A", "B", "model_a", 2 * n + 3, "gpt", "llm", 1, "model_b")]
    lengths = LENGTHS.__class__(side={"length": {**{(f"c{n}", "A"): float(5 + n % 4) for n in range(12)},
                                                 **{(f"c{n}", "B"): 4.0 for n in range(12)}}})
    result = judges_vs_people(JudgmentTable(tuple(rows)), lengths, n_boot=20, seed=1)
    sources = {row["source"] for row in result["tables"]["style"]}
    assert sources == {PEOPLE, "gpt"}
    view = versus_view(result, "quality")
    assert [board["source"] for board in view["style"]] == [PEOPLE, "gpt"]
    assert all(set(row) >= {"bt_nostyle", "bt_style", "rank_nostyle", "rank_style"} for row in
               result["tables"]["style"])


def test_the_view_puts_judges_in_columns():
    view = versus_view(judges_vs_people(table(), LENGTHS), "quality")
    assert view["judges"] == ["gpt", "other"] and view["sources"] == [PEOPLE, "gpt", "other"]
    accuracy = next(m for m in view["metrics"] if m["key"] == "accuracy")
    assert accuracy["cells"] == ["0.667", "—"]
    first = next(m for m in view["metrics"] if m["key"] == "judge_first_shown")
    assert first["people"] == "0.714" and first["cells"][0] == "0.778"
    assert view["matrix"][0]["cells"][1] == {"value": "0.667", "items": 3}
    assert any("gpt prefers the text shown first in 78 %" in line and "people in 71 %" in line
               for line in view["bias"])


def test_no_judge_or_no_people_is_an_error():
    only_people = JudgmentTable(tuple(j for j in table().judgments if j.judge_kind == "human"), source="p.csv")
    with pytest.raises(JudgeNotFound, match="p.csv: no judge other than 'human'"):
        judges_vs_people(only_people)
