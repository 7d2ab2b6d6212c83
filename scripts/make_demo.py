#!/usr/bin/env python3
"""Regenerate the demo data set in fixtures/demo/ (fictional, small, seeded; fixtures/demo/README.md).

    .venv/bin/python scripts/make_demo.py                 # rewrite consolidated.jsonl, systems.json, judgments.csv,
                                                          # ratings.csv
    .venv/bin/python scripts/make_demo.py --check         # exit 1 if the committed files differ from what it makes
    .venv/bin/python scripts/make_demo.py --out DIR [--seed N] [--texts-only]

Inputs, both hand-written and never rewritten: ``fixtures/demo/sources.json`` (the articles, each reader's own
headline and candidate headlines of known quality per reader and per article) and ``readers.json``.

1. **Texts** (``consolidated.jsonl``, ``systems.json``): each of the ten systems in :data:`SYSTEMS` has a
   *personalization* degree, the share of (document, reader) slots for which it writes a reader-specific headline
   (the other readers of the document all get its one shared headline), and an *accuracy* profile: which of the
   reader-specific candidates it writes and in what proportions (a close paraphrase of the reader's own headline, a
   partial one, the same angle reworded, a misfact, an off-topic line...), how many of its headlines get a factual
   error (a wrong number or name), and its style. Counts are exact (largest remainder) and every choice comes from
   ``random.Random(f"{seed}|{system}")``: the same seed gives the same files.
2. **Judgments** (``judgments.csv``): simulated pairwise A/B judgments of the systems (:func:`judgments`).
3. **Ratings** (``ratings.csv``): ``manage.py load_demo --fixtures DIR`` on a fresh, temporary SQLite database
   (the simulated raters of ``survey/demo.py``, seeded by load_demo's ``DEMO_SEED`` on a fixed clock), exported as
   the survey exports a study (``survey.demo.export_rows``). ``manage.py load_demo`` on any database therefore
   stores the very ratings of the committed file.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import random
import re
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from survey.demo_strengths import CRITERIA as JUDGMENT_CRITERIA  # noqa: E402 (the project's root on the path first)
from survey.demo_strengths import first_wins, preference_strength  # noqa: E402

FIXTURES = ROOT / "fixtures" / "demo"
SEED = 2026

#: the reader-specific candidates of sources.json, most to least faithful to the reader's own headline
READER_ROLES = ("close", "partial", "loose", "reworded", "nudged", "misfact", "offtopic")
#: the shared (one per article) candidates of sources.json
SHARED_ROLES = ("lead", "central", "neutral", "keywords", "verbose")
#: a reader-specific headline made here: the article sentence closest to the reader's interests
EXTRACT = "extract"
#: a system's style, applied to every headline it writes (STYLES below)
STYLE_NAMES = ("", "title", "telegraphic")

FUNCTION_WORDS = frozenset(
    "a an the of to in on for and or but at by with from as is are was were be been its it this that after "
    "over into up out will has have had than who his her their our".split()
)
SMALL_WORDS = frozenset("a an the of to in on for and or but at by with from as".split())


@dataclass(frozen=True)
class SystemSpec:
    name: str
    kind: str
    description: str
    #: share of the (document, reader) slots that get a reader-specific headline
    personalization: float
    #: the reader-specific candidates and their shares (READER_ROLES or EXTRACT)
    headlines: Mapping[str, float] = field(default_factory=dict)
    #: share of the reader-specific headlines given a wrong number or name
    errors: float = 0.0
    #: the candidate every other reader of a document gets (SHARED_ROLES)
    shared: str = "neutral"
    #: "title" (Title Case) or "telegraphic" (function words dropped), applied to every headline
    style: str = ""
    variant: str = ""

    def __post_init__(self) -> None:
        unknown = set(self.headlines) - {*READER_ROLES, EXTRACT}
        if unknown or self.shared not in SHARED_ROLES or self.style not in STYLE_NAMES:
            raise ValueError(f"{self.name}: unknown candidate, shared headline or style")
        if not (0 <= self.personalization <= 1 and 0 <= self.errors <= 1):
            raise ValueError(f"{self.name}: personalization and errors are shares from 0 to 1")
        if self.personalization and not self.headlines:
            raise ValueError(f"{self.name}: a personalizing system needs reader-specific headlines")

    def design(self) -> dict[str, object]:
        return {
            "personalization": self.personalization,
            "headlines": dict(self.headlines),
            "errors": self.errors,
            "shared": self.shared,
            "style": self.style,
        }


SYSTEMS: tuple[SystemSpec, ...] = (
    SystemSpec(
        "PersonaPointer", "personalized",
        "Pointer-generator decoder conditioned on a user embedding built from clicked-headline encodings, with a "
        "copy mechanism that favours the reader's preferred vocabulary.",
        personalization=1.0, headlines={"close": 0.6, "partial": 0.4},
    ),
    SystemSpec(
        "HistoryFusionT5", "personalized",
        "Encoder-decoder transformer that fuses the article encoding with a pooled representation of the reader's "
        "click history; it keeps the reader's angle but often only part of their wording, and falls back to a "
        "neutral headline when the history is uninformative.",
        personalization=0.8, headlines={"partial": 0.5, "loose": 0.3, "reworded": 0.2}, errors=0.1,
    ),
    SystemSpec(
        "ZeroShotLLMHead", "llm",
        "General-purpose instruction-following language model asked, with no examples, for a headline for a reader "
        "described in one line; it follows the description a little over half of the time and writes in Title "
        "Case.",
        personalization=0.6, headlines={"close": 0.3, "partial": 0.3, "loose": 0.2, "reworded": 0.2}, errors=0.1,
        shared="verbose", style="title", variant="zero-shot, reader profile in the prompt",
    ),
    SystemSpec(
        "InterestGateNet", "personalized",
        "Abstractive generator whose topic gates up-weight sentences matching the reader's interest categories, at "
        "a cost to factual grounding: it finds the reader's angle but often gets a number or a name wrong.",
        personalization=1.0, headlines={"misfact": 0.5, "loose": 0.3, "partial": 0.2}, errors=0.4,
    ),
    SystemSpec(
        "PlainPointerGen", "personalized",
        "Pointer-generator network trained from scratch that copies the reader's preferred words when it "
        "recognises them and otherwise stacks content words from the opening paragraph; telegraphic style.",
        personalization=0.4, headlines={"close": 0.5, "partial": 0.5}, errors=0.2, shared="keywords",
        style="telegraphic",
    ),
    SystemSpec(
        "TextRankHead", "personalized",
        "Graph-based extractive system (personalized PageRank) that picks the article sentence closest to the "
        "reader's interests, trimmed to headline length, or the most central sentence when it knows too little "
        "about the reader.",
        personalization=0.7, headlines={EXTRACT: 1.0}, shared="central",
    ),
    SystemSpec(
        "ClickAttnSum", "personalized",
        "Sequence-to-sequence model with a light click-attention bias over the source tokens: most of the time "
        "personalization changes one or two words of one shared headline.",
        personalization=1.0, headlines={"nudged": 0.85, "close": 0.15},
    ),
    SystemSpec(
        "ProfileBARTx", "personalized",
        "Denoising pretrained generator prompted with a long free-text reader profile, which makes its output "
        "highly reader-dependent but mostly about the reader rather than the article.",
        personalization=1.0, headlines={"offtopic": 0.8, "misfact": 0.2},
    ),
    SystemSpec(
        "LeadLineBaseline", "generic",
        "Extractive baseline that returns the article's first sentence truncated to headline length.",
        personalization=0.0, shared="lead",
    ),
    SystemSpec(
        "GenericBARTx", "generic",
        "Denoising pretrained generator fine-tuned on article-headline pairs with no reader information.",
        personalization=0.0, shared="neutral",
    ),
)


# ------------------------------------------------------------------------------------------------------------------
# Text operations
# ------------------------------------------------------------------------------------------------------------------


def title_case(text: str) -> str:
    """Every word capitalised except short function words (not the first)."""
    out = []
    for i, word in enumerate(text.split()):
        if i and word.lower() in SMALL_WORDS:
            out.append(word)
            continue
        at = next((k for k, c in enumerate(word) if c.isalpha()), None)
        out.append(word if at is None else word[:at] + word[at].upper() + word[at + 1:])
    return " ".join(out)


def telegraphic(text: str) -> str:
    """Function words, quotes and clause punctuation dropped."""
    kept = []
    for word in text.split():
        bare = word.strip(",.:;'\"")
        if bare and bare.lower() not in FUNCTION_WORDS:
            kept.append(bare)
    return " ".join(kept)


STYLES = {"": lambda text: text, "title": title_case, "telegraphic": telegraphic}
assert tuple(STYLES) == STYLE_NAMES

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_CAPITALISED = re.compile(r"\b[A-Z][a-z]{3,}\b")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9])")
_DATELINE = re.compile(r"^[A-Z][A-Z ]+ - ")


def _wrong_number(number: str, rng: random.Random) -> str:
    """The first two digits swapped when they differ (41 -> 14, 1.24 -> 2.14), else the first digit moved."""
    digits = [i for i, c in enumerate(number) if c.isdigit()]
    chars = list(number)
    if len(digits) >= 2 and chars[digits[0]] != chars[digits[1]] and chars[digits[1]] != "0":
        chars[digits[0]], chars[digits[1]] = chars[digits[1]], chars[digits[0]]
    else:
        first = int(chars[digits[0]])
        chars[digits[0]] = str((first + rng.choice([2, 3, 4]) - 1) % 9 + 1)
    return "".join(chars)


def with_error(text: str, article: str, rng: random.Random) -> str:
    """``text`` with one fact wrong: a number changed, else a name swapped for another name in the article; the text
    itself when it has neither."""
    numbers = list(_NUMBER.finditer(text))
    if numbers:
        match = rng.choice(numbers)
        return text[:match.start()] + _wrong_number(match.group(0), rng) + text[match.end():]
    present = set(_CAPITALISED.findall(text))
    ours = [w for w in _CAPITALISED.findall(text)[1:] if not text.startswith(w)]
    names = sorted({w for s in _sentences(article) for w in _CAPITALISED.findall(s)[1:]} - present)
    if ours and names:
        return text.replace(rng.choice(ours), rng.choice(names), 1)
    return text


def content_words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9']+", text.lower()) if w not in FUNCTION_WORDS}


def _sentences(article: str) -> list[str]:
    out = []
    for paragraph in article.split("\n\n"):
        out += [_DATELINE.sub("", s.strip()) for s in _SENTENCE.split(paragraph.strip()) if s.strip()]
    return out


def extract(article: str, own: str, max_words: int = 14) -> str:
    """The article sentence (not a quote) sharing the most content words with the reader's own headline (a stand-in
    for their interests), the earliest on a tie, cut to ``max_words`` words and to a word that can end a line."""
    sentences = [s for s in _sentences(article) if '"' not in s and len(s.split()) >= 6]
    target = content_words(own)
    best = max(enumerate(sentences), key=lambda pair: (len(content_words(pair[1]) & target), -pair[0]))[1]
    words = best.rstrip(".").split()[:max_words]
    while words and (words[-1].lower().strip(",;:") in FUNCTION_WORDS or words[-1].endswith(",")):
        words.pop()
    return " ".join(words).rstrip(",;:")


# ------------------------------------------------------------------------------------------------------------------
# The data set
# ------------------------------------------------------------------------------------------------------------------


def allocate(total: int, shares: Mapping[str, float]) -> list[str]:
    """``total`` labels in the proportions ``shares`` (largest remainder; ties in the given order)."""
    weight = sum(shares.values())
    exact = {label: total * share / weight for label, share in shares.items()}
    counts = {label: int(value) for label, value in exact.items()}
    rest = sorted(shares, key=lambda label: -(exact[label] - counts[label]))
    for label in rest[: total - sum(counts.values())]:
        counts[label] += 1
    return [label for label in shares for _ in range(counts[label])]


def load_sources(path: Path = FIXTURES / "sources.json") -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["documents"]


def system_headlines(
    spec: SystemSpec, documents: Sequence[Mapping], seed: int, taken: Mapping[tuple[str, str], set[str]] | None = None
) -> dict[tuple[str, str], str]:
    """``(doc_id, reader) -> headline`` of one system.

    ``taken`` holds the headlines other systems already wrote for each slot: where this system's reader-specific
    headline would be the very same text, its candidate is swapped with the one of another of its slots where neither
    then repeats another system (the shares stay exact), and a repeat that is left gets the system's factual errors
    first, so that two systems rarely write the same headline (a shared one may be another system's too)."""
    rng = random.Random(f"{seed}|{spec.name}")
    slots = [(doc["doc_id"], reader) for doc in documents for reader in doc["readers"]]
    personal = sorted(rng.sample(range(len(slots)), round(spec.personalization * len(slots))))
    roles = allocate(len(personal), spec.headlines) if personal else []
    rng.shuffle(roles)
    style = STYLES[spec.style]
    by_id = {doc["doc_id"]: doc for doc in documents}
    taken = taken or {}

    def text(index: int, role: str) -> str:
        doc_id, reader = slots[index]
        doc = by_id[doc_id]
        own = doc["readers"][reader]
        return style(extract(doc["doc_text"], own["own"]) if role == EXTRACT else own[role])

    def repeats(position: int, role: str) -> bool:
        return text(personal[position], role) in taken.get(slots[personal[position]], set())

    for i in range(len(personal)):
        if repeats(i, roles[i]):
            for j in range(len(personal)):
                if roles[j] != roles[i] and not repeats(i, roles[j]) and not repeats(j, roles[i]):
                    roles[i], roles[j] = roles[j], roles[i]
                    break
    # the factual errors go first where a repeat is left, then to slots drawn at random
    errors = round(spec.errors * len(personal))
    left = [personal[i] for i in range(len(personal)) if repeats(i, roles[i])][:errors]
    others = [index for index in personal if index not in left]
    wrong = set(left) | set(rng.sample(others, errors - len(left)))
    out = {(doc_id, reader): style(by_id[doc_id]["shared"][spec.shared]) for doc_id, reader in slots}
    for index, role in zip(personal, roles, strict=True):
        headline = text(index, role)
        if index in wrong:
            headline = style(with_error(headline, by_id[slots[index][0]]["doc_text"], rng))
        out[slots[index]] = headline
    return out


def build_documents(sources: Sequence[Mapping], seed: int = SEED) -> list[dict]:
    """The records of consolidated.jsonl: the article, and per reader their own headline and one per system."""
    headlines: dict[str, dict[tuple[str, str], str]] = {}
    taken: dict[tuple[str, str], set[str]] = {}
    for spec in SYSTEMS:
        headlines[spec.name] = system_headlines(spec, sources, seed, taken)
        personal = spec.personalization > 0
        for slot, text in headlines[spec.name].items():
            if personal:
                taken.setdefault(slot, set()).add(text)
    return [
        {
            "doc_id": doc["doc_id"],
            "category": doc["category"],
            "doc_summ": doc["doc_summ"],
            "doc_text": doc["doc_text"],
            "m_summary_dict": {
                reader: {"user": roles["own"], **{name: headlines[name][(doc["doc_id"], reader)] for name in headlines}}
                for reader, roles in doc["readers"].items()
            },
        }
        for doc in sources
    ]


def systems_records() -> list[dict]:
    """systems.json: what load_demo stores (name, kind, variant, description) and the design that made the texts."""
    return [
        {"name": s.name, "kind": s.kind, "variant": s.variant, "description": s.description, "design": s.design()}
        for s in SYSTEMS
    ]


#: pairwise judgments: criteria, cases, system pairs per case, LLM runs per judgment (half each order)
JUDGMENT_CASES = 40
PAIRS_PER_CASE = 4
LLM_RUNS = 2


def judgment_strength(spec: SystemSpec, criterion: str) -> float:
    """A system's latent Bradley-Terry strength per criterion (``survey.demo_strengths``, from its design)."""
    return preference_strength(spec.personalization, spec.errors, criterion)


def judgments(documents: Sequence[Mapping], seed: int = SEED) -> str:
    """judgments.csv: simulated pairwise (A/B) judgments of the demo's systems (docs/conventions.md sec. 17).

    Each of :data:`JUDGMENT_CASES` (document, reader) cases, drawn with ``random.Random(f"{seed}|judgments")``,
    gets :data:`PAIRS_PER_CASE` distinct system pairs; per criterion one human judgment (a tie with probability 0.1)
    and :data:`LLM_RUNS` LLM judgments, the sides swapped in every other run, 3 % of them ``invalid``; each prefers A
    with the Bradley-Terry probability of :func:`judgment_strength`."""
    rng = random.Random(f"{seed}|judgments")
    slots = [(doc["doc_id"], reader) for doc in documents for reader in doc["m_summary_dict"]]
    rows = ["case_id,criterion,model_a,model_b,winner,judge,judge_kind,run,shown_first,doc_id,reader_id"]
    for doc_id, reader in rng.sample(slots, JUDGMENT_CASES):
        for spec_a, spec_b in rng.sample([(a, b) for i, a in enumerate(SYSTEMS) for b in SYSTEMS[i + 1:]],
                                         PAIRS_PER_CASE):
            for criterion in JUDGMENT_CRITERIA:
                p_a = first_wins(judgment_strength(spec_a, criterion), judgment_strength(spec_b, criterion))
                votes = [("human", f"rater-{rng.randrange(1, 7)}", "")]
                votes += [("llm", "demo-llm", str(run)) for run in range(1, LLM_RUNS + 1)]
                for kind, judge, run in votes:
                    draw = rng.random()
                    if kind == "human":
                        winner = "tie" if draw < 0.1 else "model_a" if rng.random() < p_a else "model_b"
                    else:
                        winner = "invalid" if draw < 0.03 else "model_a" if rng.random() < p_a else "model_b"
                    first = "model_a" if kind == "human" or run == "1" else "model_b"
                    rows.append(f"{doc_id}/{reader},{criterion},{spec_a.name},{spec_b.name},{winner},{judge},{kind},"
                                f"{run},{first},{doc_id},{reader}")
    return "\n".join(rows) + "\n"


def texts(seed: int = SEED, sources: Path = FIXTURES / "sources.json") -> dict[str, str]:
    """File name -> content of the text files."""
    documents = build_documents(load_sources(sources), seed)
    return {
        "consolidated.jsonl": "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in documents),
        "systems.json": json.dumps(systems_records(), indent=2, ensure_ascii=False) + "\n",
        "judgments.csv": judgments(documents, seed),
    }


def ratings(fixtures: Path) -> str:
    """ratings.csv: ``manage.py load_demo --fixtures fixtures`` on a fresh temporary SQLite database, exported."""
    import io

    with tempfile.TemporaryDirectory() as folder:
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/demo.sqlite3"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
        os.environ.setdefault("DEBUG", "1")
        sys.path.insert(0, str(ROOT))
        import django

        django.setup()
        from django.core.management import call_command

        from survey.demo import export_rows
        from survey.exporting import write_ratings
        from survey.models import Study

        call_command("migrate", verbosity=0)
        call_command("load_demo", fixtures=fixtures, stdout=io.StringIO())
        out = io.StringIO()
        write_ratings(export_rows(Study.objects.get(slug="demo")), out, "csv")
        from django.db import connections

        connections.close_all()
        return out.getvalue()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed of the texts (default {SEED})")
    parser.add_argument("--out", type=Path, default=FIXTURES, help="folder to write (default fixtures/demo)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file in --out differs")
    parser.add_argument("--texts-only", action="store_true",
                        help="only consolidated.jsonl, systems.json and judgments.csv")
    args = parser.parse_args(argv)

    made = texts(args.seed)
    with tempfile.TemporaryDirectory() as folder:
        staging = Path(folder)
        for name, content in made.items():
            (staging / name).write_text(content, encoding="utf-8")
        (staging / "readers.json").write_text((FIXTURES / "readers.json").read_text(encoding="utf-8"), encoding="utf-8")
        if not args.texts_only:
            made["ratings.csv"] = ratings(staging)
    differ = []
    for name, content in made.items():
        target = args.out / name
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current == content:
            print(f"{target}: unchanged")
            continue
        differ.append(name)
        if args.check:
            diff = difflib.unified_diff(
                current.splitlines(), content.splitlines(), str(target), "made", lineterm="", n=0
            )
            print("\n".join(list(diff)[:12]))
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
            print(f"{target}: written")
    if args.check and differ:
        print(f"differs from what scripts/make_demo.py makes: {', '.join(differ)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
