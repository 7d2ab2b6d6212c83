"""iCOPERNICUS prompt-style probes (Patel et al., EMNLP 2024, sec. 3 and Tables 3-4; docs/conventions.md sec. 23).

A system is an (LLM, prompt style) pair; a probe ``A < B`` says that style B should personalise better than style
A. EGISES is a divergence (lower is better), so the model shows the probe's **paradox** when
``EGISES(B) >= EGISES(A)`` (a tie is a paradox) and passes it otherwise. Per model and probe::

    delta_pp = (EGISES(A) - EGISES(B)) * 100        (> 0: B personalises better, a boost; <= 0: a drop)

and per probe, over the models that have both styles: the paradox models and their mean drop ``mean |delta_pp|``,
the pass models and their mean boost ``mean delta_pp`` (the paper's Table 4 counts and sec. 5 averages).

Values are compared exactly as read: a score file's numbers are :class:`~decimal.Decimal` (so ``0.4`` and
``0.400`` tie and ``0.408 - 0.367`` is exactly ``0.041``); a computed EGISES enters as the decimal of its shortest
round-trip text, the number ``score`` prints. Significance (:func:`sign_flip_test`, a bootstrap interval from
:func:`~metaeval.core.stats.resampling.system_score_intervals`) is reported beside the flag and never changes it.

No Django here.
"""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike

from metaeval.core.icopernicus.prompt_styles import (
    ADVERSARIAL_PROBES,
    ADVERSARIAL_STYLES,
    ADVERSARIAL_SUFFIX,
    ALL_STYLES,
    PROBE_MODES,
    STYLES,
)
from metaeval.core.io.fileio import Problems, csv_rows, from_spreadsheet_safe, read_text
from metaeval.core.io.records import number
from metaeval.core.stats.resampling import system_score_intervals

__all__ = [
    "ADVERSARIAL_COLUMNS",
    "ADVERSARIAL_PROBES",
    "ADVERSARIAL_STYLES",
    "ADVERSARIAL_SUFFIX",
    "ADVERSARIAL_SUMMARY_COLUMNS",
    "ALL_STYLES",
    "PROBE_MODES",
    "PROBES",
    "ROW_COLUMNS",
    "SCORE_COLUMNS",
    "SIGNIFICANCE_COLUMNS",
    "STYLES",
    "SUMMARY_COLUMNS",
    "Probe",
    "ProbeRow",
    "Worsening",
    "WorseningSummary",
    "ProbeSummary",
    "SignFlipResult",
    "Significance",
    "StyleScore",
    "paired_differences",
    "probe_rows",
    "probe_significance",
    "probe_table",
    "read_scores",
    "summarise_worsening",
    "sign_flip_test",
    "split_system",
    "summarise",
    "worsening_rows",
]

#: the first columns of a scores file (more may follow and are ignored)
SCORE_COLUMNS: tuple[str, ...] = ("model", "style", "egises")
#: the columns of one model's probe (the fixed part of the ``probes`` output)
ROW_COLUMNS: tuple[str, ...] = ("model", "probe", "a", "b", "egises_a", "egises_b", "delta_pp", "paradox")
#: the significance columns added after :data:`ROW_COLUMNS` when per-document DEGRESS is available
SIGNIFICANCE_COLUMNS: tuple[str, ...] = ("documents", "mean_diff_pp", "p_value", "p_exact", "ci_low_pp",
                                         "ci_high_pp")
#: the per-probe summary's columns
SUMMARY_COLUMNS: tuple[str, ...] = ("probe", "a", "b", "models", "paradox_models", "mean_drop_pp", "pass_models",
                                    "mean_boost_pp")
#: the adversarial worsening rows' columns (:class:`Worsening`)
ADVERSARIAL_COLUMNS: tuple[str, ...] = ("model", "probe", "style", "adversarial", "egises", "egises_adversarial",
                                        "worsening_pp", "worsening_pct", "worsened", "a", "egises_a", "gap_pp",
                                        "gap_adversarial_pp")
#: the per-probe summary of the adversarial rows
ADVERSARIAL_SUMMARY_COLUMNS: tuple[str, ...] = ("probe", "style", "adversarial", "models", "worsened_models",
                                                "mean_worsening_pp", "mean_worsening_pct")
HUNDRED = Decimal(100)
ProbeMode = Literal["reported", "defined"]
#: a permuted |mean| counts as reaching the observed one within this absolute tolerance (summation order)
TIE_TOLERANCE = 1e-12
_CELLS_PER_CHUNK = 2_000_000


@dataclass(frozen=True)
class Probe:
    """Probe ``name``: style ``b`` should personalise better (a lower EGISES) than style ``a``."""

    name: str
    a: str
    b: str


#: the probes per mode: ``reported`` reproduces the paper's Tables 3-4 (the default), ``defined`` follows the
#: orderings stated in its sec. 3.2-3.4 (PX-2 and PX-5 differ; PX-6 exists in ``reported`` only)
PROBES: dict[str, tuple[Probe, ...]] = {
    "reported": (
        Probe("PX-1", "0-shot", "2-shot-wo-hist"),
        Probe("PX-2", "0-shot", "2-shot-w-hist"),
        Probe("PX-3", "0-shot", "c-0-shot"),
        Probe("PX-4", "2-shot-wo-hist", "c-2-shot-wo-hist"),
        Probe("PX-5", "c-0-shot", "c-2-shot-w-hist"),
        Probe("PX-6", "c-0-shot", "c-2-shot-wo-hist"),
    ),
    "defined": (
        Probe("PX-1", "0-shot", "2-shot-wo-hist"),
        Probe("PX-2", "2-shot-wo-hist", "2-shot-w-hist"),
        Probe("PX-3", "0-shot", "c-0-shot"),
        Probe("PX-4", "2-shot-wo-hist", "c-2-shot-wo-hist"),
        Probe("PX-5", "2-shot-w-hist", "c-2-shot-w-hist"),
    ),
}


def split_system(name: str) -> tuple[str, str] | None:
    """``"MODEL:STYLE"`` -> ``(MODEL, STYLE)`` when the text after the last ``:`` is one of :data:`ALL_STYLES`
    (the six styles or an adversarial variant) and MODEL is not empty; None for any other system name."""
    model, sep, style = name.rpartition(":")
    if not sep or not model.strip() or style not in ALL_STYLES:
        return None
    return model, style


@dataclass(frozen=True)
class StyleScore:
    """One (model, style) EGISES as read (``line``: where it was read, 0 when computed)."""

    model: str
    style: str
    egises: Decimal
    line: int = 0


def computed_score(model: str, style: str, egises: float) -> StyleScore | None:
    """A pipeline's EGISES as a :class:`StyleScore`: the decimal of the number ``score`` prints (conventions
    sec. 23, item 4); None when it is undefined (NaN)."""
    text = number(egises)
    return None if text == "nan" else StyleScore(model, style, Decimal(text))


def _decimal(text: str) -> Decimal | None:
    try:
        value = Decimal(text.strip())
    except InvalidOperation:
        return None
    return value if value.is_finite() else None


def read_scores(path: str | Path, *, file: str | None = None) -> list[StyleScore]:
    """A scores CSV whose first columns are ``model,style,egises`` (more columns may follow and are ignored).

    Blank lines are skipped; cells are stripped. Every problem is reported at once as ``file:line: field "...":
    ...`` in an :class:`~metaeval.core.io.fileio.ImportFileError`: a header not starting with the three columns, a
    missing or empty cell, a style not in :data:`STYLES`, an EGISES that is not a finite number, a (model, style)
    given twice.
    """
    path = Path(path)
    file = file or path.name
    problems = Problems()
    scores: list[StyleScore] = []
    first: dict[tuple[str, str], int] = {}
    header_seen = False
    for line, fields in csv_rows(read_text(path, file), file, problems):
        if all(not cell.strip() for cell in fields):
            continue
        cells = [from_spreadsheet_safe(cell.strip()) for cell in fields]
        if not header_seen:
            header_seen = True
            for position, name in enumerate(SCORE_COLUMNS):
                if position >= len(cells) or cells[position] != name:
                    found = f'"{cells[position]}"' if position < len(cells) else "nothing"
                    problems.add(file, line, f'field "{name}": missing (the header must start '
                                 f'{",".join(SCORE_COLUMNS)}; column {position + 1} is {found})')
                    problems.raise_if_any()
            continue
        score = _score_row(cells, file, line, problems, first)
        if score is not None:
            scores.append(score)
    if not header_seen:
        problems.add(file, 1, f'field "model": missing (the file is empty; expected the header '
                     f'{",".join(SCORE_COLUMNS)})')
    problems.raise_if_any()
    return scores


def _score_row(
    cells: Sequence[str], file: str, line: int, problems: Problems, first: dict[tuple[str, str], int]
) -> StyleScore | None:
    before = len(problems)
    for position, name in enumerate(SCORE_COLUMNS):
        if position >= len(cells) or not cells[position]:
            problems.add(file, line, f'field "{name}": missing')
    if len(problems) > before:
        return None
    model, style, text = cells[:3]
    if style not in ALL_STYLES:
        problems.add(file, line, f'field "style": unknown style "{style}" (one of {", ".join(ALL_STYLES)})')
    value = _decimal(text)
    if value is None:
        problems.add(file, line, f'field "egises": "{text}" is not a finite number')
    if len(problems) > before or value is None:
        return None
    earlier = first.setdefault((model, style), line)
    if earlier != line:
        problems.add(file, line, f'field "style": duplicate (model, style) ("{model}", "{style}"), first at line '
                     f"{earlier}")
        return None
    return StyleScore(model, style, value, line)


@dataclass(frozen=True)
class ProbeRow:
    """One model's probe: ``delta_pp = (egises_a - egises_b) * 100``; ``paradox = egises_b >= egises_a``."""

    model: str
    probe: str
    a: str
    b: str
    egises_a: Decimal
    egises_b: Decimal

    @property
    def delta_pp(self) -> Decimal:
        return (self.egises_a - self.egises_b) * HUNDRED

    @property
    def paradox(self) -> bool:
        return self.egises_b >= self.egises_a

    def as_dict(self) -> dict[str, object]:
        """The :data:`ROW_COLUMNS` values (written ``true``/``false`` and as exact decimals by the CLI)."""
        return {"model": self.model, "probe": self.probe, "a": self.a, "b": self.b, "egises_a": self.egises_a,
                "egises_b": self.egises_b, "delta_pp": self.delta_pp, "paradox": self.paradox}


def _grid(scores: Sequence[StyleScore], mode: str) -> dict[str, dict[str, Decimal]]:
    """model -> style -> EGISES, models in first-seen order; a ``ValueError`` for an unknown probe ``mode``."""
    if mode not in PROBES:
        raise ValueError(f"mode must be one of {', '.join(PROBES)}; got {mode!r}")
    grid: dict[str, dict[str, Decimal]] = {}
    for score in scores:
        grid.setdefault(score.model, {})[score.style] = score.egises
    return grid


def probe_rows(scores: Sequence[StyleScore], mode: ProbeMode = "reported") -> list[ProbeRow]:
    """One row per model (first-seen order) and probe of ``mode`` (table order) whose two styles the model has."""
    grid = _grid(scores, mode)
    return [
        ProbeRow(model, probe.name, probe.a, probe.b, styles[probe.a], styles[probe.b])
        for model, styles in grid.items() for probe in PROBES[mode]
        if probe.a in styles and probe.b in styles
    ]


@dataclass(frozen=True)
class ProbeSummary:
    """One probe over the models that have both its styles; a mean over no model is None."""

    probe: str
    a: str
    b: str
    models: int
    paradox_models: int
    mean_drop_pp: Decimal | None
    pass_models: int
    mean_boost_pp: Decimal | None

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in SUMMARY_COLUMNS}


def _mean(values: Sequence[Decimal]) -> Decimal | None:
    return sum(values, Decimal(0)) / len(values) if values else None


def summarise(rows: Sequence[ProbeRow], mode: ProbeMode = "reported") -> list[ProbeSummary]:
    """Per probe of ``mode``: paradox models and their mean drop ``mean |delta_pp|`` (a tie counts, with 0), pass
    models and their mean boost ``mean delta_pp`` (sec. 5 of the paper)."""
    out: list[ProbeSummary] = []
    for probe in PROBES[mode]:
        mine = [row for row in rows if row.probe == probe.name]
        drops = [abs(row.delta_pp) for row in mine if row.paradox]
        boosts = [row.delta_pp for row in mine if not row.paradox]
        out.append(ProbeSummary(probe.name, probe.a, probe.b, len(mine), len(drops), _mean(drops), len(boosts),
                                _mean(boosts)))
    return out


# ---------------------------------------------------------------------------------------- adversarial probes
@dataclass(frozen=True)
class Worsening:
    """One model's adversarial check of a contrastive style B (the paper's Table 6): B's prompts were rebuilt with
    a wrong partner (``B-adversarial``), so B should personalise worse, i.e. score a higher EGISES::

        worsening_pp  = (EGISES(B-adversarial) - EGISES(B)) * 100          (> 0: worsened, as expected)
        worsening_pct = worsening_pp / EGISES(B)                           (relative, %; None when EGISES(B) = 0)
        gap_pp        = (EGISES(B) - EGISES(A)) * 100                      (the probe's paradox gap, = -delta_pp)
        gap_adversarial_pp = (EGISES(B-adversarial) - EGISES(A)) * 100     (None without A)

    ``worsened`` iff EGISES(B-adversarial) > EGISES(B) (a tie has not worsened)."""

    model: str
    probe: str
    style: str
    egises: Decimal
    egises_adversarial: Decimal
    a: str
    egises_a: Decimal | None

    @property
    def adversarial(self) -> str:
        return self.style + ADVERSARIAL_SUFFIX

    @property
    def worsening_pp(self) -> Decimal:
        return (self.egises_adversarial - self.egises) * HUNDRED

    @property
    def worsening_pct(self) -> Decimal | None:
        return self.worsening_pp / self.egises if self.egises else None

    @property
    def worsened(self) -> bool:
        return self.egises_adversarial > self.egises

    @property
    def gap_pp(self) -> Decimal | None:
        return None if self.egises_a is None else (self.egises - self.egises_a) * HUNDRED

    @property
    def gap_adversarial_pp(self) -> Decimal | None:
        return None if self.egises_a is None else (self.egises_adversarial - self.egises_a) * HUNDRED

    def as_dict(self) -> dict[str, object]:
        """The :data:`ADVERSARIAL_COLUMNS` values."""
        return {name: getattr(self, name) for name in ADVERSARIAL_COLUMNS}


def worsening_rows(scores: Sequence[StyleScore], mode: ProbeMode = "reported") -> list[Worsening]:
    """One row per model (first-seen order) and contrastive style B (:data:`ADVERSARIAL_PROBES` order) that the
    model has both plainly and as ``B-adversarial``; A is the style the probe of ``mode`` compares B with."""
    grid = _grid(scores, mode)
    by_name = {probe.name: probe for probe in PROBES[mode]}
    out: list[Worsening] = []
    for model, styles in grid.items():
        for style, name in ADVERSARIAL_PROBES.items():
            adversarial = styles.get(style + ADVERSARIAL_SUFFIX)
            if style not in styles or adversarial is None:
                continue
            a = by_name[name].a
            out.append(Worsening(model, name, style, styles[style], adversarial, a, styles.get(a)))
    return out


@dataclass(frozen=True)
class WorseningSummary:
    """One contrastive style over the models that have it and its adversarial variant (Table 6's averages)."""

    probe: str
    style: str
    adversarial: str
    models: int
    worsened_models: int
    mean_worsening_pp: Decimal | None
    mean_worsening_pct: Decimal | None

    def as_dict(self) -> dict[str, object]:
        return {name: getattr(self, name) for name in ADVERSARIAL_SUMMARY_COLUMNS}


def summarise_worsening(rows: Sequence[Worsening]) -> list[WorseningSummary]:
    """Per contrastive style that has rows: the models, those that worsened, and the mean of ``worsening_pp`` and
    of ``worsening_pct`` (the latter over the models where it is defined) over all of them."""
    out: list[WorseningSummary] = []
    for style, name in ADVERSARIAL_PROBES.items():
        mine = [row for row in rows if row.style == style]
        if not mine:
            continue
        relative = [row.worsening_pct for row in mine if row.worsening_pct is not None]
        out.append(WorseningSummary(name, style, style + ADVERSARIAL_SUFFIX, len(mine),
                                    sum(row.worsened for row in mine), _mean([row.worsening_pp for row in mine]),
                                    _mean(relative)))
    return out


# ----------------------------------------------------------------------------------------------- significance
@dataclass(frozen=True)
class SignFlipResult:
    """Paired two-sided sign-flip test of mean(d) = 0: ``statistic`` = mean(d), ``p_value``, whether all
    ``2**n`` sign patterns were enumerated (``exact``) or ``n_permutations`` were drawn."""

    statistic: float
    p_value: float
    n: int
    exact: bool
    n_permutations: int


def sign_flip_test(differences: ArrayLike, *, n_permutations: int = 10_000, seed: int | None = None,
                   ) -> SignFlipResult:
    """Two-sided paired sign-flip (permutation) test on per-document differences ``d_1..d_n``.

    Under H0 each d_i is as likely to be -d_i. T = |mean(d)|. When ``2**n <= n_permutations`` every sign pattern
    s in {-1, 1}^n is enumerated and ``p = #{s: |mean(s * d)| >= T} / 2**n`` (exact; the identity pattern is one
    of them). Otherwise ``n_permutations`` patterns are drawn from ``numpy.random.default_rng(seed)`` (each sign
    +-1 with probability 1/2) and ``p = (1 + #{|mean(s * d)| >= T}) / (1 + n_permutations)``. ``>=`` allows
    :data:`TIE_TOLERANCE` for summation order. No difference: p is NaN.
    """
    if int(n_permutations) != n_permutations or n_permutations < 1:
        raise ValueError(f"n_permutations must be a positive integer; got {n_permutations!r}")
    d = np.asarray(differences, dtype=np.float64).ravel()
    n = len(d)
    if n == 0:
        return SignFlipResult(math.nan, math.nan, 0, True, 0)
    if not np.all(np.isfinite(d)):
        raise ValueError("differences must be finite")
    observed = abs(float(d.mean()))
    threshold = observed - TIE_TOLERANCE
    if n < 63 and 2**n <= n_permutations:
        count = 0
        total = 2**n
        step = max(1, _CELLS_PER_CHUNK // n)
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, step):
            codes = np.arange(start, min(total, start + step), dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> bits) & 1)
            count += int(np.sum(np.abs(signs @ d) / n >= threshold))
        return SignFlipResult(float(d.mean()), count / total, n, True, total)
    rng = np.random.default_rng(seed)
    count = 0
    step = max(1, _CELLS_PER_CHUNK // n)
    for start in range(0, int(n_permutations), step):
        k = min(step, int(n_permutations) - start)
        signs = 1.0 - 2.0 * rng.integers(0, 2, size=(k, n))
        count += int(np.sum(np.abs(signs @ d) / n >= threshold))
    return SignFlipResult(float(d.mean()), (1 + count) / (1 + int(n_permutations)), n, False, int(n_permutations))


def paired_differences(
    degress_a: Mapping[str, float], degress_b: Mapping[str, float]
) -> tuple[list[str], np.ndarray]:
    """Documents (in ``degress_a``'s order) where both styles have a finite DEGRESS, and per document
    ``d = DEGRESS(b) - DEGRESS(a)`` (= EGISES(a) - EGISES(b) of that document, EGISES = 1 - DEGRESS)."""
    docs = [doc for doc, value in degress_a.items()
            if math.isfinite(value) and doc in degress_b and math.isfinite(degress_b[doc])]
    return docs, np.array([degress_b[doc] - degress_a[doc] for doc in docs], dtype=np.float64)


@dataclass(frozen=True)
class Significance:
    """The :data:`SIGNIFICANCE_COLUMNS` of one model's probe (differences in percentage points)."""

    documents: int
    mean_diff_pp: float
    p_value: float
    p_exact: bool
    ci_low_pp: float
    ci_high_pp: float

    def as_dict(self) -> dict[str, object]:
        return {"documents": self.documents, "mean_diff_pp": self.mean_diff_pp, "p_value": self.p_value,
                "p_exact": self.p_exact, "ci_low_pp": self.ci_low_pp,
                "ci_high_pp": self.ci_high_pp}


def probe_significance(
    degress_a: Mapping[str, float], degress_b: Mapping[str, float], *, n_permutations: int = 10_000,
    n_boot: int = 1000, confidence: float = 0.95, seed: int | None = None,
) -> Significance:
    """Sign-flip p-value and percentile bootstrap interval (documents drawn with replacement,
    :func:`~metaeval.core.stats.resampling.system_score_intervals`) of ``100 * mean(d)`` over the paired documents of
    :func:`paired_differences`; both draw from ``seed``. No paired document: NaN values."""
    _, d = paired_differences(degress_a, degress_b)
    if not len(d):
        return Significance(0, math.nan, math.nan, True, math.nan, math.nan)
    test = sign_flip_test(d, n_permutations=n_permutations, seed=seed)
    _, low, high = system_score_intervals(d[None, :] * 100.0, n_boot=n_boot, confidence=confidence, seed=seed)
    return Significance(len(d), float(d.mean()) * 100.0, test.p_value, test.exact, float(low[0]), float(high[0]))


def probe_table(
    rows: Sequence[ProbeRow], per_document: Mapping[tuple[str, str], Mapping[str, float]] | None = None, *,
    n_permutations: int = 10_000, n_boot: int = 1000, seed: int | None = None,
) -> list[dict[str, object]]:
    """The output rows: :meth:`ProbeRow.as_dict`, followed (with ``per_document[(model, style)] = {doc:
    DEGRESS}``) by :class:`Significance`'s columns; every (model, probe) test draws from the same ``seed``."""
    out: list[dict[str, object]] = []
    for row in rows:
        record = row.as_dict()
        if per_document is not None:
            record.update(probe_significance(
                per_document.get((row.model, row.a), {}), per_document.get((row.model, row.b), {}),
                n_permutations=n_permutations, n_boot=n_boot, seed=seed,
            ).as_dict())
        out.append(record)
    return out
