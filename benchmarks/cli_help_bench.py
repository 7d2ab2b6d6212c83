"""Benchmark: wall time of ``python -m metaeval [COMMAND] --help`` for every command (the issue 29 target: < 1 s).

    python benchmarks/cli_help_bench.py [--runs 7] [--commands score,report] [--root OTHER_CHECKOUT]

Each figure is a fresh ``python -m metaeval ... --help`` process (interpreter start included), run ``--runs``
times; prints the machine, the load average before and after, then per command the minimum and the median in
seconds, and the cumulative ``-X importtime`` of ``metaeval.cli`` (median over the same number of runs). On a shared
machine the minimum is the figure to compare; the median shows the load. Not run by the tests (they check that no
heavy module is imported: tests/metaeval/test_cli_help.py). ``--root`` times another checkout's ``metaeval`` (an
older commit, for a before/after figure on the same machine).
"""
from __future__ import annotations

import argparse
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from metaeval.cli import build_parser  # noqa: E402


def commands(parser: argparse.ArgumentParser | None = None) -> list[str]:
    """Every command, a command of a command as ``power hj``."""
    out: list[str] = []
    for action in (parser or build_parser())._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out += [name, *(f"{name} {words}" for words in commands(sub))]
    return out


def wall(argv: list[str], root: Path) -> float:
    start = time.perf_counter()
    subprocess.run([sys.executable, "-m", "metaeval", *argv, "--help"], cwd=root, check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - start


def import_seconds(argv: list[str], root: Path) -> float:
    """Cumulative import time of ``metaeval.cli`` as ``-X importtime`` reports it."""
    result = subprocess.run([sys.executable, "-X", "importtime", "-m", "metaeval", *argv, "--help"], cwd=root,
                            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in result.stderr.splitlines():
        parts = line.split("|")
        if len(parts) == 3 and parts[2].strip() == "metaeval.cli":
            return int(parts[1]) / 1e6
    return float("nan")


def load() -> str:
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--commands", help="comma-separated commands, e.g. 'score,power hj' (default: the top level "
                        "and every command)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose metaeval runs (default this one)")
    args = parser.parse_args()
    names = args.commands.split(",") if args.commands else ["", *commands()]
    print(f"machine: {platform.node()} {platform.machine()}, {os.cpu_count()} CPUs, Python "
          f"{platform.python_version()}")
    print(f"checkout: {args.root}")
    print(f"load average before (1, 5, 15 min): {load()}; {args.runs} runs per command")
    print(f"{'command':<22}{'min s':>8}{'median s':>10}{'import metaeval.cli s':>24}")
    worst = 0.0
    for name in names:
        argv = name.split()
        times = sorted(wall(argv, args.root) for _ in range(args.runs))
        imports = statistics.median(import_seconds(argv, args.root) for _ in range(args.runs))
        worst = max(worst, times[0])
        print(f"{name or '(top level)':<22}{times[0]:>8.3f}{statistics.median(times):>10.3f}{imports:>24.3f}")
    print(f"load average after: {load()}; slowest minimum {worst:.3f} s")


if __name__ == "__main__":
    main()
