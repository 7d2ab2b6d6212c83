"""Simulated participants for the demo study.

Simulated raters read a pair and answer on the 1-6 scale. They differ in care, as real participants do:

* **careful** (most of them): from the pair's content overlap, with a personal bias and a personal amount of noise,
  about 20 seconds a pair:

      similarity = |W_a ∩ W_b| / |W_a ∪ W_b|         (content words, lower-cased)
      rating     = clip(round(1 + 5 * similarity ** 0.6 + bias + noise), 1, 6),  noise ~ N(0, sd), sd 0.4 to 0.8

* **hurried** (``sim-11``): the same rule with much more noise (sd 1.3), about 8 seconds a pair;
* **straight-liner** (``sim-05``): one value (3, 4 or 5, drawn per set) for every pair of a set, about 3 seconds
  a pair;
* **random clicker** (``sim-17``): any value from 1 to 6 with equal chance, about 4 seconds a pair.

The rater checks of a report (:func:`metaeval.core.stats.raters.rater_report`) single out the two careless raters: the
straight-liner straight-lines every set (``straightlined_share`` 1) and the random clicker does not agree with
the others (``spearman_with_others`` near 0); both work in a fraction of the careful raters' time and leaving
either out raises alpha (``alpha_change`` > 0).

Everything is reproducible: every draw comes from ``seed`` and the participant's id (never from the order in which
participants are served), the order and sides of each set are drawn the same way (``presentation_seed``), and
the participants work on a simulated clock that starts at ``start`` (one clock per participant: consent, then set
after set with a short break). The same seed and start give the same ratings, times included.
"""
from __future__ import annotations

import csv
import io
import math
import random
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from metaeval.core.pairwise.features import word_count
from survey import selectors, services
from survey.demo_strengths import first_wins
from survey.models import RATING_MAX, RATING_MIN, Judgment, Participant, PreferenceItem, Rating, Study

_STOP = frozenset(
    "a an the of to in on for and or but at by with from as is are was were be been its it this that after "
    "over into up out new says say said will has have had than more most".split()
)

#: simulated participant number -> how it rates when it is not careful (the others are careful)
CARELESS = {5: "straight-liner", 11: "hurried", 17: "random"}
#: median seconds a rater of each kind spends on one pair
#: the simulated LLM judge's preference for the longer text: log-odds per unit of normalised length difference
LENGTH_BIAS = 10.0
SECONDS_PER_PAIR = {"careful": 20.0, "hurried": 8.0, "straight-liner": 3.0, "random": 4.0}


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOP}


def simulated_rating(first: str, second: str, *, bias: float, rng: random.Random, noise: float = 0.6) -> int:
    """A careful rater's rating of a pair (the module docstring's rule)."""
    a, b = content_words(first), content_words(second)
    similarity = len(a & b) / len(a | b) if a | b else 1.0
    raw = 1 + 5 * similarity**0.6 + bias + rng.gauss(0.0, noise)
    return max(RATING_MIN, min(RATING_MAX, round(raw)))


@dataclass(frozen=True)
class SimulatedRater:
    number: int  # sim-05 is number 5
    care: str  # "careful", "hurried", "straight-liner" or "random"
    bias: float
    noise: float

    @property
    def external_id(self) -> str:
        return f"sim-{self.number:02d}"

    def rate_set(self, pairs: list[selectors.ShownPair], *, seed: int, set_number: int) -> dict[str, int]:
        """The answers to one set, keyed by the pairs' field keys."""
        if self.care == "straight-liner":
            value = random.Random(f"{seed}|{self.external_id}|set|{set_number}").choice([3, 4, 4, 5])
            return {pair.key: value for pair in pairs}
        values: dict[str, int] = {}
        for pair in pairs:
            rng = _pair_rng(seed, self.external_id, pair.first, pair.second)
            if self.care == "random":
                values[pair.key] = rng.randint(RATING_MIN, RATING_MAX)
            else:
                values[pair.key] = simulated_rating(pair.first, pair.second, bias=self.bias, rng=rng, noise=self.noise)
        return values

    def seconds_for(self, pairs: int, rng: random.Random) -> float:
        """Time on one set: per pair a log-normal time around the kind's median, plus a little reading time."""
        median = SECONDS_PER_PAIR[self.care]
        reading = 12.0 if self.care in ("careful", "hurried") else 2.0
        return reading + sum(rng.lognormvariate(math.log(median), 0.35) for _ in range(pairs))


@dataclass(frozen=True)
class SimulationSummary:
    participants: int
    completed_sets: int


def _pair_rng(seed: int, rater: str, first: str, second: str) -> random.Random:
    """Noise for one rater and one pair, independent of the presentation order and sides."""
    low, high = sorted((first, second))
    return random.Random(f"{seed}|{rater}|{low}|{high}")


def simulated_raters(participants: int, seed: int) -> list[SimulatedRater]:
    """The roster: ``sim-01`` .. ``sim-NN``, careful except the numbers in :data:`CARELESS`."""
    rng = random.Random(f"{seed}|raters")
    raters = []
    for number in range(1, participants + 1):
        bias, noise = rng.gauss(0.0, 0.35), rng.uniform(0.4, 0.8)
        care = CARELESS.get(number, "careful")
        raters.append(SimulatedRater(number, care, bias, 1.3 if care == "hurried" else noise))
    return raters


def simulate_participants(
    *, study: Study, participants: int, sets_each: int, seed: int, start: datetime
) -> SimulationSummary:
    """Register ``participants`` raters who each complete up to ``sets_each`` questionnaires, round-robin.

    They go through the same services as real participants (register, claim, submit), so the demo
    exercises the real capacity rules; each works on its own simulated clock from ``start`` (an aware datetime).
    """
    roster = simulated_raters(participants, seed)
    demographics = random.Random(f"{seed}|demographics")
    people: list[tuple[SimulatedRater, Participant, random.Random]] = []
    clocks: dict[int, datetime] = {}
    for rater in roster:
        clock_rng = random.Random(f"{seed}|{rater.external_id}|clock")
        arrives = start + timedelta(seconds=round(60 * (25 * (rater.number - 1) + clock_rng.uniform(0, 15))))
        p = services.participant_register(
            study=study, external_id=rater.external_id, external_source="simulated", now=arrives
        )
        services.participant_update_demographics(
            participant=p,
            name="",
            gender=demographics.choice(["female", "male", "prefer-not-to-say", ""]),
            occupation=demographics.choice(["grad", "undergrad", "teacher", "corporate", "other"]),
        )
        clocks[rater.number] = arrives + timedelta(seconds=round(clock_rng.uniform(60, 180)))
        people.append((rater, p, clock_rng))
    completed = 0
    for set_number in range(1, sets_each + 1):
        for rater, participant, clock_rng in people:
            claimed = clocks[rater.number]
            presentation = random.Random(f"{seed}|{rater.external_id}|presentation|{set_number}").getrandbits(62)
            try:
                assignment = services.assignment_claim(
                    participant=participant, now=claimed, presentation_seed=presentation
                )
            except services.NoQuestionnaireAvailable:
                continue
            pairs = selectors.assignment_pairs(assignment)
            values = rater.rate_set(pairs, seed=seed, set_number=set_number)
            submitted = claimed + timedelta(seconds=round(rater.seconds_for(len(pairs), clock_rng)))
            services.ratings_submit(
                assignment_public_id=assignment.public_id, participant=participant, values=values, now=submitted
            )
            # a rating's time is set when it is stored; the simulation's is the submission's
            Rating.objects.filter(assignment=assignment).update(created_at=submitted)
            clocks[rater.number] = submitted + timedelta(seconds=round(clock_rng.uniform(20, 240)))
            completed += 1
    return SimulationSummary(participants=participants, completed_sets=completed)


def _case(item: PreferenceItem) -> str:
    """An item by what it compares (document, reader, systems): the same on every database, unlike its id."""
    questionnaire = item.questionnaire
    assert questionnaire.reader_j is not None and item.system_a is not None and item.system_b is not None
    return (f"{questionnaire.document.external_id}|{questionnaire.reader_j.external_id}|{item.system_a.name}|"
            f"{item.system_b.name}")


def simulate_preference(
    *, study: Study, participants: int, sets_each: int, seed: int, start: datetime,
    strengths: dict[str, dict[str, float]],
) -> SimulationSummary:
    """Simulated participants of a preference study (``pref-01`` ..): each claims up to ``sets_each``
    questionnaires through the real services and answers every pair and criterion, preferring the text shown first
    with the Bradley-Terry probability of ``strengths`` (system -> criterion -> strength,
    ``survey.demo_strengths``); about 25 seconds a pair. Every draw comes from ``seed``, the participant, the item
    (its document, reader and systems, never its database id) and the criterion; the clock starts at ``start``."""
    completed = 0
    for number in range(1, participants + 1):
        name = f"pref-{number:02d}"
        clock = start + timedelta(minutes=17 * (number - 1))
        participant = services.participant_register(study=study, external_id=name, external_source="simulated",
                                                    now=clock)
        for set_number in range(1, sets_each + 1):
            presentation = random.Random(f"{seed}|{name}|presentation|{set_number}").getrandbits(62)
            try:
                assignment = services.assignment_claim(participant=participant, now=clock,
                                                       presentation_seed=presentation)
            except services.NoQuestionnaireAvailable:
                break
            items = {item.pk: item for item in PreferenceItem.objects.filter(
                questionnaire=assignment.questionnaire).select_related(
                    "system_a", "system_b", "questionnaire__document", "questionnaire__reader_j")}
            values: dict[str, str] = {}
            for entry in assignment.presentation:
                if "gold" in entry:  # a known-answer pair: a careful participant gets it right
                    for criterion in (c["name"] for c in study.criteria):
                        values[services.choice_field(str(entry["key"]), criterion)] = str(entry["answer"])
                    continue
                item = items[int(entry["pitem"])]
                assert item.system_a is not None and item.system_b is not None
                first, second = (item.system_b, item.system_a) if entry["swap"] else (item.system_a, item.system_b)
                for criterion in (c["name"] for c in study.criteria):
                    rng = random.Random(f"{seed}|{name}|{_case(item)}|{criterion}")
                    p = first_wins(strengths[first.name][criterion], strengths[second.name][criterion])
                    values[services.choice_field(str(entry["key"]), criterion)] = "a" if rng.random() < p else "b"
            clock += timedelta(seconds=25 * len(assignment.presentation) + 30)
            services.judgments_submit(assignment_public_id=assignment.public_id, participant=participant,
                                      values=values, now=clock)
            Judgment.objects.filter(assignment=assignment).update(created_at=clock)
            completed += 1
    return SimulationSummary(participants=participants, completed_sets=completed)


def simulated_judge_file(*, study: Study, strengths: dict[str, dict[str, float]], seed: int, runs: int = 4,
                         name: str = "demo-llm-judge", position_bias: float = 0.4, length_bias: float = LENGTH_BIAS,
                         invalid: float = 0.02) -> bytes:
    """A judgment CSV of a simulated LLM judge over the study's items (what ``python -m metaeval judge`` writes
    and the LLM judges page imports as a file judge): each item ``runs`` times per criterion, the odd runs showing
    ``model_a`` first; the text shown first wins with the Bradley-Terry probability of ``strengths`` plus two
    known biases on the log scale: ``position_bias`` (judges favour Text A) and ``length_bias`` times the
    normalised length difference (w_first - w_second) / (w_first + w_second) of the two texts in words (judges
    favour the longer text; conventions sec. 29's length covariate). A share ``invalid`` of the answers cannot be
    read. Every draw comes from ``seed``, the item, the criterion and the run. The judges-vs-people page shows
    both biases against the simulated participants, who have neither."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["case_id", "criterion", "model_a", "model_b", "winner", "judge", "judge_kind", "run",
                     "shown_first", "doc_id", "reader_id"])
    for _item, case in selectors.study_judge_cases(study=study):
        for criterion in (c["name"] for c in study.criteria):
            for run in range(1, runs + 1):
                shown_first = "model_a" if run % 2 else "model_b"
                first, second = ((case.model_a, case.model_b) if shown_first == "model_a"
                                 else (case.model_b, case.model_a))
                rng = random.Random(f"{seed}|judge|{case.case_id}|{case.model_a}|{case.model_b}|{criterion}|{run}")
                words = {case.model_a: word_count(case.text_a), case.model_b: word_count(case.text_b)}
                longer = (words[first] - words[second]) / max(1, words[first] + words[second])
                p = first_wins(strengths[first][criterion] + position_bias + length_bias * longer,
                               strengths[second][criterion])
                other = "model_b" if shown_first == "model_a" else "model_a"
                winner = "invalid" if rng.random() < invalid else (shown_first if rng.random() < p else other)
                writer.writerow([case.case_id, criterion, case.model_a, case.model_b, winner, name, "llm", run,
                                 shown_first, case.doc_id, case.reader_id])
    return out.getvalue().encode("utf-8")


_SIMULATED = re.compile(r"^sim-(\d+)$")


def export_rows(study: Study) -> Iterator[dict[str, object]]:
    """The study's ratings export (:func:`survey.selectors.ratings_export_rows`) with each simulated participant's
    rater id made from its number (``sim-05`` is ``P5``), which is its id in a fresh database: on the demo study
    these are the rows of ``fixtures/demo/ratings.csv`` whatever ids the database gave. Other raters keep theirs."""
    rename = {}
    for pk, external_id in Participant.objects.filter(study=study).values_list("pk", "external_id"):
        match = _SIMULATED.match(external_id)
        if match:
            rename[selectors.rater_id(pk)] = selectors.rater_id(int(match.group(1)))
    for row in selectors.ratings_export_rows(study=study):
        yield {**row, "rater": rename.get(str(row["rater"]), row["rater"])}
