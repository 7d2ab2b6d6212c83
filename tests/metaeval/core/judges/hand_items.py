"""A small judgment table of people (P1-P3) and a judge (gpt), worked by hand in the agreement, PPI and
alternative-annotator tests."""
from __future__ import annotations

from metaeval.core.pairwise.features import LENGTH, StyleData
from metaeval.core.pairwise.judgments import Judgment, JudgmentTable

#: case, criterion, model_a, model_b, winner, judge, judge_kind, run, shown_first
ROWS = [
    # c1 quality A-B: people A, A, B -> A (2-1); judge runs A (A first), B (B first), A (A first), A (B first)
    ("c1", "quality", "A", "B", "model_a", "P1", "human", None, "model_a"),
    ("c1", "quality", "A", "B", "model_a", "P2", "human", None, "model_b"),
    ("c1", "quality", "B", "A", "model_a", "P3", "human", None, "model_a"),
    ("c1", "quality", "A", "B", "model_a", "gpt", "llm", 1, "model_a"),
    ("c1", "quality", "A", "B", "model_b", "gpt", "llm", 2, "model_b"),
    ("c1", "quality", "A", "B", "model_a", "gpt", "llm", 3, "model_a"),
    ("c1", "quality", "A", "B", "model_a", "gpt", "llm", 4, "model_b"),
    # c2 quality B-C: people C, tie -> C; judge C (B first), C (C first)
    ("c2", "quality", "B", "C", "model_b", "P1", "human", None, "model_a"),
    ("c2", "quality", "B", "C", "tie", "P2", "human", None, "model_a"),
    ("c2", "quality", "C", "B", "model_a", "gpt", "llm", 1, "model_b"),
    ("c2", "quality", "C", "B", "model_a", "gpt", "llm", 2, "model_a"),
    # c3 quality A-C: the judge only, A then C -> tie
    ("c3", "quality", "A", "C", "model_a", "gpt", "llm", 1, "model_a"),
    ("c3", "quality", "A", "C", "model_b", "gpt", "llm", 2, "model_b"),
    # c4 quality A-B: people only
    ("c4", "quality", "A", "B", "model_a", "P1", "human", None, "model_a"),
    # c5 quality B-C: people B, C -> tie; judge B (B first); an invalid judge run
    ("c5", "quality", "B", "C", "model_a", "P1", "human", None, "model_a"),
    ("c5", "quality", "B", "C", "model_b", "P2", "human", None, "model_b"),
    ("c5", "quality", "B", "C", "model_a", "gpt", "llm", 1, "model_a"),
    ("c5", "quality", "B", "C", "invalid", "gpt", "llm", 2, "model_b"),
    # c1 relevance A-B: people B; judge A; another judge that is not ours
    ("c1", "relevance", "A", "B", "model_b", "P1", "human", None, "model_a"),
    ("c1", "relevance", "A", "B", "model_a", "gpt", "llm", 1, "model_b"),
    ("c1", "relevance", "A", "B", "model_b", "other", "llm", 1, "model_a"),
]


def table(rows: list[tuple] = ROWS) -> JudgmentTable:  # type: ignore[type-arg]
    return JudgmentTable(tuple(
        Judgment(case_id=case, criterion=criterion, model_a=a, model_b=b, winner=winner, line=line, judge=judge,
                 judge_kind=kind, run=run, shown_first=first)
        for line, (case, criterion, a, b, winner, judge, kind, run, first) in enumerate(rows, 2)), source="hand.csv")


#: word counts: c1 A 3, B 1 (A longer); c2 B 3, C 2 (B longer); c5 B 2, C 2 (equal)
LENGTHS = StyleData(side={LENGTH: {("c1", "A"): 3.0, ("c1", "B"): 1.0, ("c2", "B"): 3.0, ("c2", "C"): 2.0,
                                   ("c5", "B"): 2.0, ("c5", "C"): 2.0}})


def csv_text(lengths: bool = True) -> str:
    """:data:`ROWS` as a judgment file; with ``lengths`` the texts' lengths as ``length_a,length_b`` columns (the
    relevance rows leave them empty: one value per (case, system) is enough)."""
    known = LENGTHS.side[LENGTH]
    lines = ["case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first"
             + (",length_a,length_b" if lengths else "")]
    for case, criterion, a, b, winner, judge, kind, run, first in ROWS:
        line = f"{case},{criterion},{a},{b},{winner},{judge},{kind},{'' if run is None else run},{first}"
        if lengths:
            values = ["" if criterion == "relevance" or (case, s) not in known else f"{known[(case, s)]:g}"
                      for s in (a, b)]
            line += "," + ",".join(values)
        lines.append(line)
    return "\n".join(lines) + "\n"
