"""Pairwise benchmark: load 1,000,000 synthetic judgments of 20 systems, play the games, online Elo, 1000 bootstrap
rounds of Elo and of Bradley-Terry; against a plain Python loop (a few rounds, scaled) and choix (one fit, scaled).

    .venv/bin/python benchmarks/pairwise_bench.py [--judgments 1000000] [--systems 20] [--n-boot 1000]
                                                  [--loop-rounds 3] [--leaderboard]

Synthetic data (seeded): cases of 3 criteria, each judged twice (2 judgments per game), a random pair of systems
per case, P(a wins) from hidden strengths, 15% ties and 1% invalid judgments. Prints the figures.
"""
from __future__ import annotations

import argparse
import csv
import math
import tempfile
import time
from pathlib import Path

import choix
import numpy as np

from metaeval.core.pairwise.bootstrap import bootstrap_bt, draw_blocks
from metaeval.core.pairwise.bradley_terry import fit_bt, fit_bt_many, win_matrix
from metaeval.core.pairwise.elo import AUPEL, online_elo, online_elo_rounds
from metaeval.core.pairwise.games import criteria_games, encode, play
from metaeval.core.pairwise.judgments import load_judgments
from metaeval.core.pairwise.leaderboard import leaderboard

CRITERIA = ("personalization", "quality", "relevance")


def write_judgments(path: Path, judgments: int, systems: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    names = [f"sys{i:02d}" for i in range(systems)]
    strength = np.linspace(0.0, 2.0, systems)
    cases = math.ceil(judgments / (2 * len(CRITERIA)))
    a = rng.integers(0, systems, cases)
    b = (a + rng.integers(1, systems, cases)) % systems
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(["case_id", "criterion", "model_a", "model_b", "winner", "judge", "judge_kind", "run"])
        written = 0
        for case in range(cases):
            p = 1 / (1 + math.exp(strength[b[case]] - strength[a[case]]))
            for criterion in CRITERIA:
                for run in (1, 2):
                    if written == judgments:
                        return
                    draw = rng.random()
                    winner = ("invalid" if draw < 0.01 else "tie" if draw < 0.16
                              else "model_a" if rng.random() < p else "model_b")
                    writer.writerow([f"c{case}", criterion, names[a[case]], names[b[case]], winner, "judge", "llm",
                                     run])
                    written += 1


def python_elo(games: list[tuple[int, int, float]], players: int) -> list[float]:
    """The straightforward loop: one round of online Elo in plain Python with ``10 ** x``."""
    ratings = [1000.0] * players
    for a, b, s in games:
        e = 1 / (1 + 10 ** ((ratings[b] - ratings[a]) / 400))
        ratings[a] += 4 * (s - e)
        ratings[b] -= 4 * (s - e)
    return ratings


def timed(label: str, seconds: float, note: str = "") -> None:
    print(f"{label:<58}{seconds:10.3f} s  {note}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--judgments", type=int, default=1_000_000)
    parser.add_argument("--systems", type=int, default=20)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--loop-rounds", type=int, default=3, help="rounds of the plain Python loop (scaled)")
    parser.add_argument("--leaderboard", action="store_true", help="also time every criterion + overall (the CLI)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "judgments.csv"
        start = time.perf_counter()
        write_judgments(path, args.judgments, args.systems)
        print(f"{args.judgments} judgments, {args.systems} systems, {args.n_boot} bootstrap rounds "
              f"(writing the CSV took {time.perf_counter() - start:.1f} s, {path.stat().st_size / 1e6:.0f} MB)")
        start = time.perf_counter()
        table = load_judgments(path)
        timed("load + validate the CSV", time.perf_counter() - start, f"{table.invalid} invalid")

    start = time.perf_counter()
    games = play(table.judgments)
    overall = criteria_games(games)["overall"]
    arrays = encode(overall)
    timed("play the games (+ encode overall)", time.perf_counter() - start, f"{len(games)} games")

    start = time.perf_counter()
    elo = online_elo(arrays)
    timed("online Elo, file order (overall)", time.perf_counter() - start)

    n, boot = len(arrays), args.n_boot
    start = time.perf_counter()
    online_elo_rounds(arrays, draw_blocks(n, boot, seed=1), boot, AUPEL)
    elo_seconds = time.perf_counter() - start
    timed(f"bootstrap Elo, {boot} rounds (vectorised over rounds)", elo_seconds,
          f"{elo_seconds / (n * boot) * 1e9:.1f} ns per game and round")

    draws = np.random.default_rng(1).integers(0, n, size=(n, args.loop_rounds))
    listed = list(zip(arrays.a.tolist(), arrays.b.tolist(), arrays.s.tolist(), strict=True))
    start = time.perf_counter()
    for r in range(args.loop_rounds):
        looped = python_elo([listed[i] for i in draws[:, r].tolist()], len(arrays.players))
    loop_seconds = (time.perf_counter() - start) / args.loop_rounds * boot
    timed(f"  plain Python loop, {args.loop_rounds} rounds scaled to {boot}", loop_seconds,
          f"ours is {loop_seconds / elo_seconds:.1f}x faster")
    last = draws[:, -1]
    check = online_elo_rounds(arrays, [last[:, None]], 1, AUPEL)[0]
    assert np.allclose(looped, check, atol=1e-6), "loop and vectorised Elo differ"

    start = time.perf_counter()
    fits = bootstrap_bt(arrays, n_boot=boot, seed=1)
    bt_seconds = time.perf_counter() - start
    start = time.perf_counter()
    fit_bt_many(np.stack([win_matrix(arrays)] * boot))
    bt_fit_seconds = time.perf_counter() - start
    timed(f"bootstrap BT, {boot} rounds (same draws)", bt_seconds,
          f"{fits.regularised.sum()} rounds regularised; the {boot} batched Newton fits alone {bt_fit_seconds:.2f} s")

    wins = win_matrix(arrays)
    start = time.perf_counter()
    ours = fit_bt(wins)
    ours_seconds = time.perf_counter() - start
    data = [(i, j) for i in range(len(arrays.players)) for j in range(len(arrays.players))
            for _ in range(round(2 * wins[i, j]))]
    start = time.perf_counter()
    theta = choix.ilsr_pairwise(len(arrays.players), data, alpha=0.0, tol=1e-10, max_iter=10_000)
    choix_seconds = time.perf_counter() - start
    reference = 400 / math.log(10) * theta
    reference += 1000 - reference.mean()
    timed("one BT fit, ours (Newton on the win matrix)", ours_seconds,
          f"max |ours - choix| = {np.abs(ours.ratings - reference).max():.1e} Elo points")
    timed(f"  choix.ilsr_pairwise on {len(data)} comparisons, x{boot} scaled", choix_seconds * boot,
          f"one fit {choix_seconds:.2f} s; ours batched is {choix_seconds * boot / bt_fit_seconds:.0f}x faster")
    print(f"overall Elo range {elo.min():.1f} .. {elo.max():.1f}; BT range {ours.ratings.min():.1f} .. "
          f"{ours.ratings.max():.1f}")

    if args.leaderboard:
        start = time.perf_counter()
        leaderboard(games, n_boot=boot, seed=1)
        timed(f"leaderboard (the CLI's work): {len(CRITERIA)} criteria + overall, {boot} rounds each",
              time.perf_counter() - start)


if __name__ == "__main__":
    main()
