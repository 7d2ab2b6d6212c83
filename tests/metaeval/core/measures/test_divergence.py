"""JS divergence against a scipy.stats.entropy oracle, plus small cases by hand."""
from __future__ import annotations

import math
import pickle

import numpy as np
import pytest
from scipy.stats import entropy

from metaeval.core.measures import tokens as tokens_mod
from metaeval.core.measures.divergence import JSD

from . import random_pairs

PAIRS = random_pairs(seed=77, n=400)


def scipy_jsd(a: str, b: str) -> float:
    """0.5 * (KL(P || M) + KL(Q || M)) in bits over the union vocabulary of str.split() words."""
    ta, tb = a.split(), b.split()
    if not ta and not tb:
        return 0.0
    if not ta or not tb:
        return math.nan
    vocab = sorted(set(ta) | set(tb))
    p = np.array([ta.count(w) for w in vocab], dtype=np.float64) / len(ta)
    q = np.array([tb.count(w) for w in vocab], dtype=np.float64) / len(tb)
    m = 0.5 * (p + q)
    return 0.5 * (entropy(p, m, base=2) + entropy(q, m, base=2))


def same(x, y) -> bool:
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    return x.shape == y.shape and bool(np.all((x == y) | (np.isnan(x) & np.isnan(y))))


def test_default_matches_scipy_oracle():
    expected = np.array([scipy_jsd(a, b) for a, b in PAIRS])
    got = JSD().distances(PAIRS)
    assert np.array_equal(np.isnan(got), np.isnan(expected))
    ok = ~np.isnan(expected)
    np.testing.assert_allclose(got[ok], expected[ok], rtol=0, atol=1e-12)
    assert ((got[ok] >= 0) & (got[ok] <= 1)).all()


def test_compat_rounds_like_numpy_to_4_places():
    expected = np.round(np.array([scipy_jsd(a, b) for a, b in PAIRS]), 4)
    assert same(JSD(compat=True).distances(PAIRS), expected)


def test_by_hand():
    m = JSD()
    # P = (1/2, 1/2, 0), Q = (1/2, 0, 1/2), M = (1/2, 1/4, 1/4): each KL = 1/2 log2 1 + 1/2 log2 2 = 1/2
    assert m.distances([("a b", "a c")])[0] == 0.5
    # P = {a: 2/3, b: 1/3}, Q = {a: 1}, M = {a: 5/6, b: 1/6}
    # KL(P||M) = 2/3 log2(4/5) + 1/3 log2(2); KL(Q||M) = log2(6/5)
    want = 0.5 * (2 / 3 * math.log2(0.8) + 1 / 3 + math.log2(1.2))
    assert m.distances([("a a b", "a")])[0] == pytest.approx(want, abs=1e-15)
    # identical -> exactly 0; disjoint -> exactly 1; case and punctuation count: "Cat." != "cat"
    # both empty (or whitespace only) -> 0; exactly one empty -> NaN
    got = m.distances([("x y y", "y x y"), ("a b", "c d"), ("Cat.", "cat"), ("", " \n"), ("", "a"), ("a", "\t")])
    assert same(got, [0.0, 1.0, 1.0, 0.0, math.nan, math.nan])
    # compat: np.round to 4 places
    assert JSD(compat=True).distances([("a a b", "a")])[0] == np.round(want, 4)


def test_batch_equals_single_pairs_and_survives_pickle(monkeypatch):
    for measure in (JSD(False), JSD(True)):
        pairs = PAIRS[:150]
        batch = measure.distances(pairs)
        assert batch.dtype == np.float64
        assert same(batch, [measure(a, b) for a, b in pairs])
        monkeypatch.setattr(tokens_mod.GramBags, "chunk_entries", 5)
        assert same(pickle.loads(pickle.dumps(measure)).distances(pairs), batch)
        monkeypatch.undo()
    assert JSD().distances([]).shape == (0,)
    assert JSD().name == "jsd" and JSD(True).cache_key != JSD(False).cache_key
