"""The array path (perseval/arrays.py) against the reference (measure.score_system): the same SystemScore, every
float of every detail bit for bit, on distances chosen to reach the edge cases of eq. 1-7: zero document distances
(weight 0), NaN distances (NaN proportions, NaN accuracy = 1.0), tiny document distances whose weights overflow
exp, equal values (ties of min/max), every parameter variant and readers dropped for missing summaries."""
from __future__ import annotations

import math

import numpy as np
import pytest

from metaeval.core.io.corpus import Corpus, Document
from metaeval.core.measures.distances import corpus_doc_pairs, plan_corpus, score_systems
from metaeval.core.perseval.arrays import exps
from metaeval.core.perseval.measure import Params, score_system

VALUES = [0.0, 0.0, 1.0, 0.5, 0.25, 1e-300, 1e-5, math.nan, 0.999, 0.3, 0.3, 0.7]


def _corpus(seed: int, docs: int = 14) -> Corpus:
    rng = np.random.default_rng(seed)
    documents = []
    for index in range(docs):
        readers = [f"r{n}" for n in range(int(rng.integers(2, 6)))]
        summaries: dict[str, dict[str, str]] = {}
        for reader in readers:
            entry = {"user": f"u{index}-{reader}-{int(rng.integers(0, 3))}"}
            for system in ("S", "T", "G"):
                if rng.random() < 0.1:
                    continue  # a missing summary: the reader is dropped for that system
                entry[system] = f"{system}{index}" if system == "G" else f"{system}{index}-{int(rng.integers(0, 4))}"
            summaries[reader] = entry
        documents.append(Document(f"d{index}", "Head", f"body {index}", summaries))
    return Corpus(tuple(documents), ("S", "T", "G"))


def _distances(pairs, seed: int) -> dict[tuple[str, str], float]:
    rng = np.random.default_rng(seed)
    return {pair: (VALUES[int(rng.integers(0, len(VALUES)))] if rng.random() < 0.5 else float(rng.random()))
            for pair in pairs}


@pytest.mark.parametrize("params", [
    Params(beta=1.7),
    Params(),
    Params(simplified=True),
    Params(egises_decimals=4, alpha=-2.0, gamma=0.5),
    Params(alpha=10.0, beta=10.0, gamma=-10.0, delta=10.0),
])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_array_path_scores_every_system_as_the_reference_does(params, seed):
    plan = plan_corpus(_corpus(seed), missing="drop")
    pairs = plan.text_pairs()
    distance = _distances(pairs, seed)
    fast = score_systems(plan, distance, params, workers=1)
    assert list(fast) == ["S", "T", "G"]
    for system in plan.systems:
        reference = score_system(corpus_doc_pairs(plan, system, distance), params)
        assert repr(fast[system]) == repr(reference)  # every float bit for bit, NaN included
        assert fast[system].rows == sum(len(d.readers) * (len(d.readers) - 1) for d in plan.systems[system])


def test_the_layout_lists_the_pairs_in_plan_order():
    plan = plan_corpus(_corpus(4), missing="drop")
    pairs, layouts = plan.indexed()
    assert pairs == plan.text_pairs() and len(set(pairs)) == len(pairs)
    for system, layout in layouts.items():
        first = plan.systems[system][0]
        j, k = first.readers[0], first.readers[1]
        assert pairs[int(layout.user_doc[0])] == (first.user[j], first.doc_text)
        assert pairs[int(layout.accuracy[0])] == (first.system[j], first.user[j])
        assert pairs[int(layout.row_system[0])] == (first.system[j], first.system[k])
        assert layout.readers[: len(first.readers)] == first.readers


def test_exp_is_math_exp_and_overflows_to_infinity():
    values = np.array([0.0, -1.5, 2.5, 709.0, 710.0, math.inf, -math.inf, math.nan])
    out = exps(values)
    assert [float(v).hex() for v in out[:4]] == [math.exp(v).hex() for v in values[:4].tolist()]
    assert out[4] == math.inf and out[5] == math.inf and out[6] == 0.0 and math.isnan(out[7])
