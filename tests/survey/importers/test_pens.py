"""PENS parser: header detection, column checks, #TAB# titles, history, only referenced news."""
from __future__ import annotations

import pytest

from survey.importers.pens import parse_pens
from survey.importers.records import DocumentRecord, ReaderRecord, SummaryRecord
from tests.survey.importers.helpers import NEWS_HEADER, TEST_HEADER, news_row, problems_of, write_lines

NEWS = [news_row(f"N{i}") for i in range(1, 6)]
USERS = [
    "U1\tN1 N2 N9\tN3,N1\tMy title three#TAB#My title one",
    "U2\t\tN4, N3\tTitle four #TAB# Title three by U2",
]


@pytest.fixture
def files(tmp_path):
    def make(news=NEWS, users=USERS, news_header=True, test_header=True):
        news_path = write_lines(tmp_path / "news.tsv", ([NEWS_HEADER] if news_header else []) + list(news))
        test_lines = ([TEST_HEADER] if test_header else []) + list(users)
        test_path = write_lines(tmp_path / "personalized_test.tsv", test_lines)
        return news_path, test_path

    return make


def test_records(files):
    records = parse_pens(*files())
    assert [d.external_id for d in records.documents] == ["N3", "N1", "N4"]  # referenced only, first-seen order
    assert records.documents[0] == DocumentRecord("N3", "Headline N3", "Body of N3.", "sports", "soccer")
    assert records.readers == [ReaderRecord("U1", ["N1", "N2", "N9"]), ReaderRecord("U2", [])]
    assert records.summaries == [
        SummaryRecord("N3", "U1", "user", "My title three"),
        SummaryRecord("N1", "U1", "user", "My title one"),
        SummaryRecord("N4", "U2", "user", "Title four"),
        SummaryRecord("N3", "U2", "user", "Title three by U2"),
    ]
    assert [s.line for s in records.summaries] == [2, 2, 3, 3]


def test_news_header_is_optional(files):
    assert parse_pens(*files(news_header=False)) == parse_pens(*files(news_header=True))


def test_five_columns_are_enough(files):
    news = ["\t".join(row.split("\t")[:5]) for row in NEWS]
    assert parse_pens(*files(news=news)).documents[1].body == "Body of N1."


def test_wrong_column_count(files):
    news = NEWS[:2] + ["N7\tsports\tHeadline only"] + NEWS[2:] + ["\t".join(["N8"] + ["x"] * 7)]
    assert problems_of(parse_pens, *files(news=news)) == [
        "news.tsv:4: expected 7 tab-separated columns, found 3",
        "news.tsv:8: expected 7 tab-separated columns, found 8",
    ]


def test_duplicate_news_id(files):
    assert problems_of(parse_pens, *files(news=NEWS + [news_row("N2")])) == [
        'news.tsv:7: duplicate News ID "N2" (first at line 3)'
    ]


def test_empty_body_of_an_imported_news_names_it(files):
    news = [news_row("N1", body="  ")] + NEWS[1:] + [news_row("N8", body="")]  # N8 is not referenced
    assert problems_of(parse_pens, *files(news=news, news_header=False)) == [
        'news.tsv:1: field "News body" is empty (news "N1")'
    ]


def test_test_header_is_required(files):
    news_path, test_path = files(test_header=False)
    [problem] = problems_of(parse_pens, news_path, test_path)
    assert problem.startswith('personalized_test.tsv:1: expected the header line "userid<TAB>clicknewsID')


def test_title_count_mismatch_gives_both_counts(files):
    users = [USERS[0], "U2\tN1\tN4,N3,N5\tTitle four#TAB#Title three"]
    assert problems_of(parse_pens, *files(users=users)) == [
        'personalized_test.tsv:3: field "posnewID" has 3 news ids but field "rewrite_titles" has 2 titles '
        'separated by "#TAB#" (user "U2")'
    ]


def test_unknown_news_id_names_id_and_line(files):
    users = USERS + ["U3\t\tN5,N77\tA#TAB#B"]
    assert problems_of(parse_pens, *files(users=users)) == [
        'personalized_test.tsv:4: news id "N77" in posnewID is not in news.tsv'
    ]


def test_duplicate_userid(files):
    users = USERS + ["U1\t\tN5\tAgain"]
    assert problems_of(parse_pens, *files(users=users)) == [
        'personalized_test.tsv:4: duplicate userid "U1" (first at line 2)'
    ]


@pytest.mark.parametrize(
    ("row", "expected"),
    [
        ("U3\t\tN5,N2\tA#TAB# ", 'field "rewrite_titles": title 2 (news id "N2") is empty (user "U3")'),
        ("U3\t\t\t", 'field "posnewID" is empty (user "U3")'),
        ("U3\t\tN5,,N2\tA#TAB#B#TAB#C", 'field "posnewID" contains an empty news id (user "U3")'),
        ("U3\t\tN5,N5\tA#TAB#B", 'field "posnewID" lists news id "N5" twice (user "U3")'),
        ("\t\tN5\tA", 'field "userid" is empty'),
        ("U3\tN5\tA", "expected 4 tab-separated columns, found 3"),
    ],
)
def test_test_file_row_errors(files, row, expected):
    assert problems_of(parse_pens, *files(users=USERS + [row])) == [f"personalized_test.tsv:4: {expected}"]


def test_errors_of_both_files_are_reported_together(files):
    news = NEWS + ["bad row"]
    users = USERS + ["U1\t\tN5\tAgain"]
    problems = problems_of(parse_pens, *files(news=news, users=users))
    assert problems == [
        'personalized_test.tsv:4: duplicate userid "U1" (first at line 2)',
        "news.tsv:7: expected 7 tab-separated columns, found 1",
    ]


def test_no_users(files):
    assert problems_of(parse_pens, *files(users=[])) == ["personalized_test.tsv:1: no users found"]


def test_crlf_line_endings(tmp_path, files):
    news_path, test_path = files()
    for path in (news_path, test_path):
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    records = parse_pens(news_path, test_path)
    assert records.summaries[-1].text == "Title three by U2" and records.documents[0].body == "Body of N3."
