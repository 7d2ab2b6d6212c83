"""The inputs of the golden tests against mt-metrics-eval (``tests/data/mtme_golden.json``), built from fixed seeds.

One definition, used by the tests and by ``tests/data/make_mtme_golden.py``, which ran the reference on them; the
golden file stores :func:`checksum` of each set so that a change of numpy's generators is noticed.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np

GOLDEN = Path(__file__).resolve().parents[3] / "data" / "mtme_golden.json"

# hand-worked cases (metric, human); the second and third are mt-metrics-eval's tau_optimization_test cases
HAND_CASES: dict[str, tuple[list[float], list[float]]] = {
    "human_ties": ([13, 11, 10, 5, 3], [5, 4, 4, 2, 2]),
    "reference_test_untied": ([0, 2, 6, 8], [1, 2, 3, 4]),
    "reference_test_tied": ([0, 2, 6, 8], [1, 1, 1, 4]),
}


def system_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """200 (metric, human) vectors of 2..8 systems: human integers 0..3, metric multiples of 1/8 (many ties)."""
    rng = np.random.default_rng(11)
    cases = []
    for _ in range(200):
        n = rng.integers(2, 9)
        human = rng.integers(0, 4, size=n)
        metric = rng.integers(0, 8, size=n) / 8
        cases.append((metric, human))
    return cases


def document_cases() -> list[tuple[np.ndarray, np.ndarray]]:
    """30 (metric, human) matrices [systems, documents], about 15 % of the human values NaN."""
    rng = np.random.default_rng(5)
    cases = []
    for _ in range(30):
        systems, documents = rng.integers(2, 7), rng.integers(1, 9)
        human = rng.integers(0, 4, size=(systems, documents)).astype(float)
        metric = rng.integers(0, 6, size=(systems, documents)) / 4
        human[rng.random(human.shape) < 0.15] = np.nan
        cases.append((metric, human))
    return cases


def spa_case() -> tuple[np.ndarray, np.ndarray]:
    """(metric, human) [5 systems, 12 documents], multiples of 1/8 (exact in float32)."""
    rng = np.random.default_rng(6)
    human = rng.integers(0, 16, size=(5, 12)) / 8
    metric = rng.integers(0, 16, size=(5, 12)) / 8
    return metric, human


def checksum(arrays: list[np.ndarray]) -> str:
    """sha256 over each array's shape and float64 bytes (NaN included), in order."""
    digest = hashlib.sha256()
    for array in arrays:
        values = np.ascontiguousarray(array, dtype=np.float64)
        digest.update(repr(values.shape).encode())
        digest.update(values.tobytes())
    return digest.hexdigest()


def pack_signs(mask: np.ndarray) -> dict[str, Any]:
    """A -1/+1 matrix as its shape and the hex of its bits (+1 -> 1)."""
    return {"shape": list(mask.shape), "bits": np.packbits(mask.ravel() > 0).tobytes().hex()}


def unpack_signs(packed: dict[str, Any]) -> np.ndarray:
    shape = tuple(packed["shape"])
    bits = np.unpackbits(np.frombuffer(bytes.fromhex(packed["bits"]), dtype=np.uint8))[: int(np.prod(shape))]
    return bits.reshape(shape).astype(float) * 2.0 - 1.0


def load_golden() -> dict[str, Any]:
    return json.loads(GOLDEN.read_text(encoding="utf-8"))
