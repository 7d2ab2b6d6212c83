"""Benchmark: e-DINS (``--oov none``) on a generated PENS-scale corpus.

    python benchmarks/edins_bench.py [--docs 3840] [--normalise default|literal] [--repeat 1]

The corpus is :func:`benchmarks.metaeval_bench.make_corpus` (seeded: 3840 documents with 400-700-word bodies, 3-5
readers each, 10 systems). Prints the machine, the corpus, and the wall time of :func:`metaeval.core.edins.measure.
edins_scores` for all 10 systems (tokenising, distributions, JSDs and scoring). Not run by the tests.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.metaeval_bench import make_corpus  # noqa: E402
from metaeval.core.edins.measure import edins_scores  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=3840)
    parser.add_argument("--normalise", choices=["default", "literal"], default="default")
    parser.add_argument("--repeat", type=int, default=1, help="time the scoring this many times (best is printed)")
    args = parser.parse_args()
    print(f"machine: {platform.node()} {platform.machine()} {platform.processor() or ''}".rstrip()
          + f", {os.cpu_count()} CPUs, {platform.system()} {platform.release()}, Python {platform.python_version()}")
    started = time.perf_counter()
    corpus = make_corpus(args.docs)
    readers = sum(len(d.summaries) for d in corpus.documents)
    print(f"corpus: {len(corpus.documents)} documents, {readers} reader entries "
          f"({readers / len(corpus.documents):.2f} per document), {len(corpus.systems)} systems; generated in "
          f"{time.perf_counter() - started:.1f} s")
    walls = []
    result = None
    for _ in range(max(1, args.repeat)):
        started = time.perf_counter()
        result = edins_scores(corpus, gamma=1.0, similarity=None, normalise=args.normalise)
        walls.append(time.perf_counter() - started)
    assert result is not None
    print(f"e-DINS, --oov none, normalise {args.normalise}, all {len(corpus.systems)} systems: "
          f"{min(walls):.2f} s wall (best of {len(walls)}; single process)")
    for score in result.automatic:
        print(f"  {score.system:<10} dins {score.dins:.6f}  pf {score.pf:.6f}  edins {score.edins:.6f}  "
              f"documents {score.documents}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
