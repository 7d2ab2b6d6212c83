"""``python -m metaeval zopf``: summary utilities from sentence preferences (Zopf; docs/conventions.md sec. 18).

    python -m metaeval zopf TOPICS.jsonl [--judgments J.csv] [--summaries S.jsonl]
                            [--simulate N [--ties skip|literal]] [--raw] [--alpha 0.01] [--seed 0]
                            [--format json|csv] [--table agreement|utilities|strengths] [--out FILE]

Inputs (formats in :mod:`metaeval.core.pairwise.zopf_files`): the topics with their source sentences (and optional
reference
summaries), human sentence preferences ``topic,sentence_a,sentence_b,winner`` and/or ``--simulate N`` labels per
topic from the references (N seeded random pairs), and the summaries to score with optional human scores.

Output: ``--format json`` (default) one document: the conventions used, per topic the Bradley-Terry strengths of
its sentences (and how the fit went), each summary's utility, the agreement with the human scores and the number of
pairs it rests on, and the macro agreement. ``--format csv`` writes one table (``--table``): ``agreement`` (one row
per topic and a last row ``topic=*`` with the macro value), ``utilities`` or ``strengths``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from metaeval.cli.args import add_rater_arguments, rater_choice, say_exclusions
from metaeval.core.io.records import json_safe, write_csv
from metaeval.core.pairwise.zopf_params import ALPHA, MAX_ITERATIONS, TOLERANCE

TABLES = {
    "agreement": ["topic", "summaries", "pairs", "agreement"],
    "utilities": ["topic", "summary_id", "human", "utility"],
    "strengths": ["topic", "index", "strength", "sentence"],
}


def add_zopf_command(commands: Any) -> None:
    """Add the ``zopf`` subcommand to the CLI's subparsers."""
    zopf = commands.add_parser("zopf", help="summary utility from sentence preferences (Zopf)",
                               description=__doc__.split("\n")[0])
    zopf.add_argument("topics", help='JSON / JSON Lines: {"topic", "sentences" | "documents", "references"?}')
    zopf.add_argument("--judgments", help="CSV topic,sentence_a,sentence_b,winner (0-based indices, winner a|b)")
    add_rater_arguments(zopf, what="judgment", column="judge")
    zopf.add_argument("--summaries", help='JSON / JSON Lines: {"topic", "summary_id", "sentences" | "text", "human"?}')
    zopf.add_argument("--simulate", type=int, default=0, metavar="N",
                      help="add N simulated labels per topic from its references (eq. 6; seeded random pairs)")
    zopf.add_argument("--ties", choices=["skip", "literal"], default="skip",
                      help="simulated label on equal weights: skip it (default) or the paper's literal 'b wins'")
    zopf.add_argument("--raw", action="store_true", help="count each judgment once (M[a, b] += 1), no smoothing")
    zopf.add_argument("--alpha", type=float, default=ALPHA, help=f"pseudo-count for never-compared sentences "
                      f"(default {ALPHA})")
    zopf.add_argument("--seed", type=int, default=0, help="seed of the simulated pairs (default 0)")
    zopf.add_argument("--format", choices=["json", "csv"], default="json")
    zopf.add_argument("--table", choices=list(TABLES), default="agreement", help="the CSV table (default agreement)")
    zopf.add_argument("--out", help="output file (default stdout)")
    zopf.set_defaults(handler=cmd_zopf)


def zopf_document(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``zopf`` computes, as JSON-ready data."""
    import numpy as np

    from metaeval.cli.common import UsageError
    from metaeval.core.io.exclusions import RaterFilter
    from metaeval.core.pairwise.zopf import (
        agreement,
        bradley_terry,
        comparison_matrix,
        macro_agreement,
        reference_weights,
        sample_pairs,
        similarity,
        simulated_judgments,
        summary_utility,
    )
    from metaeval.core.pairwise.zopf_files import load_judgments, load_summaries, load_topics

    if not args.judgments and args.simulate <= 0:
        raise UsageError("zopf needs --judgments FILE and/or --simulate N")
    if args.simulate < 0 or args.alpha <= 0:
        raise UsageError("--simulate must be >= 0 and --alpha > 0")
    topics = load_topics(args.topics)
    chooser = RaterFilter(rater_choice(args), Path(args.judgments).name) if args.judgments else None
    judgments = load_judgments(args.judgments, topics, raters=chooser) if args.judgments else []
    if chooser is not None:
        say_exclusions(chooser.exclusions, chooser.file)
    summaries = load_summaries(args.summaries, topics) if args.summaries else []
    if args.simulate:
        lacking = [name for name, topic in topics.items() if not topic.references]
        if lacking:
            raise UsageError(f'--simulate needs "references" for every topic (none for {", ".join(lacking)})')
    rng = np.random.default_rng(args.seed)
    out_topics: list[dict[str, Any]] = []
    for name, topic in topics.items():
        items = topic.sentences
        human = [(j.winner, j.loser) for j in judgments if j.topic == name]
        simulated: list[tuple[int, int]] = []
        if args.simulate:
            weights = reference_weights(items, topic.references)
            simulated = simulated_judgments(weights, sample_pairs(len(items), args.simulate, rng), ties=args.ties)
        sim = similarity(items, items, items)
        fit = bradley_terry(comparison_matrix([*human, *simulated], len(items), None if args.raw else sim),
                            alpha=args.alpha)
        scored = [s for s in summaries if s.topic == name]
        utilities = [summary_utility(s.sentences, items, fit.strengths) for s in scored]
        rated = [(s.human, u) for s, u in zip(scored, utilities, strict=True) if s.human is not None]
        value, pairs = agreement([h for h, _ in rated], [u for _, u in rated]) if rated else (float("nan"), 0)
        out_topics.append({
            "topic": name, "splitting": topic.splitting, "sentences": len(items),
            "judgments": len(human), "simulated": len(simulated),
            "fit": {"iterations": fit.iterations, "converged": fit.converged, "alpha": fit.alpha,
                    "regularised": fit.regularised},
            "strengths": [{"index": i, "strength": v, "sentence": s}
                          for i, (v, s) in enumerate(zip(fit.strengths, items, strict=True))],
            "summaries": [{"summary_id": s.summary_id, "splitting": s.splitting, "human": s.human, "utility": u}
                          for s, u in zip(scored, utilities, strict=True)],
            "summaries_rated": len(rated), "pairs": pairs, "agreement": value,
        })
    return json_safe({
        "conventions": {
            "similarity": "(cosine of TF-IDF fitted on the topic's sentences + Jaccard of token sets) / 2",
            "tokens": "lower-cased \\w+ runs",
            "matrix": "raw" if args.raw else "smoothed",
            "bradley_terry": {"update": "MM (Zermelo)", "tolerance": TOLERANCE, "max_iterations": MAX_ITERATIONS,
                              "alpha": args.alpha},
            "simulated": {"per_topic": args.simulate, "ties": args.ties, "seed": args.seed},
            "agreement": "pairs with different human scores; a metric tie counts 0.5; macro over topics",
        },
        "topics": out_topics,
        "macro_agreement": macro_agreement([t["agreement"] for t in out_topics]),
    })


def table_rows(document: dict[str, Any], table: str) -> list[dict[str, object]]:
    """The rows of one CSV table of a ``zopf`` document."""
    topics = document["topics"]
    if table == "utilities":
        return [{"topic": t["topic"], **s} for t in topics for s in t["summaries"]]
    if table == "strengths":
        return [{"topic": t["topic"], **s} for t in topics for s in t["strengths"]]
    rows: list[dict[str, object]] = [
        {"topic": t["topic"], "summaries": t["summaries_rated"], "pairs": t["pairs"], "agreement": t["agreement"]}
        for t in topics
    ]
    rows.append({"topic": "*", "summaries": sum(t["summaries_rated"] for t in topics),
                 "pairs": sum(t["pairs"] for t in topics), "agreement": document["macro_agreement"]})
    return rows


def cmd_zopf(args: argparse.Namespace) -> int:
    document = zopf_document(args)
    out = sys.stdout if args.out in (None, "-") else open(args.out, "w", encoding="utf-8", newline="")  # noqa: SIM115
    try:
        if args.format == "json":
            json.dump(document, out, indent=2, allow_nan=False)
            out.write("\n")
        else:
            write_csv(table_rows(document, args.table), TABLES[args.table], out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0

