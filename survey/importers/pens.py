"""Parse the PENS files (``news.tsv`` and ``personalized_test.tsv``) into records.

Only the news referenced by some user's ``posnewID`` become documents (in first-seen order); each user becomes
a reader with their click history, and each of their rewritten titles a ``user`` summary of that news.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from metaeval.core.io.corpus import REFERENCE as REFERENCE_SYSTEM
from metaeval.core.io.fileio import Problems, iter_lines
from survey.importers.records import (
    MAX_KEY_LENGTH,
    DatasetRecords,
    DocumentRecord,
    ReaderRecord,
    SummaryRecord,
)

NEWS_COLUMNS = ["News ID", "Category", "Topic", "Headline", "News body", "Title entity", "Entity content"]
TEST_COLUMNS = ["userid", "clicknewsID", "posnewID", "rewrite_titles"]
TITLE_SEPARATOR = "#TAB#"


@dataclass(slots=True)
class _User:
    line: int
    user_id: str
    history: list[str]
    news_ids: list[str]
    titles: list[str]


def parse_pens(news_path: str | Path, test_path: str | Path) -> DatasetRecords:
    """Read and validate both files; raise ``ImportFileError`` listing every problem."""
    news_path, test_path = Path(news_path), Path(test_path)
    news_file, test_file = news_path.name, test_path.name
    problems = Problems()

    users = _parse_test(test_path, test_file, problems)
    wanted = {news_id for user in users for news_id in user.news_ids}
    news, all_ids = _parse_news(news_path, news_file, wanted, problems)
    for user in users:
        for news_id in user.news_ids:
            if news_id not in all_ids:
                problems.add(test_file, user.line, f'news id "{news_id}" in posnewID is not in {news_file}')
    problems.raise_if_any()

    out = DatasetRecords()
    for user in users:
        for news_id in user.news_ids:
            if news_id in news:
                out.documents.append(news.pop(news_id))  # pop: each document once, at its first use
        out.readers.append(ReaderRecord(external_id=user.user_id, history=user.history))
        out.summaries.extend(
            SummaryRecord(doc_id=news_id, reader_id=user.user_id, system=REFERENCE_SYSTEM, text=title, line=user.line)
            for news_id, title in zip(user.news_ids, user.titles, strict=True)
        )
    return out


def pens_histories(news_path: str | Path, test_path: str | Path) -> dict[str, list[str]]:
    """Each PENS test user's reading history as the clicked news' headlines, in click order (``clicknewsID``);
    a clicked id missing from ``news.tsv`` is an error naming the line. No database: usable by the command line."""
    news_path, test_path = Path(news_path), Path(test_path)
    problems = Problems()
    users = _parse_test(test_path, test_path.name, problems)
    clicked = {news_id for user in users for news_id in user.history}
    news, _ids = _parse_news(news_path, news_path.name, clicked, problems)
    for user in users:
        missing = [news_id for news_id in user.history if news_id not in news]
        if missing:
            problems.add(test_path.name, user.line, f'field "clicknewsID": news id "{missing[0]}" is not in '
                         f"{news_path.name}" + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
    problems.raise_if_any()
    return {user.user_id: [news[news_id].headline for news_id in user.history] for user in users}


def _parse_test(path: Path, file: str, problems: Problems) -> list[_User]:
    users: list[_User] = []
    first_line: dict[str, int] = {}
    for line, text in iter_lines(path, file):
        if line == 1:
            header = [column.strip().lower() for column in text.split("\t")]
            if header != [column.lower() for column in TEST_COLUMNS]:
                problems.add(file, 1, f"expected the header line {_tabbed(TEST_COLUMNS)}, found {text[:80]!r}")
            continue
        if not text.strip():
            continue
        columns = text.split("\t")
        if len(columns) != len(TEST_COLUMNS):
            problems.add(file, line, f"expected {len(TEST_COLUMNS)} tab-separated columns, found {len(columns)}")
            continue
        user_id, clicks, positives, titles_text = (column.strip() for column in columns)
        count = len(problems)
        if not user_id:
            problems.add(file, line, 'field "userid" is empty')
        elif len(user_id) > MAX_KEY_LENGTH:
            problems.add(file, line, f'field "userid" is longer than {MAX_KEY_LENGTH} characters')
        elif user_id in first_line:
            problems.add(file, line, f'duplicate userid "{user_id}" (first at line {first_line[user_id]})')
        else:
            first_line[user_id] = line
        news_ids = [news_id.strip() for news_id in positives.split(",")]
        titles = [title.strip() for title in titles_text.split(TITLE_SEPARATOR)]
        if not positives:
            problems.add(file, line, f'field "posnewID" is empty (user "{user_id}")')
        elif any(not news_id for news_id in news_ids):
            problems.add(file, line, f'field "posnewID" contains an empty news id (user "{user_id}")')
        elif len(set(news_ids)) != len(news_ids):
            repeated = next(n for n in news_ids if news_ids.count(n) > 1)
            problems.add(file, line, f'field "posnewID" lists news id "{repeated}" twice (user "{user_id}")')
        elif len(titles) != len(news_ids):
            problems.add(
                file,
                line,
                f'field "posnewID" has {len(news_ids)} news ids but field "rewrite_titles" has {len(titles)} '
                f'titles separated by "{TITLE_SEPARATOR}" (user "{user_id}")',
            )
        else:
            for number, (news_id, title) in enumerate(zip(news_ids, titles, strict=True), 1):
                if not title:
                    problems.add(
                        file,
                        line,
                        f'field "rewrite_titles": title {number} (news id "{news_id}") is empty (user "{user_id}")',
                    )
        if len(problems) == count:
            users.append(_User(line, user_id, clicks.split(), news_ids, titles))
    if not first_line and not problems:
        problems.add(file, 1, "no users found")
    return users


def _parse_news(
    path: Path, file: str, wanted: set[str], problems: Problems
) -> tuple[dict[str, DocumentRecord], set[str]]:
    """Validate every row; keep only the ``wanted`` news. Returns (wanted documents by id, all news ids)."""
    news: dict[str, DocumentRecord] = {}
    first_line: dict[str, int] = {}
    for line, text in iter_lines(path, file):
        columns = text.split("\t")
        if line == 1 and columns[0].strip().lower() == NEWS_COLUMNS[0].lower():
            continue  # header
        if not text.strip():
            continue
        if not 5 <= len(columns) <= len(NEWS_COLUMNS):
            problems.add(file, line, f"expected {len(NEWS_COLUMNS)} tab-separated columns, found {len(columns)}")
            continue
        news_id, category, topic, headline, body = (column.strip() for column in columns[:5])
        if not news_id:
            problems.add(file, line, 'field "News ID" is empty')
            continue
        if news_id in first_line:
            problems.add(file, line, f'duplicate News ID "{news_id}" (first at line {first_line[news_id]})')
            continue
        first_line[news_id] = line
        if news_id not in wanted:
            continue
        for name, value in (("News ID", news_id), ("Category", category), ("Topic", topic)):
            if len(value) > MAX_KEY_LENGTH:
                too_long = f'field "{name}" is longer than {MAX_KEY_LENGTH} characters (news "{news_id}")'
                problems.add(file, line, too_long)
        if not body:
            problems.add(file, line, f'field "News body" is empty (news "{news_id}")')
        news[news_id] = DocumentRecord(news_id, headline, body, category, topic)
    if not first_line and not problems:
        problems.add(file, 1, "no news found")
    return news, set(first_line)


def _tabbed(columns: list[str]) -> str:
    return '"' + "<TAB>".join(columns) + '"'
