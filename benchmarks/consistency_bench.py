"""Benchmark: a consistency / sensitivity grid (AuPEL sec. 5.2), ours vs a straightforward loop.

    python benchmarks/consistency_bench.py [--pool 1000] [--repetitions 5000] [--loop-repetitions 100] [--seed 0]

Pool (seeded): ``--pool`` per-case outcomes, 50% a, 38% b, 12% tie. Grid: 10 sizes, 25 .. 1000 (1000 = the whole
pool, 1200 > pool draws with replacement). Ours: :func:`metaeval.core.pairwise.consistency.consistency_curve`
with ``--repetitions`` (counts drawn at once, p-values from a table). The straightforward way: for each size and
repetition, draw two index samples with ``Generator.choice``, count wins and losses, call
``scipy.stats.binomtest`` on each; run with ``--loop-repetitions`` and scaled to ``--repetitions``. Also checks
that the table's verdict equals binomtest's on every loop sample. Not run by the tests.
"""
from __future__ import annotations

import argparse
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
from scipy.stats import binomtest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.core.pairwise.consistency import binomial_p_values, consistency_curve  # noqa: E402

SIZES = (25, 50, 75, 100, 150, 200, 300, 500, 1000, 1200)


def straightforward(outcomes: np.ndarray, sizes: tuple[int, ...], repetitions: int, seed: int, table: np.ndarray):
    """(size, sensitivity, consistency) by a plain loop with binomtest, and the number of verdict mismatches."""
    rng = np.random.default_rng(seed)
    rows, mismatches = [], 0
    for size in sizes:
        replace = size > len(outcomes)
        conclusive = agree = 0
        for _ in range(repetitions):
            verdict = []
            for _draw in range(2):
                sample = outcomes[rng.choice(len(outcomes), size, replace=replace)]
                wins, losses = int((sample == 1).sum()), int((sample == -1).sum())
                p = binomtest(wins, wins + losses).pvalue if wins + losses else 1.0
                mismatches += (p < 0.05) != (table[wins + losses, wins] < 0.05)
                verdict.append(int(np.sign(wins - losses)) if p < 0.05 else 0)
            conclusive += verdict[0] != 0
            agree += verdict[0] == verdict[1] != 0
        rows.append((size, conclusive / repetitions, agree / repetitions))
    return rows, mismatches


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pool", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=5000)
    parser.add_argument("--loop-repetitions", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    codes = rng.choice([1, -1, 0], size=args.pool, p=[0.5, 0.38, 0.12])
    outcomes = [{1: "a", -1: "b", 0: "tie"}[int(c)] for c in codes]
    print(f"machine: {platform.node()}, {os.cpu_count()} CPUs, Python {platform.python_version()}")
    print(f"pool {args.pool} cases (a {np.sum(codes == 1)}, b {np.sum(codes == -1)}, tie {np.sum(codes == 0)}), "
          f"sizes {', '.join(map(str, SIZES))}")
    start = time.perf_counter()
    curve = consistency_curve(outcomes, SIZES, repetitions=args.repetitions, seed=args.seed)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    table = binomial_p_values(max(SIZES))
    table_time = time.perf_counter() - start
    start = time.perf_counter()
    loop, mismatches = straightforward(codes, SIZES, args.loop_repetitions, args.seed, table)
    loop_time = time.perf_counter() - start
    scaled = loop_time * args.repetitions / args.loop_repetitions
    header = f"{'N':>6}{'sens.':>9}{'cons.':>9}{'loop sens.':>12}{'loop cons.':>12}"
    print(f"\n{header}   (loop: {args.loop_repetitions} reps)")
    for point, (_, sens, cons) in zip(curve, loop, strict=True):
        print(f"{point.n:>6}{point.sensitivity:>9.4f}{point.consistency:>9.4f}{sens:>12.3f}{cons:>12.3f}")
    print(f"\nours: {ours:.3f} s for {args.repetitions} repetitions x {len(SIZES)} sizes "
          f"(of which the p-value table up to n={max(SIZES)}: {table_time:.3f} s)")
    print(f"straightforward loop: {loop_time:.2f} s for {args.loop_repetitions} repetitions -> "
          f"{scaled:.1f} s scaled to {args.repetitions} ({scaled / ours:.0f}x ours)")
    print(f"verdicts table vs binomtest on the loop's {2 * args.loop_repetitions * len(SIZES)} samples: "
          f"{mismatches} mismatches")


if __name__ == "__main__":
    main()
