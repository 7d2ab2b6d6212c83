"""metaeval.core.studies: rescoring studies (perseval-tmlr sec. 7-8, Tables 1-8, Figure 3, App. B.2).

Two kinds of data:

* a **tiny hand case** built from DocPairs directly. Each document has two readers P and Q, both with
  accuracy distance 0. The softmax share of a single pair is 1, so X = sigma(u_P, u_Q) and
  Y = sigma(s_P, s_Q), and a document's PerSEval is p(Y, X) * EDP0. Here p(Y, X) = (min + 1e-5)/(max + 1e-5),
  and EDP0 = 1 - S_{3,beta}(2 S_{4,1}(0)) + 1e-7 is the same for every document.
* the **demo fixture** (14 documents, 10 systems) with lexical measures only (rouge_l, jsd) and no cache.
"""
from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from metaeval.core import studies
from metaeval.core.correlation import correlate, correlation_grid
from metaeval.core.loaders import load_corpus, load_ratings
from metaeval.core.perseval import DocPairs, Params, SystemScore, score_system
from metaeval.core.pipeline import RunOptions, run_scores
from metaeval.core.studies import (
    StudyData,
    benchmark_tables,
    beta_ablation,
    borda_kendall,
    borda_vs_hj,
    document_matrix,
    draw_seed,
    prepare_study,
    rank_agreement,
    score,
    stability,
    stability_summary,
)
from tests.reference.straightforward import AUTHORS_DISTANCES, reference_sampled_scores

DEMO = Path(__file__).resolve().parents[3] / "fixtures" / "demo"
BETA = 1.7


# ------------------------------------------------------------------------------------------------ hand helpers


def proportion(y: float, x: float) -> float:
    return (min(y, x) + 1e-5) / (max(y, x) + 1e-5)


def edp0(beta: float = 1.0) -> float:
    """EDP of a reader whose accuracy distance and d_min, d_mean are all 0: ADP = ACP = S_{4,1}(0)."""
    s0 = 1 / (1 + 10**4)
    return 1 - 1 / (1 + 10**3 * math.exp(-(10**beta) * 2 * s0)) + 1e-7


def two_reader_doc(doc_id: str, y: float, x: float = 0.5) -> DocPairs:
    return DocPairs(
        doc_id=doc_id,
        user_doc={"P": 0.5, "Q": 0.5},
        system_doc={"P": 0.5, "Q": 0.5},
        user_pairs={("P", "Q"): x, ("Q", "P"): x},
        system_pairs={("P", "Q"): y, ("Q", "P"): y},
        accuracy={"P": 0.0, "Q": 0.0},
    )


#: y per system and document; with x = 0.5, p = 1, 0.8, 0.6 on d1 and 0.7, 0.5, 0.95 on d2 (roughly).
#: d1 ranks S1 > S2 > S3, d2 ranks S3 > S1 > S2, and the full data ranks S1 > S3 > S2.
Y = {"S1": (0.5, 0.35), "S2": (0.4, 0.25), "S3": (0.3, 0.475)}


def hand_value(system: str, doc: int, beta: float = 1.0) -> float:
    return proportion(Y[system][doc], 0.5) * edp0(beta)


def tiny_data(*, drop_s2_d2: bool = False) -> StudyData:
    docs = {}
    for system, (y1, y2) in Y.items():
        pairs = [two_reader_doc("d1", y1)]
        if not (drop_s2_d2 and system == "S2"):
            pairs.append(two_reader_doc("d2", y2))
        docs[system] = pairs
    return StudyData(options=RunOptions(measures=["m"]), doc_ids=["d1", "d2"], measures=["m"], hj=[], docs={"m": docs})


def fake(egises=0.5, perseval=0.5, p_acc=0.5, accuracy=0.5) -> SystemScore:
    return SystemScore(egises=egises, degress=1 - egises, perseval=perseval, accuracy=accuracy,
                       egises_accuracy=accuracy, p_acc=p_acc, documents=1, readers=2, rows=2)


# ------------------------------------------------------------------------------------------------ demo fixture


@pytest.fixture(scope="module")
def demo():
    return load_corpus(DEMO / "consolidated.jsonl"), load_ratings(DEMO / "ratings.csv")


@pytest.fixture(scope="module")
def demo_options():
    return RunOptions(measures=["rouge_l", "jsd"], aux=["rouge_l"], params=Params(beta=BETA), workers=1)


@pytest.fixture(scope="module")
def demo_data(demo, demo_options) -> StudyData:
    corpus, ratings = demo
    return prepare_study(corpus, demo_options, ratings=ratings)


# ------------------------------------------------------------------------------------------ prepare and score


def test_prepare_study_keeps_the_run_and_rescoring_is_identical(demo, demo_options, demo_data):
    corpus, ratings = demo
    independent = run_scores(corpus, demo_options, ratings=ratings)  # no collect hook
    assert demo_data.result.table() == independent.table()  # the hook changes nothing (no NaN in the demo)
    assert demo_data.measures == ["rouge_l", "jsd"] and demo_data.hj == ["hj:rouge_l"]
    assert demo_data.doc_ids == [d.doc_id for d in corpus.documents]
    rescored = score(demo_data)
    assert list(rescored) == ["rouge_l", "jsd", "hj:rouge_l"]
    for row in independent.rows:
        ours = rescored[row.measure][row.system]
        assert repr(ours) == repr(row.score), f"{row.measure}/{row.system}"  # bit for bit, details included
        assert ours.per_document and ours.per_reader


def test_rescoring_other_params_equals_score_system_on_the_same_docpairs(demo_data):
    params = Params(alpha=2.0, beta=1.3, gamma=3.0, simplified=True)
    rescored = score(demo_data, params)
    for label in ("jsd", "hj:rouge_l"):
        for system, docs in demo_data.docs[label].items():
            assert repr(rescored[label][system]) == repr(score_system(docs, params))
    assert rescored["jsd"]["PersonaPointer"].perseval != score(demo_data)["jsd"]["PersonaPointer"].perseval


def test_score_on_the_hand_case():
    scores = score(tiny_data())
    for system in Y:
        expected = (hand_value(system, 0) + hand_value(system, 1)) / 2
        assert scores["m"][system].perseval == pytest.approx(expected, abs=1e-15)
        assert scores["m"][system].egises == pytest.approx(
            1 - (proportion(Y[system][0], 0.5) + proportion(Y[system][1], 0.5)) / 2, abs=1e-15)


# ----------------------------------------------------------------------------------------------- tables, ranks


def test_benchmark_tables_rank_each_column_in_its_direction():
    scores = {
        "m": {"A": fake(egises=0.2, perseval=0.3, p_acc=0.1), "B": fake(egises=0.1, perseval=0.3, p_acc=0.4),
              "C": fake(egises=0.9, perseval=0.5, p_acc=float("nan"))},
        "n": {"B": fake(egises=0.5, perseval=0.1)},
        "hj:m": {"A": fake()},
    }
    tables = benchmark_tables(scores)
    assert set(tables) == {"perseval", "egises", "p_acc"}
    perseval = {row["system"]: row for row in tables["perseval"]}
    assert [row["system"] for row in tables["perseval"]] == ["A", "B", "C"]
    assert "hj:m" not in perseval["A"]
    assert (perseval["C"]["m_rank"], perseval["A"]["m_rank"], perseval["B"]["m_rank"]) == (1, 2, 2)  # tie shares 2
    assert perseval["A"]["n_rank"] is None and math.isnan(perseval["A"]["n"]) and perseval["B"]["n_rank"] == 1
    egises = {row["system"]: row for row in tables["egises"]}
    assert (egises["B"]["m_rank"], egises["A"]["m_rank"], egises["C"]["m_rank"]) == (1, 2, 3)  # lower is better
    assert egises["B"]["m"] == 0.1
    p_acc = {row["system"]: row for row in tables["p_acc"]}
    assert (p_acc["B"]["m_rank"], p_acc["A"]["m_rank"], p_acc["C"]["m_rank"]) == (1, 2, None)
    assert "hj:m_rank" in benchmark_tables(scores, include_hj=True)["perseval"][0]


def test_rank_agreement_by_hand():
    scores = {"m": {"A": fake(0.1, 0.4), "B": fake(0.2, 0.2), "C": fake(0.3, 0.3), "D": fake(0.4, 0.1),
                    "E": fake(float("nan"), 0.9)}}
    result = rank_agreement(scores, "m")
    assert result["egises_ranking"] == ["A", "B", "C", "D"]  # lowest EGISES first
    assert result["perseval_ranking"] == ["A", "C", "B", "D"]
    assert result["systems"] == ["A", "B", "C", "D"] and result["n"] == 4
    assert result["spearman"] == pytest.approx(0.8)  # 1 - 6 * 2 / (4 * 15)
    assert result["kendall"] == pytest.approx(2 / 3)  # one discordant pair (B, C) of six


def test_borda_kendall_three_systems():
    # sums: A 1+3 = 4, B 2+1 = 3, C 3+2 = 5
    assert borda_kendall([["A", "B", "C"], ["B", "C", "A"]]) == ["B", "A", "C"]
    # sums: A 3, B 3, C 6: the tie keeps the first ranking's order
    assert borda_kendall([["A", "B", "C"], ["B", "A", "C"]]) == ["A", "B", "C"]
    assert borda_kendall([["B", "A", "C"], ["A", "B", "C"]]) == ["B", "A", "C"]
    assert borda_kendall([["C", "A", "B"]]) == ["C", "A", "B"]
    with pytest.raises(ValueError):
        borda_kendall([["A", "B"], ["A", "C"]])
    with pytest.raises(ValueError):
        borda_kendall([])


def test_borda_vs_hj_by_hand():
    scores = {
        "m": {"A": fake(perseval=0.4, accuracy=0.9), "B": fake(perseval=0.3, accuracy=0.1),
              "C": fake(perseval=0.2, accuracy=0.2), "D": fake(perseval=0.1, accuracy=0.3)},
        "hj:x": {"A": fake(perseval=0.8), "B": fake(perseval=0.9), "C": fake(perseval=0.1), "D": fake(perseval=0.5)},
    }
    rows = borda_vs_hj(scores, "hj:x")
    assert [(r["perseval_measure"], r["accuracy_measure"]) for r in rows] == [("m", None), ("m", "m")]
    alone, combined = rows
    assert alone["ranking"] == ["A", "B", "C", "D"] and alone["hj_ranking"] == ["B", "A", "D", "C"]
    assert alone["spearman"] == pytest.approx(0.6) and alone["kendall"] == pytest.approx(1 / 3)
    # PSE ranking A B C D, accuracy ranking (lower distance first) B C D A: sums A 5, B 3, C 5, D 7; A and C
    # tie and stay tied. -sums vs HJ (A .8, B .9, C .1, D .5): ranks x = (2.5, 1, 2.5, 4), y = (2, 1, 4, 3),
    # rho = 3 / sqrt(4.5 * 5); pairs: AB, AD, BC, BD concordant, CD discordant, AC tied in x:
    # tau-b = (4 - 1) / sqrt((6 - 1) * 6)
    assert combined["aggregate"] == "BK(PSE-m, m)"
    assert combined["ranking"] == ["B", "A", "C", "D"] and combined["borda_sums"] == [3.0, 5.0, 5.0, 7.0]
    assert combined["spearman"] == pytest.approx(3 / math.sqrt(22.5))
    assert combined["kendall"] == pytest.approx(3 / math.sqrt(30))


def test_borda_vs_hj_keeps_tied_perseval_values_tied():
    """Tied PerSEval values are one rank (average), not broken by input order: the alone row correlates values."""
    scores = {
        "m": {"A": fake(perseval=0.5, accuracy=0.1), "B": fake(perseval=0.5, accuracy=0.2),
              "C": fake(perseval=0.1, accuracy=0.3)},
        "hj:x": {"A": fake(perseval=0.2), "B": fake(perseval=0.9), "C": fake(perseval=0.1)},
    }
    alone, combined = borda_vs_hj(scores, "hj:x")
    # values (.5, .5, .1) vs (.2, .9, .1): AB tied in x, AC and BC concordant: tau-b = 2 / sqrt(2 * 3)
    assert alone["kendall"] == pytest.approx(2 / math.sqrt(6))
    # PSE average ranks A 1.5, B 1.5, C 3; accuracy ranks A 1, B 2, C 3: sums A 2.5, B 3.5, C 6
    assert combined["borda_sums"] == [2.5, 3.5, 6.0] and combined["ranking"] == ["A", "B", "C"]


# --------------------------------------------------------------------------------------------- document matrix


def test_document_matrix_on_the_hand_case():
    data = tiny_data(drop_s2_d2=True)
    scores = score(data)
    systems, doc_ids, values, weights = document_matrix(scores, "m")
    assert systems == ["S1", "S2", "S3"] and doc_ids == ["d1", "d2"] and weights is None
    for row, system in enumerate(systems):
        assert values[row, 0] == pytest.approx(hand_value(system, 0), abs=1e-15)
    assert math.isnan(values[1, 1])  # S2 has no d2
    assert scores["m"]["S2"].perseval == values[1, 0]
    _, order, reordered, _ = document_matrix(scores, "m", "egises", doc_ids=["d2", "d1"])
    assert order == ["d2", "d1"]
    assert reordered[0, 0] == pytest.approx(1 - proportion(Y["S1"][1], 0.5), abs=1e-15)
    with pytest.raises(ValueError):
        document_matrix(scores, "m", "p_acc")


@pytest.mark.parametrize("label", ["rouge_l", "hj:rouge_l"])
def test_document_matrix_means_reproduce_the_system_values(demo_data, label):
    scores = score(demo_data)
    for column in studies.DOCUMENT_COLUMNS:
        systems, doc_ids, values, weights = document_matrix(scores, label, column)
        if label == "rouge_l":
            assert doc_ids == demo_data.doc_ids  # every demo document has 3-4 readers
        assert (weights is None) == (column != "accuracy")
        w = np.ones_like(values) if weights is None else weights
        for row, system in enumerate(systems):
            finite = ~np.isnan(values[row])
            mean = np.sum(w[row][finite] * values[row][finite]) / np.sum(w[row][finite])
            assert mean == pytest.approx(getattr(scores[label][system], column), abs=1e-12), (column, system)


# ------------------------------------------------------------------------------------------------ beta ablation


def test_beta_ablation_only_rescores(demo_data, monkeypatch):
    def forbidden(*args, **kwargs):
        raise AssertionError("a distance was computed")

    monkeypatch.setattr("metaeval.core.pipeline.compute", forbidden)
    monkeypatch.setattr("metaeval.core.distances.compute", forbidden)
    monkeypatch.setattr("metaeval.core.pipeline.get_measure", forbidden)
    rows = beta_ablation(demo_data)
    betas = sorted({row["beta"] for row in rows})
    assert len(betas) == 11 and betas[0] == 1.0 and betas[-1] == 2.0 and 1.7 in betas
    assert len(rows) == 11 * 2 * 1
    # beta = 1.7 is the run's beta: its correlations are those of the run's own scores
    run = demo_data.result.scores()
    expected = correlation_grid({m: run[m] for m in ("rouge_l", "jsd")}, {"hj:rouge_l": run["hj:rouge_l"]})
    at = [row for row in rows if row["beta"] == 1.7]
    for row, cell in zip(at, expected, strict=True):
        assert (row["auto_measure"], row["hj_measure"]) == (cell.auto_measure, cell.hj_measure)
        assert row["pearson"] == cell.correlation.pearson and row["kendall"] == cell.correlation.kendall
    first = [row["pearson"] for row in rows if row["beta"] == 1.0]
    assert first != [row["pearson"] for row in at]  # beta matters


def test_beta_ablation_can_hold_hj_fixed(demo_data):
    rows = beta_ablation(demo_data, betas=[1.7], params=Params(beta=1.0), vary_hj=False)
    auto = score(demo_data, Params(beta=1.7), labels=["rouge_l", "jsd"])
    human = score(demo_data, Params(beta=1.0), labels=["hj:rouge_l"])
    cells = correlation_grid(
        {m: {s: v.perseval for s, v in auto[m].items()} for m in auto},
        {h: {s: v.perseval for s, v in human[h].items()} for h in human},
    )
    assert [row["spearman"] for row in rows] == [cell.correlation.spearman for cell in cells]
    assert [row["pearson"] for row in rows] == [cell.correlation.pearson for cell in cells]
    with pytest.raises(ValueError):
        beta_ablation(tiny_data())


# ---------------------------------------------------------------------------------------------------- stability


def test_paper_stability_two_documents_by_hand():
    data = tiny_data()
    rows = stability(data, definition="paper", seed=11)
    assert len(rows) == 3 * 4 and {row.definition for row in rows} == {"paper"}
    full = {s: (hand_value(s, 0) + hand_value(s, 1)) / 2 for s in Y}
    sizes = {80: 2, 60: 1, 40: 1, 20: 1}  # round(p/100 * 2), at least 1
    for row in rows:
        system, level = row.system, row.level
        assert row.set_size == sizes[level] and row.documents == 2 and row.samples == 10
        assert row.full == pytest.approx(full[system], abs=1e-15)
        a, b = hand_value(system, 0), hand_value(system, 1)
        for draw, value in zip(row.draw_seeds, row.scores, strict=True):
            picked = np.random.RandomState(draw).choice(2, sizes[level], replace=True)  # the documented draw
            assert value == pytest.approx(np.mean([(a, b)[i] for i in picked]), abs=1e-15)
        assert row.value == pytest.approx(np.mean(row.scores), abs=1e-15)
        assert row.level_bias == pytest.approx(row.value - full[system], abs=1e-15)
        assert row.level_variance == pytest.approx(np.var(row.scores), abs=1e-15)
        # rank stability: a one-document set ranks like that document, rho = 0.5, tau = 1/3 against the full
        # ranking S1 > S3 > S2; a set holding both documents ranks like the full data (rho = tau = 1)
        samples = zip(row.epsilon_spearman_samples, row.epsilon_kendall_samples, row.draw_seeds, strict=True)
        for rho, tau, draw in samples:
            picked = set(np.random.RandomState(draw).choice(2, sizes[level], replace=True).tolist())
            assert (rho, tau) == pytest.approx((1.0, 1.0) if picked == {0, 1} else (0.5, 1 / 3))
        if sizes[level] == 1:
            assert row.epsilon_spearman == pytest.approx(0.5) and row.epsilon_kendall == pytest.approx(1 / 3)
    for system in Y:
        mine = [row for row in rows if row.system == system]
        level_means = [full[system], *[row.value for row in mine]]  # the full data is the 100 % level
        assert mine[0].bias == pytest.approx(np.std(level_means), abs=1e-15)
        assert mine[0].variance == pytest.approx(np.var(level_means), abs=1e-15)
        assert mine[0].delta == max(mine[0].bias, mine[0].variance)
    again = stability(data, definition="paper", seed=11)
    assert [row.scores for row in again] == [row.scores for row in rows]
    other = stability(data, definition="paper", seed=12)
    assert [row.scores for row in other] != [row.scores for row in rows]
    summary = stability_summary(rows)
    assert len(summary) == 1 and summary[0]["delta"] == max(row.delta for row in rows)
    assert summary[0]["epsilon_spearman"] == pytest.approx(0.5)


def test_paper_stability_matches_the_enumerated_resample_distribution():
    data = tiny_data()
    rows = stability(data, definition="paper", levels=(80, 40), samples=4000, seed=3)
    for row in rows:
        a, b = hand_value(row.system, 0), hand_value(row.system, 1)
        # one document: a or b with probability 1/2 each; two documents: a, (a+b)/2, b with 1/4, 1/2, 1/4
        expected_variance = (a - b) ** 2 / 4 if row.level == 40 else (a - b) ** 2 / 8
        assert row.value == pytest.approx((a + b) / 2, abs=4 * math.sqrt(expected_variance / 4000))
        assert row.level_variance == pytest.approx(expected_variance, rel=0.1)
        if row.level == 80:  # P(both documents) = 1/2: mean rho = 0.5 * 1 + 0.5 * 0.5
            assert row.epsilon_spearman == pytest.approx(0.75, abs=0.03)


def test_paper_stability_is_exact_when_documents_agree():
    docs = {
        system: [two_reader_doc("d1", y), two_reader_doc("d2", y)]
        for system, y in {"S1": 0.5, "S2": 0.4, "S3": 0.3}.items()
    }
    data = StudyData(options=RunOptions(measures=["m"]), doc_ids=["d1", "d2"], measures=["m"], hj=[], docs={"m": docs})
    for row in stability(data, definition="paper", seed=0):
        assert row.bias == pytest.approx(0, abs=1e-15) and row.variance == pytest.approx(0, abs=1e-15)
        assert row.epsilon_spearman_min == 1.0 and row.epsilon_kendall_min == 1.0


def test_authors_stability_equals_the_literal_reference(demo):
    corpus, _ = demo
    systems = ["PersonaPointer", "ProfileBARTx", "LeadLineBaseline"]
    params = Params(beta=BETA)
    data = prepare_study(corpus, RunOptions(measures=["jsd"], compat=True, systems=systems, params=params, workers=1))
    rows = stability(data, definition="authors", levels=(80, 40), samples=2, seed=5)
    assert {row.definition for row in rows} == {"authors"}
    assert [row.level for row in rows[:3]] == [100, 80, 40]
    reference: dict[tuple[float, int], dict] = {}
    for row in rows:
        for draw in row.draw_seeds:
            key = (row.level, draw)
            if key not in reference:
                reference[key] = reference_sampled_scores(
                    corpus, AUTHORS_DISTANCES["jsd"], row.level, seed=draw, systems=systems, beta=BETA
                )
    for system in systems:
        mine = [row for row in rows if row.system == system]
        assert [row.samples for row in mine] == [1, 2, 2]
        level_values = []
        for row in mine:
            expected = [reference[(row.level, draw)][system] for draw in row.draw_seeds]
            assert row.perseval_samples == pytest.approx([e["perseval"] for e in expected], abs=1e-12)
            assert row.egises_samples == pytest.approx([e["egises"] for e in expected], abs=1e-12)
            assert row.sample_rows == expected[0]["perseval_rows"] and row.rows == expected[0]["rows"]
            assert row.value == float(np.round(np.mean([e["perseval"] for e in expected]), 4))
            level_values.append(row.value)
        assert mine[0].perseval_samples[0] == pytest.approx(mine[0].full, abs=1e-12)  # 100 %: a permutation
        assert mine[0].bias == round(float(np.std(level_values)), 4)
        assert mine[0].variance == pytest.approx(float(np.var(level_values)), abs=1e-15)
        assert len({row.bias for row in mine}) == 1  # one value per (measure, system)
    # smaller samples keep fewer rows, and the draw is the documented one
    row = next(r for r in rows if r.level == 40)
    assert row.sample_rows == round(0.4 * row.rows)
    assert row.draw_seeds[0] == draw_seed(5, 40, 0)


def test_vectorised_rank_correlations_equal_correlate():
    rng = np.random.RandomState(0)
    full = np.array([0.3, 0.1, 0.4, 0.1, 0.5, 0.9])  # a tie in the full data
    samples = rng.randint(0, 4, size=(6, 40)).astype(float)  # many ties in the draws
    samples[:, 0] = 2.0  # a constant draw: undefined
    samples[2, 1] = np.nan  # a NaN: dropped pairwise
    spearman, kendall = studies.subsampling._rank_correlations(samples, full)
    for column in range(samples.shape[1]):
        expected = correlate(samples[:, column].tolist(), full.tolist())
        assert spearman[column] == pytest.approx(expected.spearman, abs=1e-12, nan_ok=True)
        assert kendall[column] == pytest.approx(expected.kendall, abs=1e-12, nan_ok=True)
    assert math.isnan(spearman[0]) and not math.isnan(spearman[1])


def test_stability_rejects_bad_arguments():
    data = tiny_data()
    with pytest.raises(ValueError):
        stability(data, definition="other", seed=1)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        stability(data, definition="paper", levels=(0,), seed=1)
    with pytest.raises(ValueError):
        stability(data, definition="paper", seed=-1)
    assert draw_seed(1, 80, 0) != draw_seed(1, 80, 1) != draw_seed(1, 60, 1)
