"""The low-precision check (metaeval.core.perseval.precision): groups by hand, and whole runs with errors injected
into a stand-in for a bfloat16 neural measure (exact JSD plus a known error on the pairs of chosen systems), so the
check is tested on a CPU without a GPU: the measured error, the groups, the float32 re-check that restores
float32's order, flag and off modes."""
from __future__ import annotations

import math
import random
from collections.abc import Sequence

import numpy as np
import pytest

from metaeval.core.io.corpus import Corpus, Document
from metaeval.core.measures import registry
from metaeval.core.measures.distances import plan_corpus
from metaeval.core.measures.divergence import JSD
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions, run_scores
from metaeval.core.perseval.precision import MARGIN, PrecisionCheck, close_groups, sample_plan

SYSTEMS = tuple(f"S{i}" for i in range(6))
WORDS = "the a cat dog ran home city market police vote law family school night water food name town".split()


def make_corpus(documents: int = 12, seed: int = 5) -> Corpus:
    rng = random.Random(seed)

    def text(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n))

    docs = []
    for index in range(documents):
        summaries = {}
        for reader in ("U1", "U2", "U3", "U4"):
            entry = {"user": text(6)}
            entry.update({system: text(rng.randint(4, 8)) for system in SYSTEMS})
            summaries[reader] = entry
        docs.append(Document(f"D{index}", text(8), text(40), summaries))
    return Corpus(tuple(docs), SYSTEMS, source="generated")


class Injected(JSD):
    """JSD in float32; in bfloat16 the pairs holding a text of a system in ``TARGET`` are off by ``ERROR``."""

    name = "infolm"
    ERROR = 0.0
    TARGET: frozenset[str] = frozenset()
    made: list[Injected] = []

    def __init__(self, dtype: str = "float32", recheck: str = "auto", compile: str = "auto") -> None:
        super().__init__()
        self.dtype, self.recheck = dtype, recheck
        Injected.made.append(self)

    @property
    def options(self) -> dict[str, object]:
        return {"dtype": self.dtype}

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        exact = super().distances(pairs)
        if self.dtype == "float32":
            return exact
        noise = np.array([self.ERROR if a in self.TARGET or b in self.TARGET else 0.0 for a, b in pairs])
        return exact + noise


@pytest.fixture()
def injected(monkeypatch: pytest.MonkeyPatch) -> type[Injected]:
    monkeypatch.setitem(registry.MEASURES, "infolm", lambda compat, **options: Injected(**options))
    monkeypatch.setattr(Injected, "made", [])
    return Injected


def run(corpus: Corpus, dtype: str, recheck: str = "auto"):
    options = RunOptions(measures=["infolm"], params=Params(beta=1.7),
                         measure_options={"infolm": {"dtype": dtype, "recheck": recheck}}, workers=1)
    return run_scores(corpus, options)


def order(result) -> list[str]:
    scores = result.scores()["infolm"]
    return sorted(scores, key=lambda system: -scores[system])


def test_close_groups_by_hand() -> None:
    # binary-exact values, so the differences are exact: a-b 1/128, c-d 1/256, d-e 1/512
    values = {"a": 0.5, "b": 0.4921875, "c": 0.375, "d": 0.37109375, "e": 0.369140625, "f": math.nan, "g": 0.1}
    assert close_groups(values, 0.01) == [["a", "b"], ["c", "d", "e"]]
    assert close_groups(values, 0.0) == []
    assert close_groups(values, 1 / 256) == [["c", "d", "e"]]  # a chain: c-d and d-e within the bound
    assert close_groups(values, 1 / 512) == [["d", "e"]]
    assert close_groups({"a": 0.2, "b": 0.2}, 0.0) == [["a", "b"]]  # an exact tie is within any bound


def test_sample_plan_takes_every_kth_document_within_bounds() -> None:
    plan = plan_corpus(make_corpus(documents=12), None)
    sub, count = sample_plan(plan, share=0.25, low=2, high=40)
    assert count == 3
    assert [d.doc_id for d in sub.systems["S0"]] == ["D0", "D4", "D8"]
    assert sample_plan(plan, share=0.01, low=2, high=40)[1] == 2
    assert sample_plan(plan, share=1.0, low=2, high=5)[1] == 5
    assert sample_plan(plan, share=0.5, low=20, high=40)[1] == 12  # fewer documents than the floor: all


def test_float32_runs_are_not_checked(injected: type[Injected]) -> None:
    result = run(make_corpus(), "float32")
    assert result.precision == {}


def reordering_error(corpus: Corpus, injected: type[Injected]) -> tuple[float, list[str], list[str]]:
    """The smallest injected error (on the pairs of the system just below the top one) that reorders systems."""
    exact = order(run(corpus, "float32"))
    injected.TARGET = frozenset(t for d in corpus.documents for s in d.summaries.values() for t in [s[exact[1]]])
    for error in (0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2):
        injected.ERROR = error
        low = order(run(corpus, "bfloat16", recheck="off"))
        if low != exact:
            return error, exact, low
    raise AssertionError("no injected error reorders the systems")


def test_recheck_restores_float32_order_and_values(injected: type[Injected], monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = make_corpus()
    error, exact_order, low_order = reordering_error(corpus, injected)
    monkeypatch.setattr(injected, "ERROR", error)
    exact = run(corpus, "float32").scores()["infolm"]
    checked = run(corpus, "bfloat16")
    check = PrecisionCheck(**checked.precision["infolm"])
    assert check.mode == "auto" and check.dtype == "bfloat16"
    assert check.sample_documents == 4 and check.documents == 12
    assert check.error > 0 and check.bound == pytest.approx(MARGIN * check.error)
    moved = {s for s in exact_order if exact_order.index(s) != low_order.index(s)}
    assert moved <= set(check.rechecked)
    final = checked.scores()["infolm"]
    for system in check.rechecked:  # re-scored in float32 on every document: float32's values exactly
        assert final[system] == exact[system]
    assert order(checked) == exact_order
    assert "perseval" in check.reordered
    assert check.reordered["perseval"]["float32"] == [s for s in exact_order if s in set(check.rechecked)]
    assert check.float32_pairs > 0
    assert "re-checked in float32" in check.message()


def test_flag_names_the_groups_and_changes_nothing(injected: type[Injected]) -> None:
    corpus = make_corpus()
    error, _, _ = reordering_error(corpus, injected)
    injected.ERROR = error
    plain = run(corpus, "bfloat16", recheck="off")
    flagged = run(corpus, "bfloat16", recheck="flag")
    assert plain.precision == {}
    assert flagged.scores() == plain.scores()
    check = PrecisionCheck(**flagged.precision["infolm"])
    assert check.groups and check.rechecked == [] and check.reordered == {}
    assert "order not checked in float32" in check.message()


def test_no_error_no_recheck(injected: type[Injected]) -> None:
    injected.ERROR = 0.0
    injected.TARGET = frozenset()
    corpus = make_corpus()
    result = run(corpus, "bfloat16")
    check = PrecisionCheck(**result.precision["infolm"])
    assert check.error == 0.0 and check.groups == [] and check.rechecked == []
    assert result.scores() == run(corpus, "float32").scores()
