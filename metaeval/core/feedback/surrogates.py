"""Surrogate personalized summaries from feedback ratings (perseval-tmlr sec. 6.2; docs/conventions.md sec. 25).

For each article and annotator j: the combined gold reference u_j joins the k summaries j rated >= ``gold_min``
(the paper: "above 6 of 7", i.e. 7); for each kept policy's summary s that j rated r, the surrogate s_j is s
repeated k + (r_max - r) times. An annotator with k = 0 has no gold and is dropped for that article
(``no_gold``); an article is kept when at least ``min_annotators`` annotators remain. The result is the
consolidated dataset (readers = annotators, ``user`` = u_j, systems = policies), a report of what was kept and
dropped and why, and the ratings the OpenAI PerSEval-HJ variant reads (:mod:`metaeval.core.feedback.hj`).
"""
from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

from metaeval.core.feedback.hj import FEEDBACK_RATING_FILE_COLUMNS
from metaeval.core.feedback.reader import FeedbackRecord
from metaeval.core.io.corpus import REFERENCE
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.io.records import write_csv

__all__ = ["SurrogateOptions", "SurrogateResult", "build_surrogates", "repetitions"]

GoldFrom = Literal["all", "kept"]
GoldOrder = Literal["policy", "file"]
Duplicates = Literal["first", "mean", "error"]


@dataclass(frozen=True)
class SurrogateOptions:
    """Every choice of the builder (conventions sec. 25); the defaults are the paper's reading."""

    scale_max: int = 7
    gold_min: float = 7
    #: exact policy names kept as systems; with ``policy_pattern`` a policy is kept when either selects it
    policies: tuple[str, ...] | None = None
    policy_pattern: str | None = None
    gold_from: GoldFrom = "all"
    gold_order: GoldOrder = "policy"
    separator: str = " "
    duplicates: Duplicates = "first"
    min_annotators: int = 2

    def __post_init__(self) -> None:
        if self.scale_max < 2:
            raise ValueError(f"scale_max must be at least 2, not {self.scale_max}")
        if not 1 <= self.gold_min <= self.scale_max:
            raise ValueError(f"gold_min must lie in 1..{self.scale_max}, not {self.gold_min:g}")
        if self.min_annotators < 1:
            raise ValueError(f"min_annotators must be at least 1, not {self.min_annotators}")
        if self.gold_from not in ("all", "kept"):
            raise ValueError(f"gold_from must be all or kept, not {self.gold_from!r}")
        if self.gold_order not in ("policy", "file"):
            raise ValueError(f"gold_order must be policy or file, not {self.gold_order!r}")
        if self.duplicates not in ("first", "mean", "error"):
            raise ValueError(f"duplicates must be first, mean or error, not {self.duplicates!r}")
        if self.policy_pattern is not None:
            try:
                re.compile(self.policy_pattern)
            except re.error as exc:
                raise ValueError(f"policy_pattern {self.policy_pattern!r} is not a regular expression: {exc}") from None

    def keeps(self, policy: str) -> bool:
        """Whether ``policy`` is a system: every policy when neither filter is set, else a listed name or one
        the pattern finds (``re.search``)."""
        if self.policies is None and self.policy_pattern is None:
            return True
        listed = self.policies is not None and policy in self.policies
        return listed or (self.policy_pattern is not None and re.search(self.policy_pattern, policy) is not None)


@dataclass
class _Rated:
    """One (article, annotator, policy) after duplicates: its rating r, summary text and line(s)."""

    policy: str
    summary: str
    rating: float
    lines: list[int]


def repetitions(k: int, rating: float, scale_max: int) -> int:
    """k + (r_max - r): how many copies of the summary make the surrogate. A mean rating (``--duplicates mean``)
    enters as r rounded half up, ``floor(r + 0.5)`` (conventions sec. 25 item 7): 3.5 counts as 4, so k = 1 and
    r_max = 7 give 1 + 7 - 4 = 4 copies."""
    return k + scale_max - math.floor(rating + 0.5)


@dataclass
class SurrogateResult:
    """The dataset records (consolidated format), the rows of the ratings file and the report."""

    records: list[dict[str, Any]]
    ratings: list[dict[str, object]]
    report: dict[str, Any]

    def write(self, out: str | Path, *, report: str | Path | None = None,
              ratings: str | Path | None = None) -> tuple[Path, Path, Path]:
        """Write ``out`` (JSON Lines), the report (default ``<out>.report.json``) and the ratings CSV (default
        ``<out>.ratings.csv``); returns the three paths."""
        out = Path(out)
        report_path = Path(report) if report else out.with_name(out.name + ".report.json")
        ratings_path = Path(ratings) if ratings else out.with_name(out.name + ".ratings.csv")
        self.write_records(out)
        self.write_report(report_path)
        self.write_ratings(ratings_path)
        return out, report_path, ratings_path

    def write_records(self, path: str | Path) -> None:
        """The dataset as JSON Lines, one consolidated record per kept article."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(record, ensure_ascii=False) + "\n" for record in self.records)

    def write_report(self, path: str | Path) -> None:
        """The report as indented JSON."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8") as handle:
            json.dump(self.report, handle, indent=2, ensure_ascii=False)
            handle.write("\n")

    def write_ratings(self, path: str | Path) -> None:
        """The ratings of the OpenAI HJ variant: ``doc_id,reader,system,rating,gold_mean,scale_max``."""
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        with open(path, "w", encoding="utf-8", newline="") as handle:
            write_csv(self.ratings, FEEDBACK_RATING_FILE_COLUMNS, handle)

    def summary(self) -> str:
        """A few lines for a person: what was kept and dropped."""
        totals = self.report["totals"]
        reasons = ", ".join(f"{count} {reason}" for reason, count in totals["articles_dropped_by_reason"].items())
        lines = [
            f"{totals['records']} records, {totals['ratings']} ratings on {self.report['axis']!r} "
            f"({totals['null_axis']} not rated on it, {totals['duplicates']} duplicates)",
            f"articles: {totals['articles_read']} read, {totals['articles_kept']} kept"
            + (f", dropped: {reasons}" if reasons else ""),
            f"annotators kept: {totals['annotator_entries_kept']} (article, annotator) entries of "
            f"{totals['annotators_kept']} annotators; dropped: "
            + (", ".join(f"{count} {reason}" for reason, count in totals["annotators_dropped_by_reason"].items())
               or "none"),
            f"systems: {', '.join(self.report['policies']['kept']) or 'none'}"
            + (f"; filtered out: {', '.join(self.report['policies']['filtered_out'])}"
               if self.report["policies"]["filtered_out"] else ""),
        ]
        if totals["gaps"]:
            lines.append(f"{totals['gaps']} (annotator, policy) gaps in kept articles: score with --missing drop")
        return "\n".join(lines)


def _deduplicate(records: Sequence[FeedbackRecord], options: SurrogateOptions, source: str
                 ) -> tuple[dict[str, dict[str, dict[str, _Rated]]], list[dict[str, Any]]]:
    """doc -> worker -> policy -> rating, in first-seen order, and the duplicates found (conventions sec. 25)."""
    rated: dict[str, dict[str, dict[str, _Rated]]] = {}
    values: dict[tuple[str, str, str], list[float]] = {}
    duplicates: list[dict[str, Any]] = []
    problems: list[str] = []
    for record in records:
        if record.rating is None:
            continue
        by_policy = rated.setdefault(record.doc_id, {}).setdefault(record.worker, {})
        key = (record.doc_id, record.worker, record.policy)
        earlier = by_policy.get(record.policy)
        if earlier is None:
            by_policy[record.policy] = _Rated(record.policy, record.summary, record.rating, [record.line])
            values[key] = [record.rating]
            continue
        if options.duplicates == "error":
            problems.append(f'{source}:{record.line}: field "summary.policy": "{record.policy}" rated again by worker '
                            f'"{record.worker}" for document "{record.doc_id}" (first at line {earlier.lines[0]}; '
                            f"use --duplicates first or mean)")
        earlier.lines.append(record.line)
        values[key].append(record.rating)
        if options.duplicates == "mean":
            earlier.rating = sum(values[key]) / len(values[key])
    if problems:
        raise ImportFileError(problems)
    for doc_id, workers in rated.items():
        for worker, by_policy in workers.items():
            for policy, item in by_policy.items():
                if len(item.lines) > 1:
                    duplicates.append({"doc_id": doc_id, "worker": worker, "policy": policy, "lines": item.lines,
                                       "ratings": values[(doc_id, worker, policy)], "rating_used": item.rating})
    return rated, duplicates


def build_surrogates(records: Sequence[FeedbackRecord], options: SurrogateOptions = SurrogateOptions(), *,
                     axis: str = "overall", source: str = "") -> SurrogateResult:
    """The consolidated dataset of surrogates, its ratings rows and its report (see the module docstring).

    Articles and annotators in file order (first line seen); a kept annotator's systems sorted by policy name.
    Raises ``ImportFileError`` for a duplicate with ``duplicates="error"``."""
    rated, duplicates = _deduplicate(records, options, source or "feedback")
    first: dict[str, FeedbackRecord] = {}
    seen_policies: dict[str, int] = {}
    null_axis = 0
    for record in records:
        first.setdefault(record.doc_id, record)
        if record.rating is None:
            null_axis += 1
        else:
            seen_policies[record.policy] = seen_policies.get(record.policy, 0) + 1
    kept_policies = sorted(name for name in seen_policies if options.keeps(name))
    out_records: list[dict[str, Any]] = []
    rating_rows: list[dict[str, object]] = []
    articles: list[dict[str, Any]] = []
    annotators_dropped: dict[str, int] = {}
    articles_dropped: dict[str, int] = {}
    kept_workers: set[str] = set()
    entries_kept = 0
    gaps_total = 0
    for doc_id, head in first.items():
        workers = rated.get(doc_id, {})
        entries = [_annotator(worker, by_policy, options) for worker, by_policy in workers.items()]
        for entry in entries:
            if entry["reason"]:
                annotators_dropped[entry["reason"]] = annotators_dropped.get(entry["reason"], 0) + 1
        usable = [entry for entry in entries if entry["kept"]]
        reason = None
        if not workers:
            reason = "no_ratings"
        elif len(usable) < options.min_annotators:
            reason = "too_few_annotators"
        article: dict[str, Any] = {"doc_id": doc_id, "line": head.line, "kept": reason is None, "reason": reason,
                                   "usable_annotators": len(usable), "annotators": entries}
        if reason is None:
            systems = sorted({policy for entry in usable for policy in entry["repetitions"]})
            gaps = [{"worker": entry["worker"], "policy": policy} for entry in usable for policy in systems
                    if policy not in entry["repetitions"]]
            article.update(systems=systems, gaps=gaps)
            gaps_total += len(gaps)
            entries_kept += len(usable)
            kept_workers.update(entry["worker"] for entry in usable)
            out_records.append(_record(head, workers, usable, options))
            rating_rows.extend(
                {"doc_id": doc_id, "reader": entry["worker"], "system": policy,
                 "rating": workers[entry["worker"]][policy].rating, "gold_mean": entry["gold_mean"],
                 "scale_max": options.scale_max}
                for entry in usable for policy in entry["repetitions"]
            )
        else:
            articles_dropped[reason] = articles_dropped.get(reason, 0) + 1
        articles.append(article)
    report = {
        "source": source,
        "axis": axis,
        "options": {**asdict(options), "policies": list(options.policies) if options.policies is not None else None},
        "totals": {
            "records": len(records),
            "ratings": len(records) - null_axis,
            "null_axis": null_axis,
            "duplicates": len(duplicates),
            "articles_read": len(first),
            "articles_kept": len(out_records),
            "articles_dropped_by_reason": articles_dropped,
            "annotators_kept": len(kept_workers),
            "annotator_entries_kept": entries_kept,
            "annotators_dropped_by_reason": annotators_dropped,
            "surrogates": len(rating_rows),
            "gaps": gaps_total,
        },
        "policies": {
            "seen": dict(sorted(seen_policies.items())),
            "kept": kept_policies,
            "filtered_out": {name: count for name, count in sorted(seen_policies.items()) if name not in kept_policies},
            "not_found": [name for name in options.policies or () if name not in seen_policies],
        },
        "duplicates": duplicates,
        "articles": articles,
    }
    return SurrogateResult(out_records, rating_rows, report)


def _annotator(worker: str, by_policy: dict[str, _Rated], options: SurrogateOptions) -> dict[str, Any]:
    """One (article, annotator): k, the gold in its order, the repetition count per kept policy, or the reason
    the annotator is dropped (``no_gold``: k = 0; ``no_kept_policy``: no kept policy rated)."""
    candidates = [item for item in by_policy.values() if options.gold_from == "all" or options.keeps(item.policy)]
    gold = [item for item in candidates if item.rating >= options.gold_min]
    if options.gold_order == "policy":
        gold.sort(key=lambda item: (item.policy, item.summary))
    else:
        gold.sort(key=lambda item: item.lines[0])
    k = len(gold)
    counts = {policy: repetitions(k, item.rating, options.scale_max)
              for policy, item in sorted(by_policy.items()) if options.keeps(policy)}
    reason = "no_gold" if k == 0 else ("no_kept_policy" if not counts else None)
    return {
        "worker": worker,
        "kept": reason is None,
        "reason": reason,
        "k": k,
        "gold": [{"policy": item.policy, "rating": item.rating, "line": item.lines[0]} for item in gold],
        "gold_mean": sum(item.rating for item in gold) / k if k else None,
        "repetitions": counts if reason is None else {},
    }


def _record(head: FeedbackRecord, workers: dict[str, dict[str, _Rated]], usable: list[dict[str, Any]],
            options: SurrogateOptions) -> dict[str, Any]:
    """The consolidated record of a kept article (conventions sec. 2): ``doc_summ`` = title, ``doc_text`` = the
    article or post, ``category`` = site or subreddit."""
    join = options.separator.join
    summaries: dict[str, dict[str, str]] = {}
    for entry in usable:
        by_policy = workers[entry["worker"]]
        gold_text = join(by_policy[item["policy"]].summary for item in entry["gold"])
        summaries[entry["worker"]] = {
            REFERENCE: gold_text,
            **{policy: join([by_policy[policy].summary] * count) for policy, count in entry["repetitions"].items()},
        }
    record: dict[str, Any] = {"doc_id": head.doc_id, "doc_summ": head.title, "doc_text": head.text}
    if head.site:
        record["category"] = head.site
    record["m_summary_dict"] = summaries
    return record

