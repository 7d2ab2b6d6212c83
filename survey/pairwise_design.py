"""Pure designs of the pairwise studies (AuPEL preference cases, Zopf sentence pairs): which two candidates go
together, on which side they are stored, and the reader's example texts; deterministic from a seed, no database.

**Preference** (AuPEL sec. 3-4, PROTOCOLS.md sec. 3): a *case* is a (document, reader); every unordered pair of the
study's systems is judged on ``cases_per_pair`` cases. The cases are dealt to the pairs from one seeded shuffle
of the case list, taken cyclically, so each case serves ``len(pairs) * cases_per_pair / len(cases)`` pairs give or
take one. With ``pairs_per_case`` only the first max(cases_per_pair, ceil(len(pairs) * cases_per_pair /
pairs_per_case)) cases of the shuffle are dealt (all when there are fewer), so that a case gathers about
``pairs_per_case`` pairs: one questionnaire's worth, with the same article and reader.
Sides: a pair's cases alternate between (a, b) and (b, a) in the order dealt, so with an even
``cases_per_pair`` each system is ``model_a`` exactly as often as ``model_b``; with an odd one the pair's last case
puts first the winner of a near-regular tournament on the n systems (for i < j in the study's order, i wins when
j - i < n / 2, and at j - i = n / 2 when i < n / 2), so each system's ``model_a`` and ``model_b`` counts are equal
for an odd number of systems and differ by one for an even number. The displayed left/right order is drawn per
participant later (as for similarity studies) and recorded with each judgment.

**Sentence preference** (Zopf sec. 3, PROTOCOLS.md sec. 4): ``pairs_per_topic`` seeded distinct unordered pairs of
different sentences of a topic (all pairs, shuffled, when there are fewer).

**Reader's examples**: the reader's own texts (``user`` summaries) on other documents, most recent in the reading
history first, then documents outside the history in dataset order; never the case's own document; ``k`` of them.
"""
from __future__ import annotations

import itertools
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

__all__ = ["PreferenceSpec", "preference_design", "reader_examples", "sentence_pairs", "side_counts"]

#: the AuPEL default: cases per system pair when the study does not say
DEFAULT_CASES_PER_PAIR = 20
#: Zopf's sentence pairs per topic
DEFAULT_PAIRS_PER_TOPIC = 200
#: the reader's example texts shown in the context pane
DEFAULT_EXAMPLES = 3


@dataclass(frozen=True)
class PreferenceSpec:
    """One preference item: a case (document, reader) and two systems, ``model_a`` stored first."""

    doc_id: str
    reader_id: str
    model_a: str
    model_b: str

    @property
    def case_id(self) -> str:
        return f"{self.doc_id}/{self.reader_id}"


def _first_of_pair(i: int, j: int, n: int) -> bool:
    """Near-regular tournament on n players: does player i (i < j) take the pair's extra model_a slot?"""
    gap = (j - i) % n
    return gap < n / 2 or (gap * 2 == n and i < n // 2)


def preference_design(
    cases: Sequence[tuple[str, str]],
    systems: Sequence[str],
    *,
    cases_per_pair: int = DEFAULT_CASES_PER_PAIR,
    pairs_per_case: int | None = None,
    seed: int,
) -> list[PreferenceSpec]:
    """The preference items (module docstring): pairs in ``itertools.combinations(systems)`` order, each with its
    ``cases_per_pair`` cases in the order dealt. ``cases`` are (doc_id, reader_id); ValueError for fewer than two
    systems, a repeated system or case, no case, or ``cases_per_pair`` < 1 or above the number of cases (a pair
    never sees one case twice)."""
    if len(set(systems)) != len(systems):
        raise ValueError("a system is named twice")
    if len(systems) < 2:
        raise ValueError("a preference study needs at least two systems")
    if not cases:
        raise ValueError("no case: the study's documents have no reader with every system's text")
    if len(set(cases)) != len(cases):
        raise ValueError("a case (document, reader) is listed twice")
    if not 1 <= cases_per_pair <= len(cases):
        raise ValueError(f"cases per pair must be between 1 and the number of cases ({len(cases)})")
    if pairs_per_case is not None and pairs_per_case < 1:
        raise ValueError("pairs per case must be at least 1")
    rng = random.Random(seed)
    deck = list(cases)
    rng.shuffle(deck)
    n = len(systems)
    if pairs_per_case is not None:
        wanted = -(-(n * (n - 1) // 2) * cases_per_pair // pairs_per_case)  # ceil
        deck = deck[:max(cases_per_pair, wanted)]
    dealt = itertools.cycle(deck)
    items: list[PreferenceSpec] = []
    for (i, first), (j, second) in itertools.combinations(enumerate(systems), 2):
        extra_first = _first_of_pair(i, j, n)
        for k in range(cases_per_pair):
            doc_id, reader_id = next(dealt)
            # alternate sides; an odd count's last case goes to the tournament's side
            if k == cases_per_pair - 1 and cases_per_pair % 2 == 1:
                a_first = extra_first
            else:
                a_first = k % 2 == 0
            model_a, model_b = (first, second) if a_first else (second, first)
            items.append(PreferenceSpec(doc_id, reader_id, model_a, model_b))
    return items


def side_counts(items: Sequence[PreferenceSpec]) -> dict[str, tuple[int, int]]:
    """Per system: (times it is model_a, times it is model_b)."""
    counts: dict[str, list[int]] = {}
    for item in items:
        counts.setdefault(item.model_a, [0, 0])[0] += 1
        counts.setdefault(item.model_b, [0, 0])[1] += 1
    return {system: (a, b) for system, (a, b) in counts.items()}


def sentence_pairs(n_sentences: int, *, pairs_per_topic: int = DEFAULT_PAIRS_PER_TOPIC,
                   seed: int) -> list[tuple[int, int]]:
    """``pairs_per_topic`` distinct unordered pairs (i < j) of sentence indexes 0..n-1, drawn without replacement
    from all pairs with ``random.Random(seed)``; every pair, shuffled, when there are fewer."""
    if pairs_per_topic < 1:
        raise ValueError("pairs per topic must be at least 1")
    if n_sentences < 2:
        raise ValueError("a topic needs at least two sentences")
    every = list(itertools.combinations(range(n_sentences), 2))
    rng = random.Random(seed)
    return rng.sample(every, min(pairs_per_topic, len(every)))


def reader_examples(
    *,
    own_texts: Mapping[str, str],
    history: Sequence[str],
    documents: Sequence[str],
    exclude: str,
    k: int = DEFAULT_EXAMPLES,
) -> list[tuple[str, str]]:
    """(doc_id, text) of up to ``k`` of the reader's own texts (``own_texts``: doc_id -> the reader's ``user``
    summary): documents of ``history`` from the most recent (last) back, then ``documents`` (dataset order) not in
    the history; never ``exclude`` (the case's document) nor a document without an own text."""
    if k < 0:
        raise ValueError("k must be at least 0")
    order = [*reversed(history), *(doc for doc in documents if doc not in set(history))]
    picked: list[tuple[str, str]] = []
    seen: set[str] = set()
    for doc_id in order:
        if len(picked) == k:
            break
        if doc_id == exclude or doc_id in seen or doc_id not in own_texts:
            continue
        seen.add(doc_id)
        picked.append((doc_id, own_texts[doc_id]))
    return picked
