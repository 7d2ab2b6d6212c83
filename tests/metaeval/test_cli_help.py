"""``python -m metaeval [COMMAND] --help`` loads none of the numeric stack, for every command the parser has (the
lazy-import rule of :mod:`metaeval.cli`). Nothing is timed here: ``benchmarks/cli_help_bench.py`` prints the times."""
from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
#: top-level packages a ``--help`` must not import (each costs 0.1 to several seconds; Django is not needed either)
HEAVY = ("numpy", "scipy", "pandas", "torch", "transformers", "nltk", "rouge_score", "rapidfuzz", "sklearn", "django")


def command_lines(parser: argparse.ArgumentParser | None = None) -> list[list[str]]:
    """Every command of ``python -m metaeval`` as the words that name it (``["power", "hj"]`` for a command of a
    command), read from the parser, so a new command is covered by itself."""
    out: list[list[str]] = []
    for action in (parser or build_parser())._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append([name])
                out.extend([name, *words] for words in command_lines(sub))
    return out


def imported(*python_args: str) -> tuple[set[str], subprocess.CompletedProcess[str]]:
    """The modules ``python -X importtime PYTHON_ARGS`` imported (read from its report), and the finished process."""
    result = subprocess.run([sys.executable, "-X", "importtime", *python_args], capture_output=True, text=True,
                            cwd=ROOT, check=False, timeout=120)
    names = {line.rsplit("|", 1)[1].strip() for line in result.stderr.splitlines()
             if line.startswith("import time:") and line.count("|") == 2}
    return names - {"package"}, result


def heavy(names: set[str]) -> list[str]:
    return sorted(name for name in names if name.split(".")[0] in HEAVY)


def test_the_parser_has_every_command():
    names = [" ".join(words) for words in command_lines()]
    assert {"score", "correlate", "report", "pairwise", "judge", "meta-accuracy", "power", "power hj",
            "simulate", "simulate preference"} <= set(names)
    assert len(names) == len(set(names)) >= 20


@pytest.mark.parametrize("command", [[], *command_lines()], ids=lambda words: " ".join(words) or "top-level")
def test_help_imports_no_heavy_module(command):
    names, result = imported("-m", "metaeval", *command, "--help")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.startswith("usage: python -m metaeval")
    assert {"metaeval.cli", "argparse"} <= names  # the report was read
    assert heavy(names) == []


def test_the_check_sees_a_heavy_import():
    """The same reading of ``-X importtime`` finds scipy and numpy when a numeric module is imported."""
    names, result = imported("-c", "import metaeval.core.stats.correlation")
    assert result.returncode == 0, result.stderr[-2000:]
    assert {"numpy", "scipy"} <= set(heavy(names))
