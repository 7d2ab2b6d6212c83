"""Simulated participants for the demo study.

A simulated rater reads a pair and answers on the 1-6 scale from the pair's content overlap, with a
personal bias and noise, so the demo ratings carry a real (noisy) signal that later analyses can find:

    similarity = |W_a ∩ W_b| / |W_a ∪ W_b|         (content words, lower-cased)
    rating     = clip(round(1 + 5 * similarity ** 0.6 + bias + noise), 1, 6),  noise ~ N(0, 0.6)

All randomness comes from one ``random.Random(seed)``.
"""
from __future__ import annotations

import random
import re
from dataclasses import dataclass

from survey import selectors, services
from survey.models import RATING_MAX, RATING_MIN, Participant, Study

_STOP = frozenset(
    "a an the of to in on for and or but at by with from as is are was were be been its it this that after "
    "over into up out new says say said will has have had than more most".split()
)


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in _STOP}


def simulated_rating(first: str, second: str, *, bias: float, rng: random.Random) -> int:
    a, b = content_words(first), content_words(second)
    similarity = len(a & b) / len(a | b) if a | b else 1.0
    raw = 1 + 5 * similarity**0.6 + bias + rng.gauss(0.0, 0.6)
    return max(RATING_MIN, min(RATING_MAX, round(raw)))


@dataclass(frozen=True)
class SimulationSummary:
    participants: int
    completed_sets: int


def _pair_rng(seed: int, participant: Participant, first: str, second: str) -> random.Random:
    """Noise for one rater and one pair, independent of the (randomly seeded) presentation order and sides."""
    low, high = sorted((first, second))
    return random.Random(f"{seed}|{participant.external_id}|{low}|{high}")


def simulate_participants(*, study: Study, participants: int, sets_each: int, seed: int) -> SimulationSummary:
    """Register ``participants`` raters who each complete up to ``sets_each`` questionnaires, round-robin.

    They go through the same services as real participants (register, claim, submit), so the demo
    exercises the real capacity rules.
    """
    rng = random.Random(seed)
    raters: list[tuple[Participant, float]] = []
    for i in range(participants):
        p = services.participant_register(study=study, external_id=f"sim-{i + 1:02d}", external_source="simulated")
        services.participant_update_demographics(
            participant=p,
            name="",
            gender=rng.choice(["female", "male", "prefer-not-to-say", ""]),
            occupation=rng.choice(["grad", "undergrad", "teacher", "corporate", "other"]),
        )
        raters.append((p, rng.gauss(0.0, 0.35)))
    completed = 0
    for _round in range(sets_each):
        for participant, bias in raters:
            try:
                assignment = services.assignment_claim(participant=participant)
            except services.NoQuestionnaireAvailable:
                continue
            values = {
                pair.key: simulated_rating(
                    pair.first, pair.second, bias=bias, rng=_pair_rng(seed, participant, pair.first, pair.second)
                )
                for pair in selectors.assignment_pairs(assignment)
            }
            services.ratings_submit(assignment_public_id=assignment.public_id, participant=participant, values=values)
            completed += 1
    return SimulationSummary(participants=participants, completed_sets=completed)
