"""Import files into a dataset: the one path the management commands and the admin's upload page share.

Each call parses and checks everything first, then stores in one transaction (``store.dataset_import``): an
``ImporterError`` (its message lists ``file:line: problem``) means nothing was written.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

from metaeval.core.feedback.surrogates import SurrogateResult
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


def surrogates_import(result: SurrogateResult, *, dataset: str, source: str) -> store.ImportResult:
    """Import a surrogate dataset built from feedback ratings (docs/conventions.md sec. 25) into ``dataset``.

    The records go through the consolidated file's parser and checks (:func:`parse_consolidated` with
    ``missing="drop"``: an annotator need not have rated every policy of an article), then one transaction."""
    name = store.dataset_name_check(dataset)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / f"{name}.jsonl"
        result.write_records(path)
        records = parse_consolidated(path, missing="drop", file=f"{source} (surrogates)")
    return store.dataset_import(name=name, records=records, source=f"OpenAI feedback surrogates: {source}")
