"""Reads of a preference study's live state (conventions sec. 27.8): per system pair the judged items and the
first system's score from the stored judgments, the ranking with its rank ranges and the stopping rule
(:func:`metaeval.core.planning.study.study_state`), the items assigned so far (the adaptive draw's balancing), and
the judgments saved against the uniform design.

Cost per call: two aggregate queries over the study's judgments, grouped by (system_a, system_b, winner) and
returning at most 3 x pairs rows (the database does the counting; nothing is read per judgment), one
Bradley-Terry fit on the systems (n x n), and, for an adaptive draw only, the study's preference items (at most
the design's budget of pairs x cases_per_pair rows, four short columns each) and the dataset's summaries of the
study's systems (to find the cases with every system's text, as *Generate questionnaires* does).
"""
from __future__ import annotations

import math

from django.db.models import Count

from metaeval.core.display.ranks import rank_range, tied_bands
from metaeval.core.planning.adaptive import Assignment as Planned
from metaeval.core.planning.adaptive import pair_index
from metaeval.core.planning.confseq import StopRule
from metaeval.core.planning.power import exact_power, sample_size
from metaeval.core.planning.study import StudyState, study_state
from survey.models import REFERENCE_SYSTEM, Judgment, PreferenceItem, Study

__all__ = ["UNIFORM_SCAN_LIMIT", "design_budget", "planned_items", "study_live_state", "study_ranking", "study_rule",
           "study_systems",
           "uniform_equivalent"]


def study_systems(study: Study) -> list[str]:
    """The compared systems' names in study order (name order, the readers' own texts left out)."""
    return [str(name) for name in
            study.systems.exclude(name=REFERENCE_SYSTEM).order_by("name").values_list("name", flat=True)]


def study_rule(study: Study) -> StopRule:
    """The study's stopping rule as the planning code reads it."""
    if study.stop_rule == Study.StopRule.WIDTH:
        return StopRule("width", float(study.stop_width))
    return StopRule(str(study.stop_rule))


def design_budget(study: Study, pairs: int) -> int:
    """The uniform design's items: every pair on ``cases_per_pair`` cases (the adaptive design's budget too)."""
    return pairs * int(study.cases_per_pair)


def study_live_state(study: Study, systems: list[str]) -> StudyState:
    """The study's state from its stored judgments (module docstring; participants excluded on review left out).
    An outcome is one judged item, the mean of its criteria's scores: per pair, the items are the judgments on
    the study's first criterion (each submitted item answers every criterion) and the score is the summed scores
    over all criteria divided by the criteria per item."""
    n = len(systems)
    index = pair_index(n)
    position = {name: i for i, name in enumerate(systems)}
    count = [0.0] * (n * (n - 1) // 2)
    total = [0.0] * len(count)
    score = [0.0] * len(count)
    first_criterion = study.criteria[0]["name"] if study.criteria else ""
    judged = (Judgment.objects.filter(item__questionnaire__study=study, assignment__participant__excluded=False)
              .values("item__system_a__name", "item__system_b__name", "winner", "criterion"))
    for row in judged.annotate(n=Count("id")).order_by():
        a, b = row["item__system_a__name"], row["item__system_b__name"]
        if a not in position or b not in position:
            continue
        p = int(index[position[a], position[b]])
        first = position[a] < position[b]  # the pair's score is its first system's (study order)
        won = {"model_a": 1.0, "model_b": 0.0, "tie": 0.5}[row["winner"]]
        total[p] += row["n"]
        score[p] += row["n"] * (won if first else 1.0 - won)
        if row["criterion"] == first_criterion:
            count[p] += row["n"]
    per_item = [t / c if c else 1.0 for t, c in zip(total, count, strict=True)]
    score = [s / k for s, k in zip(score, per_item, strict=True)]
    return study_state(systems, count, score, rule=study_rule(study), alpha=float(study.stop_alpha))


def planned_items(study: Study) -> list[Planned]:
    """The study's preference items so far, in design order, as the adaptive draw's history."""
    rows = (PreferenceItem.objects.filter(questionnaire__study=study)
            .order_by("questionnaire__position", "position")
            .values_list("questionnaire__document__external_id", "questionnaire__reader_j__external_id",
                         "system_a__name", "system_b__name"))
    return [Planned(str(doc), str(reader), str(a), str(b)) for doc, reader, a, b in rows]


#: the largest per-pair answer :func:`uniform_equivalent` looks for (bounded work in a page request)
UNIFORM_SCAN_LIMIT = 200_000


def uniform_equivalent(state: StudyState, *, power: float = 0.8) -> int | None:
    """The judged items a uniform design would need for the goal ``separated`` (conventions sec. 27.8): every pair
    as many items as the exact binomial test of sec. 27.1 needs, at level alpha / pairs and ``power``, to separate
    the closest adjacent pair of the current ranking at the win rate (mean score, a tie half a win) measured for
    it, times the number of pairs. None for another rule, while an adjacent pair is unjudged or measured at 1/2 or
    1, or when one pair would need more than :data:`UNIFORM_SCAN_LIMIT` items."""
    adjacent = state.adjacent()
    if state.rule.kind != "separated" or not adjacent or not all(row["judged"] for row in adjacent):
        return None
    index = pair_index(len(state.systems))
    pairs = len(state.count)
    needed = 0
    for row in adjacent:
        i, j = state.systems.index(str(row["better"])), state.systems.index(str(row["worse"]))
        p = int(index[i, j])
        mean = float(state.score[p] / state.count[p])
        rate = mean if i < j else 1.0 - mean
        if not 0.5 < rate < 1.0 or math.isclose(rate, 0.5):
            return None
        try:
            found = sample_size(rate, alpha=state.alpha / pairs, power=power, max_decisive=UNIFORM_SCAN_LIMIT)
        except ValueError:
            return None
        needed = max(needed, found.decisive)
    return needed * pairs


def _format(value: float) -> str:
    return f"{value:.0f}" if math.isfinite(value) else "—"


def study_ranking(study: Study) -> dict[str, object] | None:
    """What the progress page of a preference study shows (conventions sec. 27.8), as plain JSON-ready data, or
    None for another kind of study or one without cases: ``rows`` (best first: ``system``, ``rating`` in Elo
    points, ``rank`` as ``1-3``, ``band``, ``tied``), ``adjacent`` pairs with their anytime-valid interval of
    the better one's win rate, ``judged`` items, the design's ``budget``, the ``stopping`` status (``rule`` in
    words, ``reached``, ``action``, ``completed``), ``uniform_equivalent`` and ``saved`` (None when not
    defined)."""
    if study.kind != Study.Kind.PREFERENCE:
        return None
    systems = study_systems(study)
    if len(systems) < 2:
        return None
    state = study_live_state(study, systems)
    ranking = state.ranking()
    bands = tied_bands(ranking)
    sizes = {band: bands.count(band) for band in bands}
    rows = [{"system": str(row["system"]), "rating": _format(float(row["rating"])),  # type: ignore[arg-type]
             "rank": rank_range(row["rank_best"], row["rank_worst"]), "band": band, "tied": sizes[band] > 1}
            for row, band in zip(ranking, bands, strict=True)]
    adjacent = [{**row, "interval": f"{float(row['low']):.3f} to {float(row['high']):.3f}"}  # type: ignore[arg-type]
                for row in state.adjacent()]
    rule = study_rule(study)
    words = {"none": "none (the whole design is collected)",
             "separated": "every adjacent pair of the ranking separated",
             "width": f"every pair's interval narrower than {study.stop_width:g}"}[rule.kind]
    equivalent = uniform_equivalent(state) if rule.kind == "separated" else None
    judged = state.judged
    return {
        "rows": rows, "adjacent": adjacent, "judged": judged,
        "budget": design_budget(study, len(state.count)), "alpha": float(study.stop_alpha),
        "stopping": {"rule": words, "kind": rule.kind, "reached": state.stopped and rule.kind != "none",
                     "action": str(study.stop_action), "completed": study.completed_at is not None},
        "uniform_equivalent": equivalent,
        "saved": (equivalent - judged) if equivalent is not None and state.stopped else None,
        "adaptive": study.assignment == Study.AssignmentPolicy.ADAPTIVE,
    }


#: the design preview's power table: true win rates of the stronger system of a pair (conventions sec. 27.9)
POWER_WIN_RATES = (0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.9)
#: its level and target power (one pair, as ``python -m metaeval power pairwise``)
POWER_ALPHA, POWER_TARGET = 0.05, 0.8


def power_table(study: Study) -> list[dict[str, object]]:
    """Per win rate of :data:`POWER_WIN_RATES` (and its Elo gap): the decisive judgments one system pair needs
    (the exact binomial test at :data:`POWER_ALPHA`, power :data:`POWER_TARGET`, sec. 27.1), the cases per pair
    that give them with the study's raters per questionnaire (ceil(judgments / raters)), and the exact power the
    study's current ``cases_per_pair`` x raters judgments have at that rate."""
    raters = max(1, int(study.raters_per_questionnaire))
    now = int(study.cases_per_pair) * raters
    rows = []
    for rate in POWER_WIN_RATES:
        found = sample_size(rate, alpha=POWER_ALPHA, power=POWER_TARGET)
        cases = -(-found.decisive // raters)
        rows.append({"win_rate": f"{rate:.2f}", "elo_gap": f"{400.0 * math.log10(rate / (1.0 - rate)):.0f}",
                     "judgments": found.decisive, "cases_per_pair": cases,
                     "power_now": f"{float(exact_power(now, rate, POWER_ALPHA)[0]):.2f}",
                     "current": cases == int(study.cases_per_pair)})
    return rows
