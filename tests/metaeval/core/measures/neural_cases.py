"""Shared cases and helpers of the neural-measure tests (test_infolm, test_bertscore, test_neural): texts of mixed
lengths, and the measures built with the parity tests' settings. Imports no torch at module level."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from metaeval.core.measures.bertscore import BertScore
from metaeval.core.measures.infolm import InfoLM

Pair = tuple[str, str]


#: InfoLM's max_length in the parity tests: [CLS] + 10 wordpieces + [SEP]
INFOLM_MAX_LENGTH = 12


LONG = "the old president said the government would vote on a new policy for the city market after the election"


#: LONG with its words changed only past the 14th wordpiece: the same text once cut to 12 tokens
LONG_TAIL_CHANGED = "the old president said the government would vote on a new policy for the town bank before the war"


#: > 64 wordpieces, longer than the tiny models' max_position_embeddings
VERY_LONG = " ".join([LONG] * 4)


#: mixed lengths, repeats and both argument orders, for the batching tests
POOL = [
    "cat",
    "the dog",
    "happiness",
    "the cat ran home",
    "a big red car",
    "the old man read a book about the war",
    "she said that the police came after the game.",
    LONG,
    "Happy Birthday, Quixotic Zebra!",
    "music",
]


BATCH_PAIRS: list[Pair] = [(POOL[(3 * i) % len(POOL)], POOL[(7 * i + 2) % len(POOL)]) for i in range(36)] + [
    (POOL[1], POOL[1]),
    (POOL[7], POOL[7]),
    (POOL[3], POOL[5]),
    (POOL[5], POOL[3]),
]


def record(name: str, got: np.ndarray, expected: np.ndarray) -> float:
    """Print (visible with ``pytest -s``) the largest absolute difference of a comparison."""
    diff = float(np.max(np.abs(np.asarray(got, dtype=np.float64) - np.asarray(expected, dtype=np.float64))))
    print(f"max |ours - reference| {name}: {diff:.3g}")
    return diff


def infolm(folder: Path, **options: object) -> InfoLM:
    settings: dict[str, object] = dict(
        temperature=0.25, max_length=INFOLM_MAX_LENGTH, idf=False, alpha=1.0, beta=1.0, batch_size=64,
        device="cpu", dtype="float32",
    )
    settings.update(options)
    measure = InfoLM(model=str(folder), **settings)
    measure.prepare()
    return measure


def bertscore(folder: Path | str, layer: int, **options: object) -> BertScore:
    settings: dict[str, object] = dict(max_length=None, idf=False, baseline=None, batch_size=64, device="cpu")
    settings.update(options)
    measure = BertScore(model=str(folder), layer=layer, dtype="float32", **settings)
    measure.prepare()
    return measure
