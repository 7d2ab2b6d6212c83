"""One scoring run: every system x measure (distance path) and every auxiliary measure (HJ path).

This is what the CLI (``python -m metaeval score``) and the Django command both call, so the numbers
a researcher sees in the platform are the numbers the command line prints.
"""
from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import platform
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from metaeval.core.feedback.hj import FeedbackScale, FeedbackTable, feedback_doc_pairs, plan_feedback
from metaeval.core.io.corpus import Corpus, Missing, RatingTable
from metaeval.core.measures.base import Measure, MeasureUnavailable
from metaeval.core.measures.cache import DistanceCache, pair_digests
from metaeval.core.measures.distances import (
    ComputeStats,
    Plan,
    compute,
    compute_many,
    compute_values,
    gc_frozen,
    plan_corpus,
    score_values,
    unique,
)
from metaeval.core.measures.registry import NEURAL, get_measure
from metaeval.core.perseval.human import HumanCounts, human_doc_pairs, plan_human
from metaeval.core.perseval.measure import PARAMETERS, DocPairs, Params, SystemScore, score_system
from metaeval.core.perseval.precision import LOW_PRECISION, recheck_low_precision

COLUMNS = (
    "system", "measure", "egises", "degress", "perseval", "accuracy",
    "p_acc", "egises_accuracy", "documents", "readers", "rows", "rated_pairs", "skipped_pairs",
)
"""Score table columns; the first six are fixed by the CLI contract."""
HJ_PREFIX = "hj:"
#: label prefix of the OpenAI PerSEval-HJ variant (rating differences on a surrogate dataset; conventions sec. 25)
FEEDBACK_HJ_PREFIX = "hj-openai:"
#: every human-judgment label prefix (``correlate`` pairs each automatic measure with each)
HUMAN_PREFIXES = (HJ_PREFIX, FEEDBACK_HJ_PREFIX)
#: the auxiliary measure of the HJ variants when ratings are given and no auxiliary measure is named
DEFAULT_AUX = ("rouge_l",)
PACKAGES = ("numpy", "scipy", "rapidfuzz", "nltk", "rouge-score", "torch", "transformers", "tokenizers")


@dataclass(frozen=True)
class ProgressEvent:
    """What a run reports as it goes, for progress bars and logs: ``kind`` is ``"started"`` or ``"finished"``
    (a step: a measure's distances, ``hj:<measure>``, a report section) or ``"info"``; ``step`` names the step;
    ``message`` is the line a person reads (``str(event)``); ``counts`` the numbers of a finished step
    (``computed``, ``cached``, ``seconds``; ``unavailable`` = 1 for a measure that could not run)."""

    kind: Literal["started", "finished", "info"]
    step: str
    message: str
    counts: Mapping[str, float] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message


Progress = Callable[[ProgressEvent], None]


def _missing(value: object) -> Missing:
    if value not in ("error", "drop"):
        raise ValueError(f"missing must be error or drop, not {value!r}")
    return value  # type: ignore[return-value]  # one of the two words


@dataclass
class ScoreRow:
    system: str
    measure: str
    score: SystemScore
    rated_pairs: int | None = None
    skipped_pairs: int | None = None

    def as_dict(self) -> dict[str, object]:
        s = self.score
        return {
            "system": self.system, "measure": self.measure, "egises": s.egises, "degress": s.degress,
            "perseval": s.perseval, "accuracy": s.accuracy, "p_acc": s.p_acc,
            "egises_accuracy": s.egises_accuracy, "documents": s.documents, "readers": s.readers,
            "rows": s.rows, "rated_pairs": self.rated_pairs, "skipped_pairs": self.skipped_pairs,
        }


@dataclass
class RunOptions:
    measures: Sequence[str] = ("rouge_l",)
    params: Params = field(default_factory=Params)
    compat: bool = False
    missing: Missing = "error"
    aux: Sequence[str] = ()
    systems: Sequence[str] | None = None
    preprocess: str = "none"
    workers: int | None = None
    #: per-measure options for the neural measures, e.g. {"infolm": {"model": "/models/bert-tiny", "device": "cuda"}}
    measure_options: Mapping[str, Mapping[str, object]] = field(default_factory=dict)
    #: list a measure that cannot run here (no model) under ``RunResult.unavailable`` instead of failing the run
    skip_unavailable: bool = False

    def as_dict(self) -> dict[str, object]:
        return {
            "measures": list(self.measures), **self.params.as_dict(), "compat": "authors" if self.compat else None,
            "missing": self.missing, "aux": list(self.aux),
            "systems": list(self.systems) if self.systems is not None else None, "preprocess": self.preprocess,
            "measure_options": {name: dict(opts) for name, opts in self.measure_options.items() if opts},
            "workers": self.workers, "skip_unavailable": self.skip_unavailable,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> RunOptions:
        """The options :meth:`as_dict` describes: ``from_dict(o.as_dict()) == o``. Missing keys take the
        defaults; unknown keys are ignored; a wrong type or a parameter out of its bounds raises ``ValueError``
        (an :class:`~metaeval.core.options.OptionError` for a parameter)."""
        defaults = cls()
        try:
            params = Params(**{option.name: data[option.name] for option in PARAMETERS
                               if data.get(option.name) is not None})
            systems = data.get("systems")
            workers = data.get("workers")
            return cls(
                measures=[str(name) for name in data.get("measures", defaults.measures)],
                params=params,
                compat=data.get("compat") in ("authors", True),
                missing=_missing(data.get("missing") or defaults.missing),
                aux=[str(name) for name in data.get("aux") or ()],
                systems=[str(name) for name in systems] if systems is not None else None,
                preprocess=str(data.get("preprocess") or defaults.preprocess),
                workers=int(workers) if workers is not None else None,
                measure_options={
                    str(name): dict(opts)
                    for name, opts in (data.get("measure_options") or {}).items()
                },
                skip_unavailable=bool(data.get("skip_unavailable", False)),
            )
        except (TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"not a RunOptions dictionary: {exc}") from exc


@dataclass
class RunResult:
    rows: list[ScoreRow]
    options: RunOptions
    stats: list[ComputeStats]
    timings: dict[str, float]
    hj_counts: dict[str, dict[str, HumanCounts]] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    #: measure -> why it could not run (only with ``skip_unavailable``)
    unavailable: dict[str, str] = field(default_factory=dict)
    #: measure -> the model it used, in words (neural measures)
    models: dict[str, str] = field(default_factory=dict)
    #: measure -> the low-precision check (:class:`~metaeval.core.perseval.precision.PrecisionCheck` as a dict) of a
    #: neural measure run in bfloat16/float16
    precision: dict[str, dict[str, object]] = field(default_factory=dict)

    def table(self) -> list[dict[str, object]]:
        return [row.as_dict() for row in self.rows]

    def scores(self, column: str = "perseval") -> dict[str, dict[str, float]]:
        """measure -> system -> value of ``column``."""
        out: dict[str, dict[str, float]] = {}
        for row in self.rows:
            out.setdefault(row.measure, {})[row.system] = float(row.as_dict()[column])  # type: ignore[arg-type]
        return out


def versions() -> dict[str, str]:
    found = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    try:
        found["metaeval"] = importlib.metadata.version("metaeval")
    except importlib.metadata.PackageNotFoundError:
        pass
    return found


def _transform(name: str) -> Callable[[str], str] | None:
    if name == "none":
        return None
    from metaeval.core.measures.text import preprocess

    return lambda text: preprocess(text, name)


def plan_run(corpus: Corpus, options: RunOptions) -> Plan:
    """The distance path's plan of a run (:func:`~metaeval.core.measures.distances.plan_corpus` with the run's systems,
    missing-summary rule and preprocessing); ``plan_run(...).text_pairs()`` is the same list, in the same order,
    in every process that builds it from the same data."""
    return plan_corpus(corpus, options.systems, missing=options.missing, transform=_transform(options.preprocess))


def _float32(options: RunOptions, name: str) -> RunOptions:
    """``options`` with measure ``name`` in float32 and no low-precision check (the re-check's measure); InfoLM's
    step is not compiled there (float32 time goes to the matrix products, and a sample is too small to repay it)."""
    measure_options = {key: dict(value) for key, value in options.measure_options.items()}
    measure_options[name] = {**measure_options.get(name, {}), "dtype": "float32", "recheck": "off",
                             **({"compile": "off"} if name == "infolm" else {})}
    return dataclasses.replace(options, measure_options=measure_options)


def prepare_measure(name: str, options: RunOptions, pairs: Sequence[tuple[str, str]]) -> Measure:
    """Measure ``name`` as ``options`` configure it, loaded (``prepare``) and, for a measure with idf weights, fitted
    on the texts of ``pairs`` (the run's texts). Every process that computes a share of a run's distances
    prepares the measure this way from the same pairs, so all of them compute the same numbers. Raises
    :class:`MeasureUnavailable` when it cannot run here."""
    measure = get_measure(name, compat=options.compat, options=options.measure_options.get(name))
    measure.prepare()
    if getattr(measure, "idf", False) and hasattr(measure, "fit_idf"):
        measure.fit_idf({text for pair in pairs for text in pair})  # idf over the run's texts
    return measure


#: ``distribute(name, measure, pairs, digests)``: have the distances of ``pairs`` computed into the run's cache
#: (e.g. by several workers) before the run reads them; returns figures for the measure's ``ComputeStats.extra``
Distribute = Callable[[str, Measure, Sequence[tuple[str, str]], Sequence[bytes]], Mapping[str, float] | None]


def run_scores(
    corpus: Corpus,
    options: RunOptions,
    *,
    ratings: RatingTable | None = None,
    cache: DistanceCache | None = None,
    progress: Progress | None = None,
    collect: Callable[[str, str, list[DocPairs]], None] | None = None,
    distribute: Distribute | None = None,
    feedback: FeedbackTable | None = None,
    feedback_scale: FeedbackScale = "normalised",
) -> RunResult:
    """Score every system with every measure, then the HJ variants for every auxiliary measure.

    ``distribute``, with a ``cache``, is called for each measure before its distances are read: a sharded run's
    workers fill the cache, and the run then reads every distance from it (the same floats a single process
    computes; the cache returns them bit for bit).

    ``collect(label, system, docs)``, when given, receives the :class:`DocPairs` each system is scored from
    (``label`` is the measure name, or ``hj:<aux>``), so that studies can rescore without recomputing any
    distance (:func:`metaeval.core.perseval.studies.prepare_study`). It changes nothing in the result.

    ``feedback`` (the ratings of a surrogate dataset) adds the OpenAI PerSEval-HJ variant for every auxiliary
    measure, labelled ``hj-openai:<aux>`` (:mod:`metaeval.core.feedback.hj`; ``feedback_scale`` as there).
    """
    say = progress or (lambda message: None)
    started = time.perf_counter()
    timings: dict[str, float] = {}
    transform = _transform(options.preprocess)
    rows: list[ScoreRow] = []
    stats: list[ComputeStats] = []
    unavailable: dict[str, str] = {}
    models: dict[str, str] = {}
    precision: dict[str, dict[str, object]] = {}

    def ready(name: str, pairs: Sequence[tuple[str, str]]) -> Measure | None:
        """The measure, loaded and fitted; None (recorded) if it cannot run and the run may skip it."""
        if name in unavailable:
            return None
        if name in NEURAL:  # loading a model can take a while: say so before it starts
            say(ProgressEvent("info", name, f"{name}: loading the model"))
        try:
            measure = prepare_measure(name, options, pairs)
        except MeasureUnavailable as exc:
            if not options.skip_unavailable:
                raise
            unavailable[name] = str(exc)
            say(ProgressEvent("finished", name, f"{name}: unavailable: {exc}", {"unavailable": 1}))
            return None
        if hasattr(measure, "describe"):
            models[name] = measure.describe()
        return measure

    digests: list[bytes] | None = None

    def pair_keys() -> list[bytes]:
        """The run's pair digests (taken once, when first needed: with nothing cached, while workers compute)."""
        nonlocal digests
        if digests is None:
            digests = pair_digests(text_pairs)
        return digests

    if options.measures:
        with gc_frozen():  # millions of new strings and tuples: no full collections over the corpus meanwhile
            plan = plan_run(corpus, options)
            text_pairs, layouts = plan.indexed()
        timings["plan"] = time.perf_counter() - started
        say(ProgressEvent("info", "plan", f"{len(plan.systems)} systems, {len(text_pairs)} unique text pairs",
                          {"systems": len(plan.systems), "text_pairs": len(text_pairs)}))
    # the measures computed in worker processes (lexical) all at once, while this process scores each in turn
    pooled = [] if distribute is not None else [
        (name, measure) for name in options.measures if name not in NEURAL
        and (measure := ready(name, text_pairs)) is not None and getattr(measure, "parallel", True)]
    streamed = compute_many([measure for _, measure in pooled], text_pairs if pooled else [], cache=cache,
                            workers=options.workers, digests=pair_keys if pooled and cache is not None else None,
                            store_later=True)
    prepared = dict(pooled)
    try:
        for name in options.measures:
            streamed_here = name in prepared
            measure = prepared.pop(name) if streamed_here else ready(name, text_pairs)
            if measure is None:
                continue
            say(ProgressEvent("started", name, f"{measure.label}: distances"))
            shared = None
            if distribute is not None and cache is not None:
                shared = distribute(name, measure, text_pairs, pair_keys())
            with gc_frozen():
                if streamed_here:
                    distance, stat = next(streamed)
                else:
                    distance, stat = compute_values(measure, text_pairs, cache=cache, workers=options.workers,
                                                    digests=pair_keys() if cache is not None else None,
                                                    store_later=True)
            stat.extra.update(shared or {})
            stats.append(stat)
            scoring = time.perf_counter()
            with gc_frozen():
                scored = score_values(plan, layouts, text_pairs, distance, options.params, workers=options.workers,
                                      collect=None if collect is None else functools.partial(collect, name))
            if name in NEURAL and getattr(measure, "dtype", "float32") in LOW_PRECISION \
                    and getattr(measure, "recheck", "off") != "off":
                scored, check = recheck_low_precision(
                    name, measure, plan, dict(zip(text_pairs, distance.tolist(), strict=True)), scored, options.params,
                    functools.partial(prepare_measure, name, _float32(options, name), text_pairs), cache=cache,
                    collect=None if collect is None else functools.partial(collect, name),
                )
                if check is not None:
                    precision[name] = check.as_dict()
                    say(ProgressEvent("info", name, check.message()))
            rows.extend(ScoreRow(system, name, score) for system, score in scored.items())
            timings[f"score:{name}"] = time.perf_counter() - scoring
            timings[f"distances:{name}"] = stat.seconds
            spread = f" ({shared['shards']:.0f} shards on {shared['shard_workers']:.0f} workers)" if shared else ""
            say(ProgressEvent(
                "finished", name,
                f"{measure.label}: {stat.computed} computed, {stat.cached} cached{spread}, {stat.seconds:.2f} s",
                {"computed": stat.computed, "cached": stat.cached, "seconds": stat.seconds},
            ))
    finally:
        streamed.close()  # the worker processes stop here even when scoring failed
    if cache is not None:
        cache.flush()  # every distance of the distance path stored before the HJ path looks any up
    hj_counts: dict[str, dict[str, HumanCounts]] = {}

    def score_human(prefix: str, systems: Sequence[str], text_pairs: list[tuple[str, str]],
                    doc_pairs: Callable[[str, dict[tuple[str, str], float]], tuple[list[DocPairs], HumanCounts]],
                    ) -> None:
        """One human variant (``prefix`` + each aux measure): X's distances on ``text_pairs``, then each system's
        DocPairs from ``doc_pairs(system, aux)`` scored as the distance path scores them."""
        what = prefix.rstrip(":")
        for name in options.aux:
            measure = ready(name, text_pairs)
            if measure is None:
                continue
            label = prefix + name
            say(ProgressEvent("started", label, f"{what} with {measure.label}"))
            aux, stat = compute(measure, text_pairs, cache=cache, workers=options.workers)
            stats.append(stat)
            hj_counts[label] = {}
            for system in systems:
                docs, counts = doc_pairs(system, aux)
                hj_counts[label][system] = counts
                if collect is not None:
                    collect(label, system, docs)
                rows.append(
                    ScoreRow(
                        system, label, score_system(docs, options.params), counts.rated_pairs,
                        counts.skipped_no_user_pair + counts.skipped_no_document_distance,
                    )
                )
            say(ProgressEvent(
                "finished", label, f"{what} with {measure.label}: {stat.computed} computed, {stat.cached} cached",
                {"computed": stat.computed, "cached": stat.cached, "seconds": stat.seconds},
            ))

    if ratings is not None and options.aux:
        human = plan_human(corpus, ratings, compat=options.compat, systems=options.systems, transform=transform)
        score_human(HJ_PREFIX, human.systems, unique(human.text_pairs()),
                    lambda system, aux: human_doc_pairs(human, system, aux))
    if feedback is not None and options.aux:
        openai = plan_feedback(corpus, feedback, systems=options.systems, transform=transform)
        scale_max = feedback.scale_max
        score_human(FEEDBACK_HJ_PREFIX, openai.systems, unique(openai.text_pairs()),
                    lambda system, aux: feedback_doc_pairs(openai, system, aux, scale_max=scale_max,
                                                           scale=feedback_scale))
    timings["total"] = time.perf_counter() - started
    return RunResult(rows, options, stats, timings, hj_counts, versions(), unavailable, models, precision)
