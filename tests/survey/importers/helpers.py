"""Builders for small input files and a database snapshot for all-or-nothing checks."""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import pytest

from metaeval.core.io.fileio import ImportFileError
from survey.models import Dataset, Document, Reader, Summary, System


def doc(
    doc_id: str = "d1",
    readers: Iterable[str] = ("u1", "u2"),
    systems: Iterable[str] = ("sysA", "sysB"),
    **extra: Any,
) -> dict[str, Any]:
    """A consolidated record where every reader has a user summary and one from each system."""
    systems = list(systems)
    return {
        "doc_id": doc_id,
        "doc_text": f"Body of {doc_id}.",
        "doc_summ": f"Headline {doc_id}",
        "m_summary_dict": {
            uid: {"user": f"{uid} on {doc_id}", **{s: f"{s} for {uid} on {doc_id}" for s in systems}} for uid in readers
        },
        **extra,
    }


def write_jsonl(path: Path, records: Iterable[Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def write_pretty(path: Path, records: Iterable[Any]) -> Path:
    path.write_text("\n".join(json.dumps(r, indent=2) for r in records) + "\n", encoding="utf-8")
    return path


def write_array(path: Path, records: Iterable[Any]) -> Path:
    path.write_text(json.dumps(list(records), indent=2), encoding="utf-8")
    return path


def problems_of(func: Callable[..., Any], *args: Any, **kwargs: Any) -> list[str]:
    """The problems of the ImportFileError that ``func`` must raise."""
    with pytest.raises(ImportFileError) as info:
        func(*args, **kwargs)
    assert str(info.value) == "\n".join(info.value.problems)
    return info.value.problems


def snapshot() -> dict[str, list[tuple[Any, ...]]]:
    """Every row of the dataset tables, for comparing the database before and after an import."""
    return {
        "datasets": sorted(Dataset.objects.values_list("pk", "name", "source", "description")),
        "documents": sorted(
            Document.objects.values_list("pk", "dataset_id", "external_id", "headline", "body", "category", "topic")
        ),
        "readers": sorted(
            (pk, ds, ext, repr(history), profile)
            for pk, ds, ext, history, profile in Reader.objects.values_list(
                "pk", "dataset_id", "external_id", "history", "profile"
            )
        ),
        "systems": sorted(System.objects.values_list("pk", "name", "kind", "variant")),
        "summaries": sorted(Summary.objects.values_list("pk", "document_id", "reader_id", "system_id", "text")),
    }


NEWS_HEADER = "News ID\tCategory\tTopic\tHeadline\tNews body\tTitle entity\tEntity content"
TEST_HEADER = "userid\tclicknewsID\tposnewID\trewrite_titles"


def news_row(news_id: str, body: str | None = None, category: str = "sports", topic: str = "soccer") -> str:
    body = f"Body of {news_id}." if body is None else body
    return "\t".join([news_id, category, topic, f"Headline {news_id}", body, "{}", "{}"])


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path
