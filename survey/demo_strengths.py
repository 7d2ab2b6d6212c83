"""How the demo's simulated judges prefer one system's text to another's (pure, no Django; used by
``scripts/make_demo.py`` for ``fixtures/demo/judgments.csv`` and by ``survey.demo`` for the demo preference study).

A system's latent Bradley-Terry strength (natural-log scale) per criterion comes from its design in
``fixtures/demo/systems.json``: ``personalization`` follows the personalization degree p, ``quality`` the share of
headlines without a factual error e, ``relevance`` both:

    personalization: 3 p      quality: 3 (1 - 2 e)      relevance: (3 p + 3 (1 - 2 e)) / 2

and a judge prefers the first of two texts with probability 1 / (1 + exp(s_second - s_first)).
"""
from __future__ import annotations

import math

CRITERIA = ("personalization", "quality", "relevance")


def preference_strength(personalization: float, errors: float, criterion: str) -> float:
    """The strength of a system with these design degrees on ``criterion`` (module docstring)."""
    personal, accurate = 3.0 * personalization, 3.0 * (1.0 - 2.0 * errors)
    strengths = {"personalization": personal, "quality": accurate, "relevance": (personal + accurate) / 2}
    if criterion not in strengths:
        raise ValueError(f"unknown criterion {criterion!r}; the demo knows {', '.join(CRITERIA)}")
    return strengths[criterion]


def first_wins(first: float, second: float) -> float:
    """Bradley-Terry probability that the text of strength ``first`` is preferred."""
    return 1.0 / (1.0 + math.exp(second - first))
