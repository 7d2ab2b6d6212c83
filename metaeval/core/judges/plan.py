"""The judge plan: every (case, criterion, run) to ask, with the order the two texts are shown in (AuPEL sec. 3.4;
conventions sec. 20, item 2).

Each case is judged ``runs`` times per criterion (default 40, as in the paper); ``runs`` must be even. Run r shows
``model_a``'s text first when r is odd and ``model_b``'s when r is even, so exactly half of a case's runs in each
criterion show each system first. Order: cases in file order, then criteria in the given order, then runs 1..R.
"""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .cases import JudgeCase

__all__ = ["DEFAULT_RUNS", "JudgeRequest", "PlanError", "RequestKey", "plan"]

DEFAULT_RUNS = 40
#: ``(case_id, model_a, model_b, criterion, run)``: what a done judgment is matched on when resuming
RequestKey = tuple[str, str, str, str, int]


class PlanError(ValueError):
    """A plan that cannot be made (odd runs, no criteria, a case without the input a criterion needs)."""


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One judge call: ``case`` on ``criterion``, repeat ``run`` (1-based), ``shown_first`` = ``model_a`` or
    ``model_b`` (whose text is Text A)."""

    case: JudgeCase
    criterion: str
    run: int
    shown_first: str

    @property
    def key(self) -> RequestKey:
        return (self.case.case_id, self.case.model_a, self.case.model_b, self.criterion, self.run)


def plan(cases: Iterable[JudgeCase], criteria: Sequence[str], runs: int = DEFAULT_RUNS) -> list[JudgeRequest]:
    """Every request of the module docstring's plan. ``relevance`` needs each case's ``context`` and
    ``personalization`` its ``examples``: a case without them is a :class:`PlanError` naming its line."""
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 2 or runs % 2:
        raise PlanError(f"runs must be an even number >= 2 (half of the runs show each text first), not {runs!r}")
    if not criteria:
        raise PlanError("no criteria to judge")
    repeated = sorted({criterion for criterion in criteria if list(criteria).count(criterion) > 1})
    if repeated:
        raise PlanError(f"criteria named more than once: {', '.join(repeated)}")
    cases = list(cases)
    problems: list[str] = []
    for case in cases:
        where = f"line {case.line}" if case.line else "case"
        if "relevance" in criteria and not case.context.strip():
            problems.append(f'{where}: case "{case.case_id}" has no context, which relevance needs')
        if "personalization" in criteria and not any(text.strip() for text in case.examples):
            problems.append(f'{where}: case "{case.case_id}" has no examples, which personalization needs')
    if problems:
        raise PlanError("\n".join(problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20
                                                    else [])))
    return [
        JudgeRequest(case, criterion, run, "model_a" if run % 2 else "model_b")
        for case in cases for criterion in criteria for run in range(1, runs + 1)
    ]
