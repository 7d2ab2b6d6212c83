"""Tests of the distance measures. :func:`random_pairs` gives seeded text pairs with the awkward cases."""
from __future__ import annotations

import random

WORDS = (
    "the a of to and in is was it for on that with as by at from this be are"
    " cat cats dog dogs run runs running ran runner generous generously generosity happy happiness"
    " policy policies police policing market markets marketing election elections elected"
    " president presidential government governments said says saying new news report reported reporting"
    " U.S. don't e-mail COVID-19 2024 3.14 1,000 $5 #tag @user (note) 'quoted' \"double\" -- ... ; : !"
    " Ünïcödé naïve café straße İstanbul 東京 ﬁne Ⅻ ½ ok x I A THE Cat CATS RUNNING"
).split()
SEPARATORS = (" ",) * 12 + ("  ", "\t", "\n", " , ", ". ", " \u00a0", "   ")
SPECIAL = ("", " ", "   ", "\n", "\t \n", "cat", "cats", "a", "I", "-", "the the the the the", "x y z w v u")


def random_text(rng: random.Random, max_words: int = 60) -> str:
    k = rng.choice([0, 1, 1, 2, 3, 4, 5, 6, 8, 12, 20, 35, max_words])
    words = [rng.choice(WORDS) for _ in range(k)]
    parts = []
    for i, word in enumerate(words):
        parts.append(word)
        if i + 1 < k:
            parts.append(rng.choice(SEPARATORS))
    text = "".join(parts)
    if rng.random() < 0.1:
        text = " " + text
    if rng.random() < 0.1:
        text = text + rng.choice([" ", "  ", "\n"])
    return text


def mutate(rng: random.Random, text: str) -> str:
    """A variant sharing most n-grams: a few words dropped, swapped, inserted or re-cased."""
    words = text.split(" ")
    for _ in range(rng.randint(1, 3)):
        op = rng.random()
        if op < 0.3 and words:
            del words[rng.randrange(len(words))]
        elif op < 0.6:
            words.insert(rng.randint(0, len(words)), rng.choice(WORDS))
        elif op < 0.8 and len(words) > 1:
            i = rng.randrange(len(words) - 1)
            words[i], words[i + 1] = words[i + 1], words[i]
        elif words:
            i = rng.randrange(len(words))
            words[i] = words[i].upper()
    return " ".join(words)


def random_pairs(seed: int, n: int = 300) -> list[tuple[str, str]]:
    """``n`` seeded pairs: random, near-duplicate, identical, special-case and (summary, long text) pairs."""
    rng = random.Random(seed)
    pairs: list[tuple[str, str]] = [(a, b) for a in SPECIAL for b in SPECIAL[:6]]
    long_doc = random_text(rng, 200) + " " + " ".join(rng.choice(WORDS) for _ in range(150))
    while len(pairs) < n:
        a = random_text(rng)
        kind = rng.random()
        if kind < 0.15:
            b = a
        elif kind < 0.45:
            b = mutate(rng, a)
        elif kind < 0.55:
            b = rng.choice(SPECIAL)
        elif kind < 0.65:
            a, b = a, long_doc + " " + a
        else:
            b = random_text(rng)
        pairs.append((a, b) if rng.random() < 0.5 else (b, a))
    return pairs
