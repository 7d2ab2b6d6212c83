"""Zopf's sentence-preference model: similarity, comparison matrix, Bradley-Terry (against hand values and choix),
summary utility with redundancy, agreement and simulated labels."""
from __future__ import annotations

import choix
import numpy as np
import pytest

from metaeval.core.pairwise.zopf import (
    SentenceSplitterUnavailable,
    agreement,
    bradley_terry,
    comparison_matrix,
    macro_agreement,
    punkt_available,
    redundancy_factors,
    reference_weights,
    sample_pairs,
    similarity,
    simulated_judgments,
    split_sentences,
    summary_utility,
    tokens,
)

ITEMS = ["The cat sat on the mat.", "A dog barked at the cat.", "Stocks fell sharply today."]


def choix_strengths(matrix: np.ndarray) -> np.ndarray:
    params = choix.ilsr_pairwise_dense(matrix, tol=1e-14, max_iter=10_000)
    weights = np.exp(params)
    return weights / weights.sum()


def test_bt_check_values() -> None:
    assert bradley_terry(np.array([[0, 3], [1, 0]])).strengths == pytest.approx([0.75, 0.25], abs=1e-9)
    fit = bradley_terry(np.array([[0, 2, 1], [1, 0, 2], [0, 1, 0]]))
    assert fit.converged and fit.regularised == []
    assert fit.strengths == pytest.approx([0.639312, 0.257208, 0.103480], abs=1e-6)
    cycle = bradley_terry(np.array([[0, 2, 0], [0, 0, 2], [2, 0, 0]]))
    assert cycle.strengths == pytest.approx([1 / 3] * 3, abs=1e-12)


def test_bt_two_items_closed_form() -> None:
    # by hand: with two items the MLE is v_1 = W_1 / (W_1 + W_2)
    assert bradley_terry(np.array([[0, 2.5], [0.5, 0]])).strengths == pytest.approx([2.5 / 3, 0.5 / 3], abs=1e-9)


def test_bt_equals_choix_on_fractional_counts() -> None:
    rng = np.random.default_rng(4)
    matrix = rng.random((6, 6)) * 3
    np.fill_diagonal(matrix, 0)
    fit = bradley_terry(matrix)
    assert fit.converged
    assert fit.strengths == pytest.approx(choix_strengths(matrix), abs=1e-8)
    assert fit.strengths.sum() == pytest.approx(1.0)


def test_bt_equals_choix_on_a_smoothed_matrix_and_raw_comparisons() -> None:
    items = [*ITEMS, "The cat and the dog fell asleep.", "Markets rallied after the fall."]
    judgments = [(0, 2), (1, 2), (3, 4), (4, 0), (3, 1), (0, 1), (2, 4), (1, 3)]
    smoothed = comparison_matrix(judgments, 5, similarity(items, items, items))
    assert bradley_terry(smoothed).strengths == pytest.approx(choix_strengths(smoothed), abs=1e-8)
    # raw counts: every item wins and loses at least once, so the MLE exists; choix's MM on the same list
    raw = bradley_terry(comparison_matrix(judgments, 5)).strengths
    params = choix.mm_pairwise(5, judgments, tol=1e-11, max_iter=100_000)
    assert raw == pytest.approx(np.exp(params) / np.exp(params).sum(), abs=1e-7)


def test_bt_never_compared_item_is_regularised_and_recorded() -> None:
    matrix = np.array([[0, 3, 0], [1, 0, 0], [0, 0, 0]], dtype=float)
    fit = bradley_terry(matrix)
    assert fit.regularised == [2] and fit.alpha == 0.01
    regularised = matrix.copy()
    regularised[2, :2] = regularised[:2, 2] = 0.01
    assert fit.strengths == pytest.approx(choix_strengths(regularised), abs=1e-8)


def test_similarity_hand_worked() -> None:
    sim = similarity(ITEMS, ITEMS, ITEMS)
    assert np.diag(sim) == pytest.approx(1.0)
    assert sim[0, 2] == 0.0 and sim == pytest.approx(sim.T)
    # "the cat sat on the mat" vs "a dog barked at the cat": shared {the, cat} of 9 distinct tokens
    from sklearn.feature_extraction.text import TfidfVectorizer

    vectors = TfidfVectorizer(token_pattern=r"(?u)\b\w+\b").fit_transform(ITEMS).toarray()
    cosine = float(vectors[0] @ vectors[1])
    assert sim[0, 1] == pytest.approx((cosine + 2 / 9) / 2)
    assert tokens("It's A-OK") == ["it", "s", "a", "ok"]


def test_comparison_matrix_raw_and_smoothed() -> None:
    raw = comparison_matrix([(0, 1), (0, 1), (2, 0)], 3)
    assert raw.tolist() == [[0, 2, 0], [0, 0, 0], [1, 0, 0]]
    sim = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.2], [0.0, 0.2, 1.0]])
    smooth = comparison_matrix([(0, 1)], 3, sim)
    expected = np.outer(sim[0], sim[1])
    np.fill_diagonal(expected, 0)
    assert smooth == pytest.approx(expected)
    with pytest.raises(ValueError, match="two different items"):
        comparison_matrix([(1, 1)], 3)


def test_utility_duplicate_sentence_halves() -> None:
    strengths = np.array([0.5, 0.3, 0.2])
    single = summary_utility([ITEMS[1]], ITEMS, strengths)
    assert single == pytest.approx(0.3)
    assert summary_utility([ITEMS[1], ITEMS[1]], ITEMS, strengths) == pytest.approx(single / 2)


def test_utility_hand_worked_weights_and_redundancy() -> None:
    strengths = np.array([0.5, 0.3, 0.2])
    # sentence 1 = item 0 (23 chars), sentence 2 = item 2 (26 chars); no shared bigram: factors 1
    summary = [ITEMS[0], ITEMS[2]]
    expected = (23 * 0.5 + 26 * 0.2) / 49
    assert summary_utility(summary, ITEMS, strengths) == pytest.approx(expected)
    # bigrams: "a b c" = {ab, bc}, "b c d" = {bc, cd}; bc occurs twice in the summary -> (1 + 1/2) / 2 each
    assert redundancy_factors(["a b c", "b c d", "x"]) == [0.75, 0.75, 1.0]


def test_agreement_check_and_macro() -> None:
    assert agreement([5, 3, 3, 1], [0.4, 0.5, 0.7, 0.1]) == (pytest.approx(0.6), 5)
    assert agreement([2, 1], [0.3, 0.3]) == (0.5, 1)  # a metric tie counts half
    value, pairs = agreement([1, 1], [0.1, 0.2])
    assert pairs == 0 and np.isnan(value)
    assert macro_agreement([0.6, 1.0, float("nan")]) == pytest.approx(0.8)


def test_simulated_labels() -> None:
    weights = [0.9, 0.1, 0.9]
    pairs = [(0, 1), (1, 2), (0, 2)]
    assert simulated_judgments(weights, pairs) == [(0, 1), (2, 1)]
    assert simulated_judgments(weights, pairs, ties="literal") == [(0, 1), (2, 1), (2, 0)]
    assert reference_weights(ITEMS, [ITEMS[2]]) == pytest.approx(similarity(ITEMS, [ITEMS[2]], ITEMS)[:, 0])
    assert reference_weights(ITEMS, [ITEMS[2]])[2] == pytest.approx(1.0)


def test_sample_pairs_distinct_unordered_and_seeded() -> None:
    pairs = sample_pairs(5, 7, np.random.default_rng(0))
    assert len({frozenset(p) for p in pairs}) == 7
    assert all(a != b for a, b in pairs)
    assert pairs == sample_pairs(5, 7, np.random.default_rng(0))
    assert len(sample_pairs(4, 100, np.random.default_rng(1))) == 6


def test_sentence_splitting_follows_the_installed_data() -> None:
    if punkt_available():
        assert split_sentences("One here. Two there.") == ["One here.", "Two there."]
    else:
        with pytest.raises(SentenceSplitterUnavailable, match="pre-split"):
            split_sentences("One here. Two there.")
