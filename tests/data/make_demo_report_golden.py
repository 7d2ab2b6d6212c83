"""Write ``demo_report_golden.json``: the fingerprints of a ``report --full`` folder of the demo data, against which
``tests/metaeval/core/perseval/test_report_pairs.py`` checks that a change to the report adds tables and keys but
changes none it had (issue 33: the pairwise-accuracy view left every earlier table byte-identical).

Usage, from a checkout of the code whose report is the reference (it was main at be0206e, before the view)::

    python -m metaeval report fixtures/demo/consolidated.jsonl --ratings fixtures/demo/ratings.csv \\
        --measures rouge_l,jsd --aux rouge_l,jsd --full --seed 2026 --n-boot 200 --n-permutations 200 \\
        --stability-samples 3 --out-dir FOLDER
    python tests/data/make_demo_report_golden.py FOLDER COMMIT > tests/data/demo_report_golden.json

Fingerprints: the sha256 of each ``tables/<name>.csv`` file's bytes and of each top-level key of ``report.json``
(``parameters`` key by key) as canonical JSON (sorted keys, no spaces).
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

ARGS = ["fixtures/demo/consolidated.jsonl", "--ratings", "fixtures/demo/ratings.csv", "--measures", "rouge_l,jsd",
        "--aux", "rouge_l,jsd", "--full", "--seed", "2026", "--n-boot", "200", "--n-permutations", "200",
        "--stability-samples", "3"]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(value: object) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode()


def fingerprints(folder: Path) -> dict[str, dict[str, str]]:
    """``{"tables": {name: sha}, "keys": {key: sha}, "parameters": {name: sha}}`` of a report folder."""
    report = json.loads((folder / "report.json").read_text(encoding="utf-8"))
    return {
        "tables": {path.stem: sha(path.read_bytes()) for path in sorted((folder / "tables").glob("*.csv"))},
        "keys": {key: sha(canonical(value)) for key, value in report.items() if key not in ("tables", "parameters")},
        "parameters": {key: sha(canonical(value)) for key, value in report["parameters"].items()},
    }


if __name__ == "__main__":
    folder, commit = Path(sys.argv[1]), sys.argv[2]
    json.dump({"commit": commit, "args": ARGS, **fingerprints(folder)}, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")
