"""``python -m metaeval meta-accuracy``: pairwise accuracy, acc_eq with tie calibration, soft pairwise accuracy and
close-pair buckets of automatic measures against one human measure (docs/conventions.md sec. 26).

    python -m metaeval meta-accuracy SCORES.csv --human MEASURE [--metrics M1,M2,...] [--value perseval]
                                     [--human-value COLUMN] [--tie-calibration | --epsilon X]
                                     [--documents DOCUMENTS.csv] [--buckets E0,E1,...] [--n-boot 1000]
                                     [--n-permutations 1000] [--confidence 0.95] [--seed N] [--format csv|json]
                                     [--out FILE]

SCORES.csv is what ``score`` (or ``report``, as ``scores.csv``) writes; DOCUMENTS.csv is ``report``'s
``documents.csv`` (``system,measure,doc_id,...`` with the per-document values whose mean is the system value).
CSV columns: :data:`metaeval.core.stats.meta_accuracy.COLUMNS`, the first six exactly
``metric,human,pairs,accuracy,acc_eq,epsilon``.
"""
from __future__ import annotations

import argparse
import csv
import json
import math
import secrets
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from metaeval.cli.args import at_least, comma_list, number
from metaeval.core.io.records import json_safe, write_csv

__all__ = ["add_meta_accuracy_command", "cmd_meta_accuracy"]

DOCUMENT_HEADER = ("system", "measure", "doc_id")


def _edges(text: str) -> list[float]:
    """Comma-separated numbers (``inf`` allowed); :func:`~metaeval.core.stats.meta_accuracy.check_edges` checks
    them in the command."""
    try:
        return [float(part) for part in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not comma-separated numbers, e.g. 0,0.02,0.05,inf") from None


def _confidence(text: str) -> float:
    value = number(0, above=True)(text)
    if value >= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number between 0 and 1")
    return value


def add_meta_accuracy_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``meta-accuracy`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "meta-accuracy", help="pairwise accuracy, acc_eq (tie calibration), soft pairwise accuracy, close pairs",
        description="Agreement of automatic measures with a human measure over system pairs: pairwise accuracy, "
        "acc_eq with optional tie calibration, soft pairwise accuracy and close-pair buckets, with bootstrap "
        "intervals over documents (docs/conventions.md sec. 26).")
    parser.add_argument("scores", help="scores CSV written by `score` (system,measure,... with hj:<aux> rows)")
    parser.add_argument("--human", required=True, metavar="MEASURE", help="the human measure, e.g. hj:rouge_l")
    parser.add_argument("--metrics", metavar="M1,M2,...",
                        help="measures compared with it (default: every automatic measure, in file order)")
    parser.add_argument("--value", default="perseval", metavar="COLUMN", help="column compared (default perseval)")
    parser.add_argument("--human-value", metavar="COLUMN", help="column of the human rows (default: --value)")
    ties = parser.add_mutually_exclusive_group()
    ties.add_argument("--tie-calibration", action="store_true",
                      help="choose epsilon among 0 and every |m_i - m_j| to maximise acc_eq (smallest on ties)")
    ties.add_argument("--epsilon", type=number(0), default=0.0, metavar="X",
                      help="a metric pair with |m_i - m_j| <= X is tied (default 0)")
    parser.add_argument("--documents", metavar="DOCUMENTS.csv",
                        help="per-document values (report's documents.csv): adds soft pairwise accuracy, bootstrap "
                        "intervals and the document-level (group-by-item) row")
    parser.add_argument("--buckets", type=_edges, metavar="E0,E1,...",
                        help="close-pair buckets [E0,E1), [E1,E2), ... of |h_i - h_j| (the last edge may be inf)")
    parser.add_argument("--n-boot", type=at_least(0), default=1000, metavar="N",
                        help="bootstrap rounds over documents (default 1000; 0: no intervals)")
    parser.add_argument("--n-permutations", type=at_least(1), default=1000, metavar="N",
                        help="permutations per pair for soft pairwise accuracy (default 1000; exact when 2^docs <= N)")
    parser.add_argument("--confidence", type=_confidence, default=0.95, metavar="C", help="interval level (0.95)")
    parser.add_argument("--seed", type=at_least(0), metavar="N", help="seed (default: a fresh one, printed)")
    parser.add_argument("--format", choices=["csv", "json"], default="csv")
    parser.add_argument("--out", help="output file (default stdout)")
    parser.set_defaults(handler=cmd_meta_accuracy)
    return parser


def _number(text: str | None, where: str, column: str) -> float:
    if text is None or text.strip() == "":
        return math.nan
    try:
        return float(text)
    except ValueError:
        from metaeval.cli.common import UsageError

        raise UsageError(f"{where}: field {column!r}: {text!r} is not a number") from None


def system_values(rows: Sequence[Mapping[str, str]], path: str, value: str, human: str,
                  human_value: str) -> dict[str, dict[str, float]]:
    """``{measure: {system: value}}`` from :func:`metaeval.cli.common.read_scores` rows (``human_value`` for
    ``human``)."""
    from metaeval.cli.common import UsageError

    out: dict[str, dict[str, float]] = {}
    for line, row in enumerate(rows, start=2):
        measure, system = row["measure"], row["system"]
        column = human_value if measure == human else value
        if column not in row:
            raise UsageError(f"{path}: no column {column!r} (the file has {', '.join(row)})")
        if system in out.setdefault(measure, {}):
            raise UsageError(f"{path}:{line}: system {system!r} and measure {measure!r} again")
        out[measure][system] = _number(row[column], f"{path}:{line}", column)
    return out


def document_values(path: str, columns: Mapping[str, str]) -> dict[str, dict[tuple[str, str], float]]:
    """``{measure: {(system, doc_id): value}}`` of the measures in ``columns`` (measure -> column) from a
    ``documents.csv`` file."""
    from metaeval.cli.common import UsageError

    out: dict[str, dict[tuple[str, str], float]] = {measure: {} for measure in columns}
    with open(path, newline="", encoding="utf-8-sig") as handle:
        reader = csv.DictReader(handle)
        header = reader.fieldnames or []
        if tuple(header[:3]) != DOCUMENT_HEADER:
            raise UsageError(f"{path}: not a per-document file (expected a header starting system,measure,doc_id "
                             "as report's documents.csv)")
        for column in dict.fromkeys(columns.values()):
            if column not in header:
                raise UsageError(f"{path}: no column {column!r} (the file has {', '.join(header)})")
        for line, row in enumerate(reader, start=2):
            measure = row["measure"]
            if measure not in columns:
                continue
            key = (row["system"], row["doc_id"])
            if key in out[measure]:
                raise UsageError(f"{path}:{line}: system {key[0]!r}, measure {measure!r}, document {key[1]!r} again")
            out[measure][key] = _number(row[columns[measure]], f"{path}:{line}", columns[measure])
    for measure, cells in out.items():
        if not cells:
            raise UsageError(f"{path}: no per-document rows of measure {measure!r}")
    return out


def cmd_meta_accuracy(args: argparse.Namespace) -> int:
    from metaeval.cli.common import UsageError, open_out, read_scores
    from metaeval.core.perseval.pipeline import HUMAN_PREFIXES
    from metaeval.core.stats.meta_accuracy import COLUMNS, DocumentValues, check_edges, meta_accuracy_rows

    if args.buckets is not None:
        try:
            check_edges(args.buckets)
        except ValueError as exc:
            raise UsageError(f"--buckets: {exc}") from None
    human_value = args.human_value or args.value
    scores = system_values(read_scores(args.scores), args.scores, args.value, args.human, human_value)
    if args.human not in scores:
        raise UsageError(f"{args.scores}: no measure {args.human!r}; the file has {', '.join(scores)}")
    if args.metrics:
        metrics = comma_list(args.metrics)
        unknown = [name for name in metrics if name not in scores]
        if unknown:
            raise UsageError(f"{args.scores}: no measure {', '.join(map(repr, unknown))}; the file has "
                             f"{', '.join(scores)}")
    else:
        metrics = [name for name in scores if not name.startswith(HUMAN_PREFIXES) and name != args.human]
    if not metrics:
        raise UsageError(f"{args.scores}: no automatic measure to compare with {args.human!r} (name one with "
                         "--metrics)")
    documents: dict[str, DocumentValues] = {}
    if args.documents:
        columns = {name: args.value for name in metrics} | {args.human: human_value}
        documents = {name: DocumentValues.of(cells) for name, cells in document_values(args.documents,
                                                                                        columns).items()}
    seed = secrets.randbelow(2**31) if args.seed is None else args.seed
    rows: list[dict[str, object]] = []
    for metric in metrics:
        try:
            rows += meta_accuracy_rows(
                metric, args.human, scores[metric], scores[args.human], metric_documents=documents.get(metric),
                human_documents=documents.get(args.human), tie_calibration=args.tie_calibration,
                epsilon=args.epsilon, buckets=args.buckets, n_boot=args.n_boot, n_permutations=args.n_permutations,
                confidence=args.confidence, seed=seed)
        except ValueError as exc:
            raise UsageError(f"{args.documents or args.scores}: {metric}: {exc}") from None
    out = open_out(args.out)
    try:
        if args.format == "json":
            document = {
                "source": args.scores, "documents": args.documents, "human": args.human, "metrics": metrics,
                "value": args.value, "human_value": human_value,
                "parameters": {"tie_calibration": args.tie_calibration, "epsilon": args.epsilon,
                               "buckets": args.buckets, "n_boot": args.n_boot, "n_permutations": args.n_permutations,
                               "confidence": args.confidence, "seed": seed},
                "conventions": {
                    "pairs": "unordered pairs of the systems with a value on both sides; human tie: exact equality",
                    "accuracy": "pairs with a human difference ordered the same way by the metric (a metric tie "
                                "disagrees) / pairs with a human difference",
                    "acc_eq": "(concordant + tied on both sides) / pairs; a metric tie is |m_i - m_j| <= epsilon",
                    "tie_calibration": "epsilon among 0 and every |m_i - m_j| maximising acc_eq, the smallest on ties",
                    "document_level": "per document over its systems, then the mean over documents; one epsilon",
                    "spa": "mean over pairs i < j of 1 - |p_h - p_m|, one-sided paired permutation tests over "
                           "documents, shared signs from SeedSequence(seed).spawn(1)[0]",
                    "buckets": "pairs with |h_i - h_j| in [low, high), at the epsilon of all pairs",
                    "interval": "bootstrap over documents, numpy default_rng(seed), percentile, linear",
                },
                "rows": rows,
            }
            json.dump(json_safe(document), out, indent=2, allow_nan=False)
            out.write("\n")
        else:
            write_csv(rows, COLUMNS, out)
    finally:
        if out is not sys.stdout:
            out.close()
    if args.documents:
        print(f"seed {seed}, {args.n_boot} bootstrap rounds, {args.n_permutations} permutations", file=sys.stderr)
    return 0
