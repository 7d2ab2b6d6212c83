"""docs/conventions.md is the project's own statement of its conventions: every section the code and the
documentation pages cite exists, and nothing points at a document outside the project."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "conventions.md"
CITATION = re.compile(r"conventions(?:\.md)?,? (?:sec\.|section) (\d+)(?:\.(\d+))?(?:-(\d+))?")


def sources() -> list[Path]:
    folders = ("metaeval", "survey", "api", "config", "tests")
    return [path for folder in folders for path in (ROOT / folder).rglob("*.py")]


def pages() -> list[Path]:
    """The README and the documentation site's pages (docs/conventions.md itself apart)."""
    return [ROOT / "README.md", *(path for path in (ROOT / "docs").rglob("*.md") if path != DOC)]


def sections() -> dict[int, str]:
    """Section number -> its text, from the ``## N. Title`` headings."""
    parts = re.split(r"^## (\d+)\. ", DOC.read_text(encoding="utf-8"), flags=re.MULTILINE)
    return {int(number): text for number, text in zip(parts[1::2], parts[2::2], strict=False)}


def test_every_cited_section_exists() -> None:
    known = sections()
    assert sorted(known) == list(range(1, 30))
    cited = 0
    for path in [*sources(), *pages()]:
        for match in CITATION.finditer(path.read_text(encoding="utf-8")):
            first, item, last = match.groups()
            for number in range(int(first), int(last or first) + 1):
                assert number in known, f"{path.relative_to(ROOT)} cites sec. {number}"
            if item:  # "sec. 4.4": item 4 of a numbered list in sec. 4
                assert re.search(rf"^\s*{item}\. ", known[int(first)], flags=re.MULTILINE), match.group(0)
            cited += 1
    assert cited > 20


def test_no_reference_to_the_design_folder_or_its_file() -> None:
    for path in [*sources(), *pages()]:
        if path != Path(__file__):
            assert "PERSEVAL_" + "CONVENTIONS" not in path.read_text(encoding="utf-8"), path
