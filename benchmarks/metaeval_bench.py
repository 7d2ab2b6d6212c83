"""Benchmark: PerSEval on a generated PENS-scale corpus: four lexical measures in one command, checked.

    python benchmarks/metaeval_bench.py [--docs 3840] [--subset 40] [--workers N] [--measures ...]
        [--expect benchmarks/results/metaeval_bench_3840.json] [--save FILE] [--each] [--no-reference]

Corpus (seeded): ``--docs`` documents with 400-700-word bodies drawn from a Zipf vocabulary, 3-5 readers each
(mean ~4), headline-length reader summaries (8-16 words), 10 systems: 5 personalized (a different summary per
reader) and 5 generic (one summary per document, as non-personalized models produce).

Prints the machine and its load, then the headline figure: all measures (compat mode, the authors' functions) in
one command, cold cache, with its steps (plan, distances and scoring per measure). Then the checks:

* **reference**: every system re-scored from the same distances by the reference path
  (:func:`~metaeval.core.perseval.measure.score_system`, one Python loop per row, as before issue 34); every
  :class:`SystemScore` must be equal to the fast path's bit for bit, per-document and per-reader detail included;
* **expect**: the system values and a digest of all the detail against a file saved from an earlier version
  (``--save``; ``benchmarks/results/metaeval_bench_3840.json`` holds the numbers of the code before issue 34);
* **straightforward**: the straightforward way (:mod:`tests.reference.straightforward`: one library call per pair,
  recomputed for every system as the authors' pipeline does) on the first ``--subset`` documents, and the ratio.

``--each`` also times each measure in a command of its own. Not run by the tests (``make bench``).
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import platform
import random
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.core.io.corpus import Corpus, Document  # noqa: E402
from metaeval.core.measures.cache import DistanceCache  # noqa: E402
from metaeval.core.measures.distances import corpus_doc_pairs, default_workers  # noqa: E402
from metaeval.core.perseval.measure import Params, SystemScore, score_system  # noqa: E402
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


def ours(corpus: Corpus, measures: tuple[str, ...], workers: int, beta: float,
         collect=None) -> tuple[dict, dict, float, object]:
    """End-to-end with an empty cache: returns scores, per-measure stats, wall seconds and the run's result."""
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
    return scores, {"stats": stats, "timings": result.timings}, wall, result


def _hex(value: object) -> object:
    return float(value).hex() if isinstance(value, float) else value


def fingerprint(rows) -> dict[str, dict[str, object]]:
    """Per ``measure|system``: the score table's values (floats in hex, every bit) and the SHA-256 of all the
    per-document and per-reader detail."""
    out: dict[str, dict[str, object]] = {}
    for row in rows:
        entry: dict[str, object] = {key: _hex(value) for key, value in row.as_dict().items()}
        score: SystemScore = row.score
        detail = [[_hex(value) for value in vars(item).values()] for item in score.per_document + score.per_reader]
        entry["detail_sha256"] = hashlib.sha256(json.dumps(detail).encode()).hexdigest()
        out[f"{row.measure}|{row.system}"] = entry
    return out


def reference_check(corpus: Corpus, result, beta: float) -> tuple[bool, float]:
    """Every system of ``result`` re-scored by the reference path from the same distances (the run's distance
    cache is gone, so they are recomputed with one process): equal bit for bit? Returns (equal, seconds)."""
    from metaeval.core.measures.distances import compute
    from metaeval.core.perseval.pipeline import plan_run, prepare_measure

    options = RunOptions(measures=tuple({row.measure for row in result.rows}), params=Params(beta=beta), compat=True)
    plan = plan_run(corpus, options)
    pairs = plan.text_pairs()
    scored = {(row.measure, row.system): row.score for row in result.rows}
    seconds = 0.0
    same = True
    for name in dict.fromkeys(row.measure for row in result.rows):
        distance, _ = compute(prepare_measure(name, options, pairs), pairs)
        started = time.perf_counter()
        for system in plan.systems:
            reference = score_system(corpus_doc_pairs(plan, system, distance), options.params)
            same = same and repr(reference) == repr(scored[(name, system)])  # every float, NaN included
        seconds += time.perf_counter() - started
    return same, seconds


def straightforward(corpus: Corpus, measure: str, beta: float) -> tuple[dict, float]:
    from tests.reference.straightforward import AUTHORS_DISTANCES, reference_scores

    started = time.perf_counter()
    scores = reference_scores(corpus, AUTHORS_DISTANCES[measure], beta=beta)
    return scores, time.perf_counter() - started


def identical(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=3840)
    parser.add_argument("--subset", type=int, default=40, help="documents for the straightforward comparison")
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--measures", default=",".join(MEASURES))
    parser.add_argument("--beta", type=float, default=1.7)
    parser.add_argument("--expect", type=Path, help="compare with the values saved in this file (--save)")
    parser.add_argument("--save", type=Path, help="save the values and detail digests of this run to this file")
    parser.add_argument("--each", action="store_true", help="also time each measure in a command of its own")
    parser.add_argument("--no-reference", action="store_true", help="skip the re-scoring by the reference path")
    args = parser.parse_args()
    measures = tuple(args.measures.split(","))
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs "
          f"({default_workers()} usable), Python {platform.python_version()}, {load()}")
    started = time.perf_counter()
    corpus = make_corpus(args.docs)
    readers = sum(len(d.summaries) for d in corpus.documents)
    print(f"corpus: {len(corpus.documents)} documents, {readers} reader entries "
          f"({readers / len(corpus.documents):.2f} per document), 10 systems; generated in "
          f"{time.perf_counter() - started:.1f} s")

    print(f"\n== ours, all 10 systems, cold cache, {args.workers} workers ==")
    cpu, children = time.process_time(), _children_cpu()
    _, info, wall, result = ours(corpus, measures, args.workers, args.beta)
    cpu, children = time.process_time() - cpu, _children_cpu() - children
    for measure, stat in zip(measures, result.stats, strict=True):
        # one pool computes every measure while this process scores the one before: "waited" is the time this
        # process waited for the measure's distances, not the time they took
        print(f"{measure:<10} unique pairs {stat.pairs:>8}  distances waited for "
              f"{info['timings'][f'distances:{measure}']:6.1f} s  scoring {info['timings'][f'score:{measure}']:5.2f} s")
    timed = {key: value for key, value in info["timings"].items() if key != "total"}
    steps = ", ".join(f"{key} {value:.1f} s" for key, value in timed.items())
    other = wall - sum(timed.values())
    print(f"all {len(measures)} measures in one command: {wall:.1f} s ({steps}; the rest, {other:.1f} s: loading "
          f"the measures' libraries, the last cache write, the run record); "
          f"CPU {cpu:.1f} s in this process, {children:.1f} s in its workers; {load()}")
    if args.each:
        total = 0.0
        for measure in measures:
            _, _, each_wall, _ = ours(corpus, (measure,), args.workers, args.beta)
            total += each_wall
            print(f"{measure:<10} in a command of its own: {each_wall:6.1f} s")
        print(f"all {len(measures)} measures, one command each: {total:.1f} s")

    print("\n== checks ==")
    ok = True
    if not args.no_reference:
        same, seconds = reference_check(corpus, result, args.beta)
        ok = ok and same
        print(f"reference path (score_system, Python loops) on the same distances: identical, detail included: "
              f"{same} (its scoring {seconds:.1f} s)")
    found = fingerprint(result.rows)
    if args.save:
        args.save.write_text(json.dumps({"docs": args.docs, "beta": args.beta, "measures": list(measures),
                                         "rows": found}, indent=1, sort_keys=True) + "\n")
        print(f"saved to {args.save}")
    if args.expect:
        expected = json.loads(args.expect.read_text())
        if (expected["docs"], expected["beta"]) != (args.docs, args.beta):
            print(f"expect: {args.expect} holds --docs {expected['docs']} --beta {expected['beta']}; not compared")
        else:
            wanted = {key: value for key, value in expected["rows"].items() if key.split("|")[0] in measures}
            differ = sorted(f"{key}:{column}" for key, row in wanted.items() for column, value in row.items()
                            if found.get(key, {}).get(column) != value)
            same = not differ and set(wanted) == set(found)
            ok = ok and same
            print(f"expect {args.expect}: {len(wanted)} rows, values and detail identical to every bit: {same}"
                  + (f" (differ: {', '.join(differ[:8])})" if differ else ""))

    print(f"\n== straightforward vs ours on the first {args.subset} documents (1 process each way) ==")
    small = subset(corpus, args.subset)
    for measure in measures if args.subset else ():
        fast_scores, _, fast_wall, _ = ours(small, (measure,), 1, args.beta)
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
    print(f"\n{load()}; checks {'passed' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
