"""Planning benchmark: the preference simulator on 10 systems with AuPEL-like gaps (fixtures/planning/aupel_gaps.csv:
adjacent gaps 113, 72, 77 Elo in turn, AuPEL Table 2's overall Elo; 4 % ties, about AuPEL Table 3's).

    .venv/bin/python benchmarks/planning_bench.py [--repetitions 1000] [--seed 2026] [--batch 100]

Prints, with the machine and the seeds (docs/conventions.md sec. 27.7 keeps the figures):

1. the stopping rule's error rate: 2 equal systems (every stop is wrong), ``separated``, looked at after every set
   of 10 judgments up to 20,000, with the confidence sequences and with ordinary fixed-n intervals;
2. on the AuPEL-like truth, ``separated``: judgments used, ranking errors, false separations and coverage per
   policy (uniform, adaptive = Chatbot Arena's rule over every pair, adaptive focused on adjacent pairs);
3. ranking accuracy against judgments without stopping (``none``), and the judgments each adaptive policy needs to
   match the uniform design's accuracy at 1,000 .. 4,000 judgments.
"""
from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from metaeval.core.planning.confseq import parse_rule
from metaeval.core.planning.simulate import Settings, Simulation, Truth, read_truth, simulate

TRUTH = Path(__file__).resolve().parents[1] / "fixtures" / "planning" / "aupel_gaps.csv"
TIE_RATE = 0.04
POLICIES = (("uniform", "all"), ("adaptive", "all"), ("adaptive", "adjacent"))


def _name(policy: str, focus: str) -> str:
    return policy if policy == "uniform" else f"{policy} ({focus})"


def _timed(truth: Truth, settings: Settings) -> tuple[Simulation, float]:
    started = time.perf_counter()
    result = simulate(truth, settings)
    return result, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repetitions", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--batch", type=int, default=100)
    args = parser.parse_args()
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} cores, Python "
          f"{platform.python_version()}, numpy {np.__version__}")
    print(f"repetitions {args.repetitions}, seed {args.seed} (each run below: seed + its number), tie rate {TIE_RATE}")

    print("\n1. error rate under the null (2 equal systems, rule separated, alpha 0.05, a look every 10 judgments "
          "up to 20,000)")
    null = Truth(("A", "B"), (1000.0, 1000.0))
    for k, intervals in enumerate(("sequence", "fixed")):
        result, seconds = _timed(null, Settings(policy="uniform", rule=parse_rule("separated"),
                                                repetitions=args.repetitions, seed=args.seed + 1 + k,
                                                tie_rate=TIE_RATE, batch=10, max_judgments=20_000,
                                                intervals=intervals))
        print(f"   {intervals:8s} intervals: stopped (wrongly) in {result.stopped.mean():.3f} of the studies "
              f"[seed {args.seed + 1 + k}, {seconds:.1f} s]")

    truth = read_truth(TRUTH)
    print(f"\n2. rule separated on {len(truth.systems)} systems (Elo {', '.join(f'{e:g}' for e in truth.elo)}), "
          f"alpha 0.05 over all 45 pairs, sets of {args.batch}")
    means: dict[str, float] = {}
    for k, (policy, focus) in enumerate(POLICIES):
        seed = args.seed + 10 + k
        result, seconds = _timed(truth, Settings(policy=policy, focus=focus, rule=parse_rule("separated"),
                                                 repetitions=args.repetitions, seed=seed, tie_rate=TIE_RATE,
                                                 batch=args.batch, max_judgments=200_000))
        row = result.summary()
        means[_name(policy, focus)] = float(row["judgments_mean"])  # type: ignore[arg-type]
        print(f"   {_name(policy, focus):20s} judgments mean {row['judgments_mean']:8.0f} median "
              f"{row['judgments_median']:8.0f} p90 {row['judgments_p90']:8.0f}; stopped {row['stopped']:.3f}; "
              f"ranking exact {row['ranking_exact']:.3f}; false separations {row['false_separation_rate']:.3f}; "
              f"coverage (all pairs) {row['coverage_all_pairs']:.3f} [seed {seed}, {seconds:.1f} s]")
    for name in list(means)[1:]:
        change = 100 * (1 - means[name] / means["uniform"])
        print(f"   {name}: {abs(change):.0f} % {'fewer' if change >= 0 else 'more'} judgments than uniform")

    print(f"\n3. ranking accuracy without stopping (sets of {args.batch}, up to 5,000 judgments)")
    curves: dict[str, list[dict[str, float]]] = {}
    for k, (policy, focus) in enumerate(POLICIES):
        seed = args.seed + 20 + k
        result, seconds = _timed(truth, Settings(policy=policy, focus=focus, rule=parse_rule("none"),
                                                 repetitions=args.repetitions, seed=seed, tie_rate=TIE_RATE,
                                                 batch=args.batch, max_judgments=5000, curve=True))
        curves[_name(policy, focus)] = result.curve
        print(f"   {_name(policy, focus):20s} [seed {seed}, {seconds:.1f} s]")
    print("   judgments | " + " | ".join(f"{name}: exact, discordant" for name in curves))
    for index in range(9, len(curves["uniform"]), 10):
        cells = [f"{c[index]['ranking_exact']:.3f}, {c[index]['discordant_pairs_mean']:.3f}" for c in curves.values()]
        print(f"   {curves['uniform'][index]['judgments']:9.0f} | " + " | ".join(cells))
    print("   judgments needed for the uniform design's share of exact rankings:")
    for budget in (1000, 2000, 3000, 4000):
        target = next(row["ranking_exact"] for row in curves["uniform"] if row["judgments"] == budget)
        parts = []
        for name in list(curves)[1:]:
            reached = [row["judgments"] for row in curves[name] if row["ranking_exact"] >= target]
            if not reached:
                parts.append(f"{name} more than 5000")
                continue
            change = 100 * (1 - reached[0] / budget)
            parts.append(f"{name} {reached[0]:.0f} ({abs(change):.0f} % {'fewer' if change >= 0 else 'more'})")
        print(f"   uniform {budget} (exact {target:.3f}): " + "; ".join(parts))


if __name__ == "__main__":
    main()
