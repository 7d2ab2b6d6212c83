"""Benchmark: PerSEval on a generated PENS-scale corpus, ours vs the straightforward pair-at-a-time way.

    python benchmarks/metaeval_bench.py [--docs 3840] [--subset 40] [--workers N] [--measures ...]

Corpus (seeded): ``--docs`` documents with 400-700-word bodies drawn from a Zipf vocabulary, 3-5 readers each
(mean ~4), headline-length reader summaries (8-16 words), 10 systems: 5 personalized (a different summary per
reader) and 5 generic (one summary per document, as non-personalized models produce).

Prints, per lexical measure (compat mode, the authors' functions): unique pairs, distance pairs/s, and the
end-to-end wall time for all 10 systems (distances + scoring) with a cold cache; then the same work done the
straightforward way (:mod:`tests.reference.straightforward`: one library call per pair, recomputed for every
system as the authors' pipeline does) on the first ``--subset`` documents, the ratio, and whether the numbers
are identical. Not run by the tests (``make bench``).
"""
from __future__ import annotations

import argparse
import itertools
import math
import os
import platform
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.core.io.corpus import Corpus, Document  # noqa: E402
from metaeval.core.measures.cache import DistanceCache  # noqa: E402
from metaeval.core.measures.distances import default_workers  # noqa: E402
from metaeval.core.perseval.measure import Params  # noqa: E402
from metaeval.core.perseval.pipeline import RunOptions, run_scores  # noqa: E402

PERSONALIZED = [f"pers_{i}" for i in range(5)]
GENERIC = [f"generic_{i}" for i in range(5)]
MEASURES = ("rouge_l", "jsd", "bleu4", "rouge_su4")


def make_vocabulary(rng: random.Random, size: int = 20000) -> tuple[list[str], list[float]]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    words = sorted({"".join(rng.choice(letters) for _ in range(rng.randint(2, 10))) for _ in range(size * 2)})[:size]
    rng.shuffle(words)
    weights = [1.0 / (rank + 1) ** 1.07 for rank in range(len(words))]
    return words, list(itertools.accumulate(weights))


def sentence(rng: random.Random, words: list[str], weights: list[float], n: int) -> list[str]:
    return rng.choices(words, cum_weights=weights, k=n)


def make_corpus(docs: int, seed: int = 2026) -> Corpus:
    rng = random.Random(seed)
    words, weights = make_vocabulary(rng)
    documents = []
    for index in range(docs):
        body_words = sentence(rng, words, weights, rng.randint(400, 700))
        for position in range(rng.randint(10, 20), len(body_words), rng.randint(12, 25)):
            body_words[position] += "."
        body = " ".join(body_words)
        headline = " ".join(sentence(rng, words, weights, rng.randint(8, 14)))
        readers = [f"U{rng.randint(1, 5000)}" for _ in range(rng.choice([3, 4, 4, 4, 5]))]
        readers = list(dict.fromkeys(readers))
        generic = {name: " ".join(_summary(rng, body_words, words, weights)) for name in GENERIC}
        summaries = {}
        for reader in readers:
            entry = {"user": " ".join(_summary(rng, body_words, words, weights))}
            for name in PERSONALIZED:
                entry[name] = " ".join(_summary(rng, body_words, words, weights))
            entry.update(generic)
            summaries[reader] = entry
        documents.append(Document(f"N{index}", headline, body, summaries))
    return Corpus(tuple(documents), tuple(PERSONALIZED + GENERIC), source="generated")


def _summary(rng: random.Random, body: list[str], words: list[str], weights: list[float]) -> list[str]:
    """8-16 words: mostly a window of the body, some words replaced."""
    length = rng.randint(8, 16)
    start = rng.randint(0, len(body) - length)
    out = [word.rstrip(".") for word in body[start : start + length]]
    for position in range(length):
        if rng.random() < 0.3:
            out[position] = rng.choices(words, cum_weights=weights)[0]
    return out


def subset(corpus: Corpus, docs: int) -> Corpus:
    return Corpus(corpus.documents[:docs], corpus.systems, corpus.source)


def ours(corpus: Corpus, measures: tuple[str, ...], workers: int, beta: float) -> tuple[dict, dict, float]:
    """End-to-end with an empty cache: returns scores, per-measure stats, wall seconds."""
    with tempfile.TemporaryDirectory() as folder, DistanceCache(folder) as cache:
        started = time.perf_counter()
        result = run_scores(
            corpus,
            RunOptions(measures=measures, params=Params(beta=beta), compat=True, workers=workers),
            cache=cache,
        )
        wall = time.perf_counter() - started
    scores = {(row.measure, row.system): row.as_dict() for row in result.rows}
    stats = {stat.measure: stat for stat in result.stats}
    return scores, {"stats": stats, "timings": result.timings}, wall


def straightforward(corpus: Corpus, measure: str, beta: float) -> tuple[dict, float]:
    from tests.reference.straightforward import AUTHORS_DISTANCES, reference_scores

    started = time.perf_counter()
    scores = reference_scores(corpus, AUTHORS_DISTANCES[measure], beta=beta)
    return scores, time.perf_counter() - started


def identical(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=3840)
    parser.add_argument("--subset", type=int, default=40, help="documents for the straightforward comparison")
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--beta", type=float, default=1.7)
    args = parser.parse_args()
    measures = tuple(args.measures.split(","))
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    started = time.perf_counter()
    corpus = make_corpus(args.docs)
    readers = sum(len(d.summaries) for d in corpus.documents)
    print(f"corpus: {len(corpus.documents)} documents, {readers} reader entries "
          f"({readers / len(corpus.documents):.2f} per document), 10 systems; generated in "
          f"{time.perf_counter() - started:.1f} s")

    print(f"\n== ours, all 10 systems, cold cache, {args.workers} workers ==")
    total = 0.0
    for measure in measures:
        _, info, wall = ours(corpus, (measure,), args.workers, args.beta)
        stat = info["stats"][next(iter(info["stats"]))]
        total += wall
        print(f"{measure:<10} unique pairs {stat.pairs:>8}  distances {stat.compute_seconds:6.1f} s "
              f"({stat.pairs_per_second:>9.0f} pairs/s)  end to end {wall:6.1f} s")
    print(f"all {len(measures)} measures end to end: {total:.1f} s (one command each)")
    _, info, wall = ours(corpus, measures, args.workers, args.beta)
    steps = ", ".join(f"{key} {value:.1f} s" for key, value in info["timings"].items() if key != "total")
    print(f"all {len(measures)} measures in one command: {wall:.1f} s ({steps})")

    print(f"\n== straightforward vs ours on the first {args.subset} documents (1 process each way) ==")
    small = subset(corpus, args.subset)
    for measure in measures:
        fast_scores, _, fast_wall = ours(small, (measure,), 1, args.beta)
        slow_scores, slow_wall = straightforward(small, measure, args.beta)
        same = all(
            identical(float(fast_scores[(measure, system)][key]), float(slow_scores[system][key]))
            for system in small.systems
            for key in ("egises", "degress", "perseval", "accuracy")
        )
        worst = max(
            abs(float(fast_scores[(measure, system)][key]) - float(slow_scores[system][key]))
            for system in small.systems
            for key in ("egises", "degress", "perseval", "accuracy")
        )
        print(f"{measure:<10} straightforward {slow_wall:7.2f} s  ours {fast_wall:6.2f} s  "
              f"ratio {slow_wall / fast_wall:6.1f}x  identical: {same} (max |diff| {worst:.1e})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
