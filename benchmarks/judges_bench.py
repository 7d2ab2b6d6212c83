"""Judges-vs-people benchmark: a synthetic study (people and an LLM judge on the same items, the texts' lengths),
then agreement, PPI, the alternative annotator test and style-controlled Bradley-Terry with its bootstrap.

    .venv/bin/python benchmarks/judges_bench.py [--cases 2500] [--systems 8] [--pairs 4] [--people 3]
                                                [--runs 4] [--labelled 0.3] [--n-boot 1000]

Synthetic data (seeded): per case, ``--pairs`` random system pairs judged on one criterion; a share
``--labelled`` of the items by ``--people`` people (from a pool of 10, each right with probability 0.8), every item
by the judge in ``--runs`` runs (half in each order); the judge adds a length preference. Prints the machine, the
sizes and the times.
"""
from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path
from tempfile import TemporaryDirectory

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from metaeval.core.judges.agreement import agreement_rows  # noqa: E402
from metaeval.core.judges.alt_test import alt_test_rows  # noqa: E402
from metaeval.core.judges.items import build_items  # noqa: E402
from metaeval.core.judges.ppi import ppi_rows  # noqa: E402
from metaeval.core.pairwise.features import load_style_data  # noqa: E402
from metaeval.core.pairwise.games import play  # noqa: E402
from metaeval.core.pairwise.judgments import load_judgments  # noqa: E402
from metaeval.core.pairwise.leaderboard import leaderboard  # noqa: E402
from metaeval.core.pairwise.style import style_leaderboard  # noqa: E402


def write(path: Path, args: argparse.Namespace, seed: int = 0) -> int:
    rng = np.random.default_rng(seed)
    strength = np.linspace(0.0, 1.0, args.systems)
    mean_length = rng.integers(8, 30, args.systems)
    lines = ["case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,length_a,length_b"]
    for case in range(args.cases):
        lengths = np.maximum(1, rng.poisson(mean_length))
        for _ in range(args.pairs):
            a, b = rng.choice(args.systems, 2, replace=False)
            la, lb = int(lengths[a]), int(lengths[b])
            truth = 1 / (1 + math.exp(strength[b] - strength[a]))
            row = f"c{case},quality,s{a},s{b}"
            if rng.random() < args.labelled:
                for person in rng.choice(10, args.people, replace=False):
                    better = rng.random() < truth
                    right = rng.random() < 0.8
                    winner = "model_a" if better == right else "model_b"
                    lines.append(f"{row},{winner},P{person},human,,model_a,{la},{lb}")
            biased = 1 / (1 + math.exp(strength[b] - strength[a] - 2.0 * (la - lb) / (la + lb)))
            for run in range(1, args.runs + 1):
                winner = "model_a" if rng.random() < biased else "model_b"
                first = "model_a" if run % 2 else "model_b"
                lines.append(f"{row},{winner},judge,llm,{run},{first},{la},{lb}")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines) - 1


def timed(label: str, function, *arguments, **keywords):  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    result = function(*arguments, **keywords)
    print(f"{label}: {time.perf_counter() - start:.2f} s")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=2500)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--pairs", type=int, default=4)
    parser.add_argument("--people", type=int, default=3)
    parser.add_argument("--runs", type=int, default=4)
    parser.add_argument("--labelled", type=float, default=0.3)
    parser.add_argument("--n-boot", type=int, default=1000)
    args = parser.parse_args()
    print(f"machine: {platform.node()}, {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; "
          f"Python {platform.python_version()}, numpy {np.__version__}")
    with TemporaryDirectory() as folder:
        path = Path(folder) / "judgments.csv"
        rows = write(path, args)
        print(f"{rows} judgments of {args.cases * args.pairs} items")
        table = timed("load judgments", load_judgments, path)
        style = timed("load style features", load_style_data, path)
    items = timed("items", build_items, table, "judge")
    timed("agreement", agreement_rows, items, style)
    timed("ppi", ppi_rows, items)
    timed("alt-test", alt_test_rows, items)
    judge_games = play(j for j in table.judgments if j.judge == "judge")
    print(f"{len(judge_games)} judge games, {args.n_boot} bootstrap rounds, criteria quality + overall")
    timed("leaderboard (Elo and Bradley-Terry)", leaderboard, judge_games, n_boot=args.n_boot, seed=1)
    board = timed("style leaderboard (Bradley-Terry without and with style control)", style_leaderboard,
                  judge_games, style, n_boot=args.n_boot, seed=1)
    print("order changes:", [(c["criterion"], c["without"][:3], c["with"][:3]) for c in board.order_changes])


if __name__ == "__main__":
    main()
