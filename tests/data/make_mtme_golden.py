"""Writes tests/data/mtme_golden.json: the outputs of google-research/mt-metrics-eval (Apache-2.0), run on the
inputs of tests/metaeval/core/stats/mtme_cases.py. Nothing of the reference is kept in this repository: it is
imported from a checkout given on the command line, e.g.

    git --git-dir=MIRROR archive COMMIT | tar -x -C /tmp/mtme
    .venv/bin/python tests/data/make_mtme_golden.py /tmp/mtme --commit COMMIT

Used: ``tau_optimization.tau_optimization(metric, human, TauSufficientStats.acc_23)`` (missing values as None, the
reference's convention; rows = documents for the document-level cases) and ``pce.compute_pairwise_p_values``
(its defaults: 1000 permutations, seed 4) with ``pce.compute_one_minus_pce``. The reference draws its -1/+1 mask
inside ``compute_pairwise_p_values``; the script records the mask it multiplies by (the first argument of its
``np.matmul`` call) so that the tests can use the same one.
"""
from __future__ import annotations

import argparse
import hashlib
import importlib
import json
import math
import sys
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests.metaeval.core.stats import mtme_cases as cases  # noqa: E402


def as_lists(matrix: np.ndarray) -> list[Any]:
    """Rows of Python floats with None for NaN (the reference filters None, not NaN)."""
    return [[None if math.isnan(v) else float(v) for v in row] for row in np.atleast_2d(matrix).astype(float)]


def optimise(tau: Any, metric: Any, human: Any, full: bool = True) -> dict[str, Any] | None:
    try:
        result = tau.tau_optimization(metric, human, tau.TauSufficientStats.acc_23)
    except ZeroDivisionError:  # no row with a pair
        return None
    out = {"best_threshold": float(result.best_threshold), "best_tau": float(result.best_tau)}
    if full:
        out |= {"thresholds": [float(t) for t in result.thresholds], "taus": [float(t) for t in result.taus]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("checkout", type=Path, help="a checkout of google-research/mt-metrics-eval")
    parser.add_argument("--commit", required=True, help="the commit of that checkout (recorded)")
    parser.add_argument("--out", type=Path, default=cases.GOLDEN)
    args = parser.parse_args()
    sys.path.insert(0, str(args.checkout.resolve()))
    tau = importlib.import_module("mt_metrics_eval.tau_optimization")
    pce = importlib.import_module("mt_metrics_eval.pce")
    files = {name: hashlib.sha256((args.checkout / name).read_bytes()).hexdigest()
             for name in ("mt_metrics_eval/tau_optimization.py", "mt_metrics_eval/pce.py")}

    hand = {name: {"metric": metric, "human": human, **(optimise(tau, metric, human) or {})}
            for name, (metric, human) in cases.HAND_CASES.items()}
    systems = cases.system_cases()
    documents = cases.document_cases()
    metric, human = cases.spa_case()
    with mock.patch.object(pce.np, "matmul", wraps=np.matmul) as spy:
        p_human = pce.compute_pairwise_p_values(human)
    mask = np.array(spy.call_args.args[0], dtype=float)
    assert set(np.unique(mask)) == {-1.0, 1.0} and mask.shape == (1000, human.shape[1])
    p_metric = pce.compute_pairwise_p_values(metric)
    upper = np.triu_indices(human.shape[0], 1)
    golden = {
        "source": {
            "repository": "https://github.com/google-research/mt-metrics-eval",
            "commit": args.commit,
            "sha256": files,
            "command": "python tests/data/make_mtme_golden.py CHECKOUT --commit " + args.commit,
            "numpy": np.__version__,
        },
        "tau_optimization": {
            "hand": hand,
            "system": {"inputs_sha256": cases.checksum([a for case in systems for a in case]),
                       "results": [optimise(tau, m, h, full=False) for m, h in systems]},
            "document": {"inputs_sha256": cases.checksum([a for case in documents for a in case]),
                         "results": [optimise(tau, as_lists(m.T), as_lists(h.T)) for m, h in documents]},
        },
        "pce": {
            "inputs_sha256": cases.checksum([metric, human]),
            "num_permutations": 1000,
            "seed": 4,
            "mask": cases.pack_signs(mask),
            "p_human": p_human[upper].tolist(),
            "p_metric": p_metric[upper].tolist(),
            "one_minus_pce": float(pce.compute_one_minus_pce(p_human, p_metric)),
        },
    }
    args.out.write_text(compact(golden) + "\n", encoding="utf-8")


def compact(value: Any, indent: str = "") -> str:
    """JSON with one line per key; lists of numbers and dicts of scalars on one line."""
    if isinstance(value, dict) and any(isinstance(v, dict | list) for v in value.values()):
        inner = indent + "  "
        items = [f"{inner}{json.dumps(k)}: {compact(v, inner)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + indent + "}"
    if isinstance(value, list) and any(isinstance(v, dict) for v in value):
        inner = indent + "  "
        return "[\n" + ",\n".join(inner + compact(v, inner) for v in value) + "\n" + indent + "]"
    return json.dumps(value)


if __name__ == "__main__":
    main()
