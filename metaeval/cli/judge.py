"""``python -m metaeval judge``: ask an LLM judge A/B questions about pairs of texts and write a judgment file.

    python -m metaeval judge CASES.jsonl --judge openai --base-url URL --model M [--api-key-env VAR]
                             [--temperature 0] [--max-tokens 8] [--retries 5] [--timeout 60] [--concurrency 4]
    python -m metaeval judge CASES.jsonl --judge transformers --model-path DIR [--seed N]
        [--criteria quality,relevance,personalization] [--runs 40] [--templates FILE.json]
        [--out judgments.csv] [--resume]

The output is a judgment CSV (columns :data:`~metaeval.core.judges.runner.COLUMNS`; ``pairwise``, ``accuracy``
and ``consistency`` read it as it is), one row appended and flushed per judgment, and ``OUT.meta.json``: the judge's
settings (never the API key), the templates' SHA-256, criteria, runs and counts. ``--resume`` appends to an
existing file and skips the (case, systems, criterion, run) already in it; it refuses a file made with other judge
settings, templates or runs. Conventions: docs/conventions.md sec. 20.
"""
from __future__ import annotations

import argparse
import csv
import io
import json
import re
import sys
from collections import Counter
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from metaeval.cli.args import at_least, comma_list, number
from metaeval.core.io.records import json_safe
from metaeval.core.io.records import number as cell
from metaeval.core.judges.base import Judge, JudgeConfigError
from metaeval.core.judges.cases import load_cases
from metaeval.core.judges.factory import make_judge
from metaeval.core.judges.plan import DEFAULT_RUNS, PlanError, RequestKey, plan
from metaeval.core.judges.prompts import CRITERIA, DEFAULT_TEMPLATES, check_templates, load_templates, templates_sha256
from metaeval.core.judges.runner import COLUMNS, JudgmentRecord, iter_judging
from metaeval.core.pairwise.judgments import load_judgments

__all__ = ["add_judge_command", "cmd_judge", "meta_path"]


def add_judge_command(commands: Any) -> argparse.ArgumentParser:
    """Add ``judge`` to the ``python -m metaeval`` subparsers."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "judge", help="LLM A/B judgments of pairs of texts (AuPEL), written as a pairwise judgment file",
        description="Ask an LLM judge which of two systems' texts is better on each criterion, R times per case "
        "with half of the runs in each order, and write a pairwise judgment file (docs/conventions.md sec. 20).")
    parser.add_argument("cases", help="JSON Lines file of cases: case_id, model_a, model_b, text_a, text_b, "
                        "context, examples, doc_id, reader_id")
    parser.add_argument("--judge", choices=["openai", "transformers"], required=True,
                        help="openai: an OpenAI-compatible chat-completions endpoint; transformers: a local model")
    http = parser.add_argument_group("--judge openai")
    http.add_argument("--base-url", help="endpoint base URL, e.g. https://api.openai.com/v1 or "
                      "http://localhost:8000/v1 (POST BASE/chat/completions)")
    http.add_argument("--model", help="model name sent to the endpoint")
    http.add_argument("--api-key-env", metavar="VAR", help="NAME of the environment variable holding the API key "
                      "(sent as Authorization: Bearer; never recorded); leave out for a server without a key")
    http.add_argument("--max-tokens", type=at_least(1), default=8, metavar="N",
                      help="most tokens per reply (default 8)")
    http.add_argument("--retries", type=at_least(0), default=5, metavar="N",
                      help="retries after a timeout, connection error, 429 or 5xx (default 5)")
    http.add_argument("--timeout", type=number(0, above=True), default=60.0, metavar="SECONDS",
                      help="per-request timeout (default 60)")
    http.add_argument("--backoff", type=number(0), default=1.0, metavar="SECONDS",
                      help="first retry wait, doubled each retry, with jitter (default 1)")
    http.add_argument("--concurrency", type=at_least(1), default=4, metavar="N",
                      help="requests at once (default 4)")
    local = parser.add_argument_group("--judge transformers")
    local.add_argument("--model-path", metavar="DIR",
                       help="local folder with config.json, weights and tokenizer (nothing is downloaded)")
    local.add_argument("--max-new-tokens", type=at_least(1), default=8, metavar="N",
                       help="most generated tokens (default 8)")
    local.add_argument("--device", default="cpu", help="torch device (default cpu)")
    parser.add_argument("--temperature", type=number(0), default=0.0, help="sampling temperature (default 0)")
    parser.add_argument("--seed", type=at_least(0), metavar="N",
                        help="transformers: sampling seed (default 0); openai: sent as the request's seed and "
                        "seeds the retry jitter")
    parser.add_argument("--judge-name", metavar="NAME",
                        help="the judge column (default: the model name, or the model folder's name)")
    parser.add_argument("--criteria", default=",".join(CRITERIA),
                        help=f"comma-separated criteria (default {','.join(CRITERIA)})")
    parser.add_argument("--runs", type=at_least(2), default=DEFAULT_RUNS, metavar="R",
                        help=f"judgments per case and criterion, an even number; half show model_a first "
                        f"(default {DEFAULT_RUNS})")
    parser.add_argument("--templates", metavar="FILE.json",
                        help='prompt templates {criterion: {"system": ..., "user": ...}} replacing the defaults')
    parser.add_argument("--out", default="judgments.csv", help="judgment CSV to write (default judgments.csv)")
    parser.add_argument("--resume", action="store_true",
                        help="append to --out and skip the judgments already in it")
    parser.set_defaults(handler=cmd_judge)
    return parser


def meta_path(out: Path) -> Path:
    """``OUT.meta.json`` next to the judgment file."""
    return out.with_name(out.name + ".meta.json")


def _error(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return 2


def build_judge(args: argparse.Namespace) -> Judge:
    """The judge the arguments name (:class:`JudgeConfigError` when a needed flag is missing)."""
    if args.judge == "openai":
        settings = {"base_url": args.base_url, "model": args.model, "api_key_env": args.api_key_env,
                    "temperature": args.temperature, "max_tokens": args.max_tokens, "timeout": args.timeout,
                    "retries": args.retries, "backoff": args.backoff, "seed": args.seed, "name": args.judge_name}
    else:
        settings = {"model_path": args.model_path, "max_new_tokens": args.max_new_tokens,
                    "temperature": args.temperature, "seed": args.seed, "device": args.device,
                    "name": args.judge_name}
    try:
        return make_judge(args.judge, settings)
    except JudgeConfigError as exc:  # the settings' names as the command's flags
        raise JudgeConfigError(_as_flags(str(exc))) from None


def _as_flags(message: str) -> str:
    """``base_url: required for the openai judge`` -> ``--base-url: required ...``."""
    return re.sub(r"\b(base_url|model_path|model|api_key_env|max_tokens|max_new_tokens)(?=:)",
                  lambda m: "--" + m.group(1).replace("_", "-"), message)


def _done_keys(out: Path) -> set[RequestKey]:
    """The keys of the judgments already in ``out``; an unfinished last line (a killed write) is cut off first."""
    data = out.read_bytes()
    if data and not data.endswith(b"\n"):
        with out.open("r+b") as handle:
            handle.truncate(data.rfind(b"\n") + 1)
    with out.open(encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle), None)
    if header is not None and tuple(header) != COLUMNS:
        raise JudgeConfigError(f"{out}: --resume needs a file written by this command (header {','.join(COLUMNS)})")
    if header is None or out.stat().st_size <= len(",".join(COLUMNS)) + 1:
        return set()
    table = load_judgments(out)
    return {(j.case_id, j.model_a, j.model_b, j.criterion, j.run or 0) for j in table.judgments}


_SAME = ("judge", "templates_sha256", "runs")


def _check_meta(path: Path, meta: Mapping[str, object]) -> None:
    if not path.exists():
        return
    previous = json.loads(path.read_text(encoding="utf-8"))
    changed = [key for key in _SAME if previous.get(key) != json_safe(meta[key])]
    if changed:
        raise JudgeConfigError(f"{path}: --resume with other {', '.join(changed)} than the file was made with; "
                               "write to a new --out instead")


def _write_meta(path: Path, meta: Mapping[str, object]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(json_safe(meta), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    tmp.replace(path)


def _line(record: JudgmentRecord) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerow(
        [cell(round(record.seconds, 6) if column == "seconds" else getattr(record, column)) for column in COLUMNS])
    return buffer.getvalue()


def _counts(out: Path) -> dict[str, object]:
    """Judgments, invalid ones, failed calls and winners per criterion in the whole file."""
    with out.open(encoding="utf-8", newline="") as handle:
        if sum(1 for _ in csv.reader(handle)) < 2:
            return {"judgments": 0, "invalid": 0, "call_errors": 0, "by_criterion": {}}
    table = load_judgments(out)
    by_criterion: dict[str, Counter[str]] = {}
    for judgment in table.judgments:
        by_criterion.setdefault(judgment.criterion, Counter())[judgment.winner] += 1
    with out.open(encoding="utf-8", newline="") as handle:
        errors = sum(1 for row in csv.DictReader(handle) if row.get("error"))
    return {"judgments": len(table.judgments), "invalid": table.invalid, "call_errors": errors,
            "by_criterion": {name: dict(counts) for name, counts in sorted(by_criterion.items())}}


class _Progress:
    """``judged N/T`` on stderr: redrawn in place on a terminal, else a line at every tenth."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = stream.isatty()
        self.step = 0

    def __call__(self, done: int, total: int) -> None:
        if self.tty:
            self.stream.write(f"\rjudged {done}/{total}" + ("\n" if done == total else ""))
            self.stream.flush()
        elif total and (done == total or done * 10 // total > self.step):
            self.step = done * 10 // total
            print(f"judged {done}/{total}", file=self.stream)


def cmd_judge(args: argparse.Namespace) -> int:
    criteria = list(dict.fromkeys(comma_list(args.criteria)))
    if args.runs % 2:
        return _error(f"--runs {args.runs}: must be even (half of the runs show each text first)")
    templates = load_templates(args.templates) if args.templates else dict(DEFAULT_TEMPLATES)
    check_templates(templates, criteria)
    used = {name: templates[name] for name in criteria}
    cases = load_cases(args.cases)
    try:
        requests = plan(cases, criteria, runs=args.runs)
    except PlanError as exc:
        return _error(f"{Path(args.cases).name}: {exc}")
    out = Path(args.out)
    meta_file = meta_path(out)
    if out.exists() and not args.resume:
        return _error(f"{out} exists; pass --resume to continue it, or choose another --out")
    try:
        judge = build_judge(args)
        meta: dict[str, object] = {
            "command": "judge", "cases": str(args.cases), "judge": judge.describe(), "judge_kind": "llm",
            "criteria": criteria, "runs": args.runs, "templates": args.templates or "default",
            "templates_sha256": templates_sha256(used), "out": str(out),
        }
        done: set[RequestKey] = set()
        if args.resume and out.exists():
            _check_meta(meta_file, meta)
            done = _done_keys(out)
    except JudgeConfigError as exc:
        return _error(str(exc))
    out.parent.mkdir(parents=True, exist_ok=True)
    fresh = not out.exists() or out.stat().st_size == 0
    skipped = sum(1 for request in requests if request.key in done)
    meta["started"] = datetime.now(UTC).isoformat(timespec="seconds")
    _write_meta(meta_file, {**meta, "status": "running"})
    written = failed = 0
    concurrency = args.concurrency if args.judge == "openai" else 1
    with out.open("a", encoding="utf-8", newline="") as handle:
        if fresh:
            handle.write(",".join(COLUMNS) + "\n")
            handle.flush()
        for record in iter_judging(judge, requests, templates=used, done=done, concurrency=concurrency,
                                   progress=_Progress(sys.stderr)):
            handle.write(_line(record))
            handle.flush()
            written += 1
            failed += bool(record.error)
    counts = _counts(out)
    _write_meta(meta_file, {**meta, "status": "finished", "finished": datetime.now(UTC).isoformat(
        timespec="seconds"), "this_session": {"written": written, "skipped": skipped, "call_errors": failed},
        "counts": counts})
    print(f"wrote {written} judgments to {out} ({skipped} already there, {failed} failed calls); file: "
          f"{counts['judgments']} judgments, {counts['invalid']} invalid; settings in {meta_file}", file=sys.stderr)
    if written and failed == written:
        print("error: every judge call failed; see the error column", file=sys.stderr)
        return 1
    return 0

