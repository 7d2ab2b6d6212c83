"""Import files into a dataset: the one path the management commands and the admin's upload page share.

Each call parses and checks everything first, then stores in one transaction (``store.dataset_import``): an
``ImporterError`` (its message lists ``file:line: problem``) means nothing was written.
"""
from __future__ import annotations

from pathlib import Path

from survey.importers import store
from survey.importers.consolidated import Missing, parse_consolidated
from survey.importers.pens import parse_pens

PENS_DEFAULT_DATASET = "pens"


def consolidated_import(path: Path, *, dataset: str = "", missing: Missing = "error") -> store.ImportResult:
    """Import a consolidated JSON file into ``dataset`` (default: the file name without extension, slugified)."""
    name = store.dataset_name_check(dataset) if dataset else store.dataset_name_from_file(path.stem)
    records = parse_consolidated(path, missing=missing)
    return store.dataset_import(name=name, records=records, source=f"consolidated: {path.name}")


def pens_import(news: Path, test: Path, *, dataset: str = PENS_DEFAULT_DATASET) -> store.ImportResult:
    """Import the PENS test users (``personalized_test.tsv``) and the news they reference (``news.tsv``)."""
    name = store.dataset_name_check(dataset)
    records = parse_pens(news, test)
    return store.dataset_import(name=name, records=records, source=f"PENS: {news.name} + {test.name}")
