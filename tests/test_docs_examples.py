"""The example files of docs/guide/your-data.md (docs/examples/) are read by the same parsers that read real files,
so the documented formats stay true; every example is shown on that page and checked here."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from metaeval.cli.prompts import load_histories
from metaeval.core.feedback.reader import read_feedback
from metaeval.core.icopernicus.probes import read_scores
from metaeval.core.io.loaders import load_corpus, load_ratings
from metaeval.core.judges.cases import load_cases
from metaeval.core.judges.prompts import check_templates, load_templates
from metaeval.core.pairwise import zopf_files
from metaeval.core.pairwise.judgments import load_judgments
from metaeval.core.planning.simulate import read_truth
from survey.importers.consolidated import parse_consolidated
from survey.importers.pens import parse_pens
from survey.importers.summaries import parse_summaries

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "docs" / "examples"
PAGE = ROOT / "docs" / "guide" / "your-data.md"


def dataset(path: Path) -> None:
    corpus = load_corpus(path)
    assert [document.doc_id for document in corpus.documents] == ["N1", "N2"]
    assert corpus.systems == ("sys-a", "sys-b")
    records = parse_consolidated(path)  # the importer: the database's limits too
    assert len(records.documents) == 2 and {reader.external_id for reader in records.readers} == {"U1", "U2", "U3"}


def ratings(path: Path) -> None:
    table = load_ratings(path)
    assert len(table.rows) == 18 and {row.system for row in table.rows} == {"user", "sys-a", "sys-b"}
    corpus = load_corpus(EXAMPLES / "consolidated.jsonl")
    documents = {document.doc_id for document in corpus.documents}
    assert {row.doc_id for row in table.rows} == documents


def pens(path: Path) -> None:
    records = parse_pens(EXAMPLES / "news.tsv", path)
    assert [document.external_id for document in records.documents] == ["N1", "N2"]
    assert {summary.reader_id for summary in records.summaries} == {"NT1", "NT2"}


def summaries(path: Path) -> None:
    systems = {record.system for record in parse_summaries(path)}
    assert systems == ({"sys-c"} if path.suffix == ".csv" else {"llama-2-7b:0-shot"})


def judgments(path: Path) -> None:
    table = load_judgments(path)
    assert len(table.judgments) == (8 if path.suffix == ".csv" else 3)
    assert {judgment.criterion for judgment in table.judgments} >= {"quality"}


def cases(path: Path) -> None:
    assert [case.case_id for case in load_cases(path)] == ["c1", "c2"]


def templates(path: Path) -> None:
    loaded = load_templates(path)
    check_templates(loaded, ["quality", "personalization"])  # raises on a problem
    assert set(loaded) == {"quality", "personalization"}


def topics(path: Path) -> None:
    loaded = zopf_files.load_topics(path)
    assert len(loaded["t1"].sentences) == 4


def zopf_judgments(path: Path) -> None:
    loaded = zopf_files.load_judgments(path, zopf_files.load_topics(EXAMPLES / "topics.jsonl"))
    assert len(loaded) == 5


def zopf_summaries(path: Path) -> None:
    loaded = zopf_files.load_summaries(path, zopf_files.load_topics(EXAMPLES / "topics.jsonl"))
    assert [summary.summary_id for summary in loaded] == ["s1", "s2"]


def feedback(path: Path) -> None:
    records = read_feedback(path)
    assert len(records) == 6 and {record.worker for record in records} == {"w1", "w2"}


def style_scores(path: Path) -> None:
    assert len(read_scores(path)) == 6


def truth(path: Path) -> None:
    assert list(read_truth(path).systems) == ["gold", "t5-xxl", "t5-xl"]


def histories(path: Path) -> None:
    assert set(load_histories(path)) == {"U1", "U2", "U3"}


CHECKS: dict[str, Callable[[Path], None]] = {
    "consolidated.jsonl": dataset,
    "ratings.csv": ratings,
    "news.tsv": lambda path: pens(EXAMPLES / "personalized_test.tsv"),
    "personalized_test.tsv": pens,
    "summaries.csv": summaries,
    "summaries.jsonl": summaries,
    "judgments.csv": judgments,
    "judgments.jsonl": judgments,
    "cases.jsonl": cases,
    "templates.json": templates,
    "topics.jsonl": topics,
    "zopf-judgments.csv": zopf_judgments,
    "zopf-summaries.jsonl": zopf_summaries,
    "axis_evals.jsonl": feedback,
    "egises.csv": style_scores,
    "truth.csv": truth,
    "histories.jsonl": histories,
}


def test_every_example_is_checked_and_shown() -> None:
    files = {path.name for path in EXAMPLES.iterdir() if path.is_file()}
    assert files == set(CHECKS)
    page = PAGE.read_text(encoding="utf-8")
    for name in files:
        assert f'--8<-- "{name}"' in page, name
        assert f"(../examples/{name})" in page, name


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_the_example_reads(name: str) -> None:
    CHECKS[name](EXAMPLES / name)
