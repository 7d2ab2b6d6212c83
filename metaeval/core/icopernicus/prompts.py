"""iCOPERNICUS prompts (sec. 3 and App. D, Table 2 of the paper): one prompt per (document, reader, prompt style)
for a generator run outside the platform; the outputs come back with ``import_summaries --variant STYLE``.
No Django. Conventions: docs/conventions.md sec. 24.

Styles and token budgets (Table 2; each part is cut to its budget, so a prompt is at most the sum):

====================  =====================  =====================  =========
style                 reading history        examples               article
====================  =====================  =====================  =========
0-shot                1200                   -                      2500
2-shot-wo-hist        -                      2 x 950                1800
2-shot-w-hist         1200                   2 x 600                1300
c-0-shot              2 x 1000               -                      1700
c-2-shot-wo-hist      -                      2 x 950                1800
c-2-shot-w-hist       2 x 850                2 x 450                1100
====================  =====================  =====================  =========

* **Reader** j of document d: a reader with an own headline (``user`` summary) of d; that headline is what the
  prompt should lead to and never appears in it.
* **Partner** (contrastive styles): another reader k of d, drawn per (d, j) from ``random.Random(f"{seed}|{d}|{j}")``
  among d's other readers (dataset order); none, and the contrastive prompts of (d, j) are skipped, when d has one
  reader.
* **Reading history**: the reader's clicked headlines, the most recent first, whole headlines while they fit the
  budget (a headline that does not fit ends the list).
* **Examples**: two other documents with the reader's own headline (contrastive: with both readers' headlines),
  drawn per (d, j, style) from the candidates in dataset order with ``random.Random(f"{seed}|{d}|{j}|{style}")``;
  each example is the article cut to the example budget and the headline(s). Too few candidates: the prompt is
  skipped and counted.
* **Article**: ``headline``-less body of d cut to the article budget (the original headline is never shown).
* **Tokens**: the given tokenizer's tokens (``tokenize``/``detokenize``), or whitespace-separated words; cutting
  keeps the first N tokens.
* **Adversarial** (contrastive styles only, PROTOCOLS sec. 2 / App. E.1): the partner's reading history is replaced
  by another reader's (a seeded derangement of the readers: ``random.Random(f"{seed}|derangement")``, reader i ->
  the reader after i in a shuffled cycle), and each partner headline of an example by a random reader's own
  headline of a random document that is neither d nor one of the prompt's examples
  (``random.Random(f"{seed}|{d}|{j}|{style}|adversarial")``; the partner's own headline when there is none).
"""
from __future__ import annotations

import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from metaeval.core.icopernicus.prompt_styles import ADVERSARIAL_SUFFIX, STYLES

__all__ = [
    "BUDGETS",
    "CONTRASTIVE",
    "STYLES",
    "Budget",
    "Prompt",
    "PromptInputs",
    "Skipped",
    "Tokenizer",
    "build_prompts",
    "derangement",
    "whitespace_tokenizer",
]

CONTRASTIVE = frozenset(style for style in STYLES if style.startswith("c-"))


@dataclass(frozen=True)
class Budget:
    """Tokens per part (Table 2): per reader's history, per example article, and the query article."""

    history: int
    example: int
    article: int


BUDGETS: dict[str, Budget] = {
    "0-shot": Budget(history=1200, example=0, article=2500),
    "2-shot-wo-hist": Budget(history=0, example=950, article=1800),
    "2-shot-w-hist": Budget(history=1200, example=600, article=1300),
    "c-0-shot": Budget(history=1000, example=0, article=1700),
    "c-2-shot-wo-hist": Budget(history=0, example=950, article=1800),
    "c-2-shot-w-hist": Budget(history=850, example=450, article=1100),
}
EXAMPLES = 2


@dataclass(frozen=True)
class Tokenizer:
    """``tokenize(text) -> tokens`` and ``detokenize(tokens) -> text``; ``name`` is recorded with each prompt."""

    name: str
    tokenize: Callable[[str], list[str]]
    detokenize: Callable[[list[str]], str]

    def cut(self, text: str, budget: int) -> tuple[str, int]:
        """The first ``budget`` tokens of ``text`` and how many tokens that is."""
        tokens = self.tokenize(text)
        kept = tokens[:budget]
        return (text if len(kept) == len(tokens) else self.detokenize(kept)), len(kept)

    def count(self, text: str) -> int:
        return len(self.tokenize(text))


def whitespace_tokenizer() -> Tokenizer:
    return Tokenizer("whitespace", str.split, " ".join)


@dataclass(frozen=True)
class PromptInputs:
    """Documents in dataset order (id -> (headline, body)), each document's readers with their own headline (in
    dataset order) and each reader's reading history (clicked headlines, oldest first)."""

    documents: Mapping[str, tuple[str, str]]
    own: Mapping[str, Mapping[str, str]]  # doc_id -> reader -> own headline
    histories: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Prompt:
    doc_id: str
    reader_id: str
    style: str
    prompt: str
    partner_id: str
    adversarial: bool
    example_doc_ids: tuple[str, ...]
    tokens: Mapping[str, int]

    @property
    def variant(self) -> str:
        """The system variant its generated headline is imported as: the style, ``STYLE-adversarial`` for an
        adversarial prompt (``import_summaries --variant``; conventions sec. 23, item 12)."""
        return self.style + (ADVERSARIAL_SUFFIX if self.adversarial else "")

    @property
    def prompt_id(self) -> str:
        return f"{self.doc_id}|{self.reader_id}|{self.style}" + ("|adversarial" if self.adversarial else "")

    def as_record(self, tokenizer: str) -> dict[str, object]:
        return {"prompt_id": self.prompt_id, "doc_id": self.doc_id, "reader_id": self.reader_id,
                "style": self.style, "variant": self.variant, "partner_id": self.partner_id,
                "adversarial": self.adversarial,
                "example_doc_ids": list(self.example_doc_ids), "tokens": dict(self.tokens), "tokenizer": tokenizer,
                "prompt": self.prompt}


@dataclass
class Skipped:
    """Prompts not written, per reason."""

    counts: dict[str, int] = field(default_factory=dict)

    def add(self, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1


def derangement(items: Sequence[str], seed: str) -> dict[str, str]:
    """A seeded permutation without a fixed point: shuffle, then map each item to the next one in the cycle
    (empty for fewer than two items)."""
    if len(items) < 2:
        return {}
    order = list(items)
    random.Random(seed).shuffle(order)
    return {order[i]: order[(i + 1) % len(order)] for i in range(len(order))}


def _history(headlines: Sequence[str], budget: int, tokenizer: Tokenizer) -> tuple[list[str], int]:
    """The most recent clicked headlines first, whole ones while they fit ``budget`` tokens."""
    kept: list[str] = []
    used = 0
    for headline in reversed(headlines):
        size = tokenizer.count(headline)
        if used + size > budget:
            break
        kept.append(headline)
        used += size
    return kept, used


def _bullets(lines: Sequence[str]) -> str:
    return "\n".join(f"- {line}" for line in lines) if lines else "(no reading history)"


def build_prompts(
    inputs: PromptInputs, styles: Sequence[str], *, seed: int, tokenizer: Tokenizer | None = None,
    adversarial: bool = False, skipped: Skipped | None = None,
) -> Iterator[Prompt]:
    """Every prompt of the module docstring: documents in order, then readers, then ``styles`` in the given
    order. With ``adversarial`` only the contrastive styles are built, in their adversarial variant."""
    tokenizer = tokenizer or whitespace_tokenizer()
    skipped = skipped if skipped is not None else Skipped()
    unknown = [style for style in styles if style not in BUDGETS]
    if unknown:
        raise ValueError(f"unknown prompt style(s) {', '.join(unknown)}; choose from {', '.join(STYLES)}")
    if adversarial:
        styles = [style for style in styles if style in CONTRASTIVE]
        if not styles:
            raise ValueError("--adversarial needs a contrastive style (c-0-shot, c-2-shot-wo-hist, c-2-shot-w-hist)")
    readers = list(dict.fromkeys(reader for doc in inputs.own.values() for reader in doc))
    swap = derangement(readers, f"{seed}|derangement") if adversarial else {}
    all_own = [(doc_id, reader, text) for doc_id, by_reader in inputs.own.items() for reader, text in by_reader.items()]
    for doc_id, (_headline, body) in inputs.documents.items():
        doc_readers = list(inputs.own.get(doc_id, {}))
        for reader in doc_readers:
            others = [other for other in doc_readers if other != reader]
            partner = random.Random(f"{seed}|{doc_id}|{reader}").choice(others) if others else ""
            for style in styles:
                contrastive = style in CONTRASTIVE
                if contrastive and not partner:
                    skipped.add(f"{style}: the document has one reader")
                    continue
                needs_history = BUDGETS[style].history > 0
                if needs_history and reader not in inputs.histories:
                    skipped.add(f"{style}: no reading history for the reader")
                    continue
                prompt = _one(inputs, doc_id, body, reader, partner if contrastive else "", style, seed, tokenizer,
                              swap, all_own)
                if prompt is None:
                    skipped.add(f"{style}: fewer than {EXAMPLES} example documents")
                    continue
                yield prompt


def _one(
    inputs: PromptInputs, doc_id: str, body: str, reader: str, partner: str, style: str, seed: int,
    tokenizer: Tokenizer, swap: Mapping[str, str], all_own: Sequence[tuple[str, str, str]],
) -> Prompt | None:
    budget = BUDGETS[style]
    adversarial = bool(swap) and bool(partner)
    tokens: dict[str, int] = {}
    parts: list[str] = ["Write a headline for the last news article that this reader would write."]
    people = [reader, partner] if partner else [reader]
    labels = ["User 1", "User 2"] if partner else ["The reader"]
    if budget.history:
        for label, person in zip(labels, people, strict=True):
            source = swap.get(person, person) if (adversarial and person == partner) else person
            clicked, used = _history(inputs.histories.get(source, ()), budget.history, tokenizer)
            tokens[f"history_{label.lower().replace(' ', '_')}"] = used
            parts.append(f"{label} clicked these news headlines (most recent first):\n{_bullets(clicked)}")
    examples: tuple[str, ...] = ()
    if budget.example:
        candidates = [d for d in inputs.documents if d != doc_id
                      and all(person in inputs.own.get(d, {}) for person in people)]
        if len(candidates) < EXAMPLES:
            return None
        examples = tuple(random.Random(f"{seed}|{doc_id}|{reader}|{style}").sample(candidates, EXAMPLES))
        fake = random.Random(f"{seed}|{doc_id}|{reader}|{style}|adversarial")
        for number, example in enumerate(examples, 1):
            text, used = tokenizer.cut(inputs.documents[example][1], budget.example)
            tokens[f"example_{number}"] = used
            lines = [f"Example article {number}:\n{text}"]
            for label, person in zip(labels, people, strict=True):
                headline = inputs.own[example][person]
                if adversarial and person == partner:
                    pool = [own for d, _r, own in all_own if d != doc_id and d not in examples] or [headline]
                    headline = fake.choice(pool)
                lines.append(f"Headline by {label.lower() if label == 'The reader' else label}: {headline}")
            parts.append("\n".join(lines))
    article, used = tokenizer.cut(body, budget.article)
    tokens["article"] = used
    target = "User 1" if partner else "the reader"
    parts.append(f"Article:\n{article}\n\nHeadline by {target}:")
    prompt = "\n\n".join(parts)
    tokens["total"] = tokenizer.count(prompt)
    return Prompt(doc_id=doc_id, reader_id=reader, style=style, prompt=prompt, partner_id=partner,
                  adversarial=adversarial, example_doc_ids=examples, tokens=tokens)
