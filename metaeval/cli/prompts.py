"""``python -m metaeval prompts``: iCOPERNICUS prompts for a generator run outside the platform.

    python -m metaeval prompts DATASET.jsonl [--styles 0-shot,...] [--adversarial] [--seed N]
        [--histories HISTORIES.jsonl | --pens-news news.tsv --pens-test personalized_test.tsv]
        [--tokenizer DIR] --out prompts.jsonl

One JSON object per prompt (``prompt_id``, ``doc_id``, ``reader_id``, ``style``, ``partner_id``, ``adversarial``,
``example_doc_ids``, ``tokens``, ``tokenizer``, ``prompt``) and ``OUT.meta.json`` (settings, budgets, counts,
skipped prompts by reason). Generate a headline per prompt, then import them with
``manage.py import_summaries OUTPUTS.csv --dataset NAME --kind llm`` (columns ``doc_id,reader_id,system,variant,text``
with ``system`` = the model and ``variant`` = ``style``). Conventions: docs/conventions.md sec. 24.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from metaeval.cli.args import at_least, comma_list
from metaeval.core.icopernicus.prompts import (
    BUDGETS,
    STYLES,
    PromptInputs,
    Skipped,
    Tokenizer,
    build_prompts,
    whitespace_tokenizer,
)
from metaeval.core.io.fileio import Problems, iter_json_values, json_type, read_text
from metaeval.core.io.loaders import load_corpus

__all__ = ["add_prompts_command", "load_histories"]


def add_prompts_command(commands: Any) -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = commands.add_parser(
        "prompts", help="iCOPERNICUS prompts per (document, reader, prompt style), for generation elsewhere",
        description="Write one prompt per (document, reader, prompt style) with the paper's token budgets "
        "(docs/conventions.md sec. 24); generate outside, import the outputs with import_summaries --variant.")
    parser.add_argument("dataset", help="consolidated JSON / JSON Lines dataset (documents, readers' own headlines)")
    parser.add_argument("--styles", default=",".join(STYLES), help=f"comma-separated styles (default all: "
                        f"{','.join(STYLES)})")
    parser.add_argument("--adversarial", action="store_true",
                        help="the contrastive styles with the partner's history and example headlines replaced "
                        "(a seeded derangement of the readers and random headlines)")
    parser.add_argument("--seed", type=at_least(0), default=0, metavar="N",
                        help="seed of the partners, examples and adversarial swaps (default 0)")
    history = parser.add_mutually_exclusive_group()
    history.add_argument("--histories", metavar="FILE.jsonl",
                         help='reading histories: {"reader_id": ..., "history": [clicked headline, ...]} per line, '
                         "oldest click first")
    history.add_argument("--pens-news", metavar="news.tsv", help="PENS news.tsv (with --pens-test): the histories "
                         "are the clicked news' headlines")
    parser.add_argument("--pens-test", metavar="personalized_test.tsv", help="PENS personalized_test.tsv")
    parser.add_argument("--tokenizer", metavar="DIR", help="a local tokenizer folder (transformers; nothing is "
                        "downloaded) to count the budgets in its tokens; default: whitespace-separated words")
    parser.add_argument("--out", default="prompts.jsonl", help="output JSON Lines (default prompts.jsonl)")
    parser.set_defaults(handler=cmd_prompts)
    return parser


def load_histories(path: str | Path) -> dict[str, list[str]]:
    """Reader id -> clicked headlines (oldest first) from a JSON Lines file; every problem as ``file:line: ...``."""
    path = Path(path)
    file = path.name
    problems = Problems()
    out: dict[str, list[str]] = {}
    seen: dict[str, int] = {}
    for line, value in iter_json_values(read_text(path, file), file, problems):
        if not isinstance(value, dict):
            problems.add(file, line, f"expected a JSON object, found {json_type(value)}")
            continue
        reader, history = value.get("reader_id"), value.get("history")
        if not isinstance(reader, str) or not reader.strip():
            problems.add(file, line, 'field "reader_id" must be a non-empty string')
            continue
        if not isinstance(history, list) or not all(isinstance(item, str) for item in history):
            problems.add(file, line, 'field "history" must be an array of headline strings')
            continue
        if reader in seen:
            problems.add(file, line, f'field "reader_id": "{reader}" is already on line {seen[reader]}')
            continue
        seen[reader] = line
        out[reader] = list(history)
    problems.raise_if_any()
    return out


def _tokenizer(folder: str | None) -> Tokenizer:
    if not folder:
        return whitespace_tokenizer()
    path = Path(folder)
    if not path.is_dir():
        raise ValueError(f"--tokenizer {folder}: not a folder; give a local tokenizer folder (tokenizer.json or "
                         "vocab files, as saved by save_pretrained); nothing is downloaded")
    try:
        from transformers import AutoTokenizer

        loaded: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    except (OSError, ValueError) as exc:
        raise ValueError(f"--tokenizer {folder}: cannot load a tokenizer from it ({exc}); give a local folder "
                         "saved with save_pretrained") from None
    return Tokenizer(str(path), loaded.tokenize, loaded.convert_tokens_to_string)


def cmd_prompts(args: argparse.Namespace) -> int:
    from metaeval.cli.common import UsageError

    styles = list(dict.fromkeys(comma_list(args.styles)))
    unknown = [style for style in styles if style not in BUDGETS]
    if unknown:
        raise UsageError(f"--styles: unknown {', '.join(unknown)}; choose from {', '.join(STYLES)}")
    if bool(args.pens_news) != bool(args.pens_test):
        raise UsageError("--pens-news and --pens-test go together")
    corpus = load_corpus(args.dataset)
    if args.histories:
        histories = load_histories(args.histories)
    elif args.pens_news:
        from survey.importers.pens import pens_histories

        histories = pens_histories(args.pens_news, args.pens_test)
    else:
        histories = {}
    try:
        tokenizer = _tokenizer(args.tokenizer)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    inputs = PromptInputs(
        documents={doc.doc_id: (doc.headline, doc.body) for doc in corpus.documents},
        own={doc.doc_id: {reader: text for reader in doc.readers if (text := doc.summary(reader, "user"))}
             for doc in corpus.documents},
        histories=histories,
    )
    skipped = Skipped()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    written: Counter[str] = Counter()
    try:
        with out.open("w", encoding="utf-8") as handle:
            for prompt in build_prompts(inputs, styles, seed=args.seed, tokenizer=tokenizer,
                                        adversarial=args.adversarial, skipped=skipped):
                handle.write(json.dumps(prompt.as_record(tokenizer.name), ensure_ascii=False) + "\n")
                written[prompt.style] += 1
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    meta = {"command": "prompts", "dataset": str(args.dataset), "styles": styles, "seed": args.seed,
            "adversarial": args.adversarial, "tokenizer": tokenizer.name,
            "histories": args.histories or (f"PENS {args.pens_test}" if args.pens_test else None),
            "budgets": {style: vars(BUDGETS[style]) for style in styles}, "written": dict(written),
            "skipped": skipped.counts}
    out.with_name(out.name + ".meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    total = sum(written.values())
    notes = "; ".join(f"{reason}: {count}" for reason, count in sorted(skipped.counts.items()))
    print(f"wrote {total} prompts to {out}" + (f" (skipped: {notes})" if notes else ""), file=sys.stderr)
    if not total:
        print("error: no prompt could be built (see the skipped reasons)", file=sys.stderr)
        return 1
    return 0
