"""Compute every distance a run needs, each unique text pair once, through the on-disk cache.

:func:`plan_corpus` lists, per system and document, the pairs of the distance path (conventions sec. 2-3):
sigma(u_j, d), sigma(s_j, d), sigma(u_j, u_k) and sigma(s_j, s_k) for ordered pairs j != k, and
sigma(s_j, u_j). :func:`compute` evaluates a measure on the unique pairs (cache first, then the missing ones,
split across worker processes), and :func:`corpus_doc_pairs` assembles
:class:`~metaeval.core.perseval.measure.DocPairs`.
"""
from __future__ import annotations

import contextlib
import gc
import itertools
import multiprocessing
import os
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

import numpy as np

from metaeval.core.io.corpus import REFERENCE, Corpus, Document, Missing, require_summaries
from metaeval.core.measures.base import Measure
from metaeval.core.measures.cache import DistanceCache, pair_digests
from metaeval.core.perseval.arrays import SystemLayout, score_layout
from metaeval.core.perseval.measure import DocPairs, Params, SystemScore

TextPair = tuple[str, str]
#: below this many pairs, worker processes cost more than they save
PARALLEL_THRESHOLD = 4000
#: below this many reader entries (summed over the systems), scoring systems in worker processes costs more than
#: it saves: scored over arrays (perseval/arrays.py), the ten systems of a PENS-size run (150,000 entries) take about
#: a second in one process, less than sending their per-reader detail back from workers
SCORING_PARALLEL_THRESHOLD = 2_000_000


@dataclass
class DocumentPlan:
    """The readers of one document for one system and the texts they bring."""

    doc_id: str
    readers: list[str]
    doc_text: str
    user: dict[str, str]
    system: dict[str, str]


@dataclass
class Plan:
    """system -> documents with at least two readers (single-reader documents are absent everywhere, sec. 5)."""

    systems: dict[str, list[DocumentPlan]]

    def text_pairs(self) -> list[TextPair]:
        """Every text pair the distance path needs, unique, in a stable order."""
        return self.indexed()[0]

    def indexed(self) -> tuple[list[TextPair], dict[str, SystemLayout]]:
        """:meth:`text_pairs` and, per system, its :class:`~metaeval.core.perseval.arrays.SystemLayout` (every
        distance of its rows as a position in that list), in one pass."""
        seen: dict[TextPair, int] = {}
        at = seen.setdefault
        layouts: dict[str, SystemLayout] = {}
        for system, documents in self.systems.items():
            doc_start = [0]
            readers: list[str] = []
            user_doc: list[int] = []
            system_doc: list[int] = []
            accuracy: list[int] = []
            row_j: list[int] = []
            row_k: list[int] = []
            row_user: list[int] = []
            row_system: list[int] = []
            for doc in documents:
                first = len(readers)
                text, user, own = doc.doc_text, doc.user, doc.system
                for j in doc.readers:
                    user_doc.append(at((user[j], text), len(seen)))
                    system_doc.append(at((own[j], text), len(seen)))
                    accuracy.append(at((own[j], user[j]), len(seen)))
                for (j, k), (ej, ek) in zip(itertools.permutations(doc.readers, 2),
                                            itertools.permutations(range(first, first + len(doc.readers)), 2),
                                            strict=True):
                    row_j.append(ej)
                    row_k.append(ek)
                    row_user.append(at((user[j], user[k]), len(seen)))
                    row_system.append(at((own[j], own[k]), len(seen)))
                readers.extend(doc.readers)
                doc_start.append(len(readers))

            def array(values: list[int]) -> np.ndarray:
                return np.array(values, dtype=np.int64)

            layouts[system] = SystemLayout(
                [doc.doc_id for doc in documents], readers, array(doc_start), array(user_doc), array(system_doc),
                array(accuracy), array(row_j), array(row_k), array(row_user), array(row_system),
            )
        return list(seen), layouts


def plan_corpus(
    corpus: Corpus,
    systems: Sequence[str] | None = None,
    *,
    missing: Missing = "error",
    transform: Callable[[str], str] | None = None,
) -> Plan:
    """Readers per system and document (sec. 2); ``transform`` is an optional preprocessing of every text. With
    ``missing="error"`` every reader lacking a summary is named at once (:func:`require_summaries`)."""
    chosen = list(systems) if systems is not None else list(corpus.systems)
    if missing == "error":
        require_summaries(corpus, chosen)
    apply = transform or (lambda text: text)
    memo: dict[str, str] = {}

    def prepared(text: str) -> str:
        if text not in memo:
            memo[text] = apply(text)
        return memo[text]

    plan: dict[str, list[DocumentPlan]] = {}
    for system in chosen:
        documents: list[DocumentPlan] = []
        for document in corpus.documents:
            readers = document.readers_for(system, missing)
            if len(readers) < 2:
                continue
            documents.append(_document_plan(document, system, readers, prepared))
        plan[system] = documents
    return Plan(plan)


def _document_plan(
    document: Document, system: str, readers: list[str], prepared: Callable[[str], str]
) -> DocumentPlan:
    return DocumentPlan(
        doc_id=document.doc_id,
        readers=readers,
        doc_text=prepared(document.text),
        user={j: prepared(document.summary(j, REFERENCE) or "") for j in readers},
        system={j: prepared(document.summary(j, system) or "") for j in readers},
    )


@dataclass
class ComputeStats:
    """What a :func:`compute` call did, for run records and benchmarks."""

    measure: str
    pairs: int = 0
    cached: int = 0
    computed: int = 0
    workers: int = 1
    seconds: float = 0.0
    compute_seconds: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)

    @property
    def pairs_per_second(self) -> float:
        return self.computed / self.compute_seconds if self.compute_seconds > 0 else float("nan")


def fused_distances(measures: Sequence[Measure], pairs: Sequence[tuple[str, str]]) -> list[np.ndarray]:
    """Each measure's :meth:`Measure.distances` of ``pairs``, computed together where they share a ``fusion``
    (:func:`metaeval.core.measures.lexical.split_space_distances` for the authors' BLEU and ROUGE-SU4)."""
    fusions = {measure.fusion for measure in measures}
    if len(measures) > 1 and fusions == {"split-space-ngrams"}:
        from metaeval.core.measures.lexical import split_space_distances

        return split_space_distances(measures, pairs)
    return [np.asarray(measure.distances(pairs), dtype=np.float64) for measure in measures]


#: the work of :func:`evaluate_many`: per unit, its measures (several when they share a ``fusion``) and its pairs
#: grouped by their second text, read by the forked workers
_FORK_WORK: list[tuple[tuple[Measure, ...], Sequence[TextPair]]] = []


def _work_slice(task: tuple[int, int, int]) -> list[np.ndarray]:
    unit, lo, hi = task
    measures, pairs = _FORK_WORK[unit]
    return fused_distances(measures, pairs[lo:hi])


@contextlib.contextmanager
def gc_frozen() -> Iterator[None]:
    """Objects alive on entry are left out of the cyclic garbage collector until exit (``gc.freeze``): a PENS-size
    run holds millions of strings, tuples and dicts that never form cycles, and every full collection would walk
    them all (scoring a system took twice as long). Forked workers freeze what they inherit the same way."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def default_workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1))


def evaluate(measure: Measure, pairs: Sequence[TextPair], *, workers: int | None = None) -> np.ndarray:
    """``measure`` on every pair, split across ``workers`` forked processes when the batch is large.

    Pairs are grouped by their second text (usually the long document) before splitting, so each worker
    tokenises a document once. The order of the result matches ``pairs``.
    """
    return next(evaluate_many([(measure, pairs)], workers=workers))


def _in_workers(measure: Measure, pairs: Sequence[TextPair], workers: int) -> bool:
    """Whether :func:`evaluate_many` sends this job to the worker processes."""
    return (getattr(measure, "parallel", True) and workers > 1 and len(pairs) >= PARALLEL_THRESHOLD
            and "fork" in multiprocessing.get_all_start_methods())


def _grouped(pairs: Sequence[TextPair]) -> tuple[np.ndarray, list[TextPair]]:
    """``(order, pairs[order])``: pairs in order of their second text's first appearance, keeping their order within
    a group (a stable sort)."""
    seconds = list(map(itemgetter(1), pairs))
    group = {text: position for position, text in enumerate(dict.fromkeys(seconds))}
    order = np.argsort(np.fromiter(map(group.__getitem__, seconds), dtype=np.int64, count=len(seconds)),
                       kind="stable")
    return order, list(map(pairs.__getitem__, order.tolist()))


def _here(measure: Measure, pairs: Sequence[TextPair]) -> np.ndarray:
    """``measure`` on ``pairs`` in this process (nothing to do for no pairs)."""
    return np.asarray(measure.distances(pairs), dtype=np.float64) if len(pairs) else np.zeros(0, dtype=np.float64)


def evaluate_many(jobs: Sequence[tuple[Measure, Sequence[TextPair]]], *, workers: int | None = None,
                  on_start: Callable[[], object] | None = None) -> Iterator[np.ndarray]:
    """:func:`evaluate` of each ``(measure, pairs)`` job, yielded in order.

    The large jobs of measures that run in worker processes share one pool of ``workers`` forked processes, forked
    once, with every job's slices queued at the start: while the caller uses one result (scores a measure), the
    workers go on with the next measures. A job's numbers do not depend on how it is split. Other jobs (neural
    measures, small batches) are evaluated in this process when their turn comes. ``on_start()`` is called once
    the workers have their work (or at once when there are none), before the first result is awaited: the
    caller's own preparations then overlap the workers' computing.
    """
    workers = default_workers() if workers is None else max(1, workers)
    for measure, pairs in jobs:
        if len(pairs):
            measure.prepare()
    pooled = [index for index, (measure, pairs) in enumerate(jobs) if _in_workers(measure, pairs, workers)]
    if not pooled:
        if on_start is not None:
            on_start()
        for measure, pairs in jobs:
            yield _here(measure, pairs)
        return
    global _FORK_WORK
    # jobs of measures with the same fusion on the same pairs (a run's measures on a cold cache) become one unit
    units: dict[tuple[object, ...], list[int]] = {}
    for index in pooled:
        measure, pairs = jobs[index]
        units.setdefault((measure.fusion, id(pairs)) if measure.fusion else (index,), []).append(index)
    members = list(units.values())
    unit_of = {index: (unit, place) for unit, indices in enumerate(members) for place, index in enumerate(indices)}
    orders: list[np.ndarray] = []
    work: list[tuple[tuple[Measure, ...], Sequence[TextPair]]] = []
    for indices in members:
        order, ordered = _grouped(jobs[indices[0]][1])
        orders.append(order)
        work.append((tuple(jobs[index][0] for index in indices), ordered))
    _FORK_WORK = work
    try:
        with multiprocessing.get_context("fork").Pool(workers, initializer=gc.freeze) as pool:
            _FORK_WORK = []  # the workers have their copy
            pending = []
            for unit, (_, unit_pairs) in enumerate(work):
                bounds = np.linspace(0, len(unit_pairs), workers * 4 + 1).astype(int).tolist()
                pending.append(pool.map_async(
                    _work_slice, [(unit, lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:], strict=True)],
                    chunksize=1))
            del work
            if on_start is not None:
                on_start()
            done: dict[int, list[list[np.ndarray]]] = {}
            for index, (measure, pairs) in enumerate(jobs):
                if index not in unit_of:
                    yield _here(measure, pairs)
                    continue
                unit, place = unit_of[index]
                if unit not in done:
                    done[unit] = pending[unit].get()
                result = np.empty(len(pairs))
                parts = [part[place] for part in done[unit]]
                result[orders[unit]] = np.concatenate(parts) if parts else np.empty(0)
                yield result
    finally:
        _FORK_WORK = []


def compute(
    measure: Measure,
    pairs: Sequence[TextPair],
    *,
    cache: DistanceCache | None = None,
    workers: int | None = None,
    digests: Sequence[bytes] | None = None,
    store_later: bool = False,
) -> tuple[dict[TextPair, float], ComputeStats]:
    """Distances for unique ``pairs``: cached values first, the rest computed and stored. ``digests`` are the
    pairs' :func:`~metaeval.core.measures.cache.pair_digests` when the caller has them (one run, several measures);
    ``store_later`` writes the new values on a thread (:meth:`~metaeval.core.measures.cache.DistanceCache.put_later`)
    while the caller goes on. :func:`compute_values` gives the same numbers as an array."""
    values, stats = compute_values(measure, pairs, cache=cache, workers=workers, digests=digests,
                                   store_later=store_later)
    return dict(zip(pairs, values.tolist(), strict=True)), stats


def compute_values(
    measure: Measure,
    pairs: Sequence[TextPair],
    *,
    cache: DistanceCache | None = None,
    workers: int | None = None,
    digests: Sequence[bytes] | None = None,
    store_later: bool = False,
) -> tuple[np.ndarray, ComputeStats]:
    """:func:`compute` with the distances as a float64 array in the order of ``pairs``."""
    return next(compute_many([measure], pairs, cache=cache, workers=workers, digests=digests,
                             store_later=store_later))


def compute_many(
    measures: Sequence[Measure],
    pairs: Sequence[TextPair],
    *,
    cache: DistanceCache | None = None,
    workers: int | None = None,
    digests: Sequence[bytes] | Callable[[], Sequence[bytes]] | None = None,
    store_later: bool = False,
) -> Generator[tuple[np.ndarray, ComputeStats], None, None]:
    """:func:`compute_values` of each measure on the same ``pairs``, yielded in order: every measure's cached values
    are read first, then the missing ones of all measures are computed by :func:`evaluate_many` (one pool of worker
    processes for them all), so the caller scores one measure while the workers compute the next. A measure's
    ``ComputeStats.seconds`` is the time the caller waited for it (its cache look-up included); the first
    measure's also includes starting the workers. ``digests`` (:func:`~metaeval.core.measures.cache.pair_digests`
    of ``pairs``, or a function that returns them) are only needed with a ``cache``; when no measure has anything
    stored yet, they are taken while the workers compute."""
    started = time.perf_counter()
    known: list[Sequence[bytes]] = []

    def pair_digests_once() -> Sequence[bytes]:
        if not known:
            known.append(pair_digests(pairs) if digests is None else digests() if callable(digests) else digests)
        return known[0]

    def pair_keys(measure: Measure) -> list[bytes]:
        assert cache is not None
        return cache.keys(measure.cache_key, pair_digests_once())

    looked = []
    for measure in measures:
        parallel = getattr(measure, "parallel", True)
        stats = ComputeStats(measure=measure.label, pairs=len(pairs),
                             workers=(workers or default_workers()) if parallel else 1)
        attach = getattr(measure, "attach_cache", None)
        if attach is not None:
            attach(cache)
        values = np.full(len(pairs), np.nan)
        todo = np.ones(len(pairs), dtype=bool)
        keys: list[bytes] = []
        if cache is not None and pairs and cache.has_measure(measure.cache_key):  # else no look-up at all
            keys = pair_keys(measure)
            values, found = cache.get(keys)
            todo = ~found
            stats.cached = int(found.sum())
        missing_index = np.flatnonzero(todo)
        todo_pairs = pairs if len(missing_index) == len(pairs) else [pairs[int(index)] for index in missing_index]
        looked.append((measure, stats, values, keys, missing_index, todo_pairs))
    start = pair_digests_once if cache is not None and pairs else None
    results = evaluate_many([(measure, todo_pairs) for measure, _, _, _, _, todo_pairs in looked], workers=workers,
                            on_start=start)
    for measure, stats, values, keys, missing_index, todo_pairs in looked:
        compute_started = time.perf_counter()
        computed = next(results)
        if len(missing_index):
            stats.compute_seconds = time.perf_counter() - compute_started
            values[missing_index] = computed
            stats.computed = len(todo_pairs)
            stats.extra.update({key: float(value) for key, value in getattr(measure, "stats", {}).items()})
            if cache is not None:
                store = cache.put_later if store_later else cache.put
                keys = keys or pair_keys(measure)
                new_keys = keys if len(missing_index) == len(pairs) else [keys[index] for index in missing_index]
                store(new_keys, computed)
        stats.seconds = time.perf_counter() - started
        yield values, stats
        started = time.perf_counter()


def corpus_doc_pairs(plan: Plan, system: str, distance: dict[TextPair, float]) -> list[DocPairs]:
    """The :class:`DocPairs` of one system from computed distances (ordered pairs in permutation order)."""
    out = []
    for doc in plan.systems[system]:
        pairs = list(itertools.permutations(doc.readers, 2))
        out.append(
            DocPairs(
                doc_id=doc.doc_id,
                user_doc={j: distance[(doc.user[j], doc.doc_text)] for j in doc.readers},
                system_doc={j: distance[(doc.system[j], doc.doc_text)] for j in doc.readers},
                user_pairs={(j, k): distance[(doc.user[j], doc.user[k])] for j, k in pairs},
                system_pairs={(j, k): distance[(doc.system[j], doc.system[k])] for j, k in pairs},
                accuracy={j: distance[(doc.system[j], doc.user[j])] for j in doc.readers},
            )
        )
    return out


def unique(pairs: Iterable[TextPair]) -> list[TextPair]:
    return list(dict.fromkeys(pairs))


_FORK_SCORING: tuple[dict[str, SystemLayout], np.ndarray, Params] | None = None


def _score_one(system: str) -> SystemScore:
    assert _FORK_SCORING is not None
    layouts, values, params = _FORK_SCORING
    return score_layout(layouts[system], values, params)


def score_systems(
    plan: Plan,
    distance: dict[TextPair, float],
    params: Params,
    *,
    workers: int | None = None,
    collect: Callable[[str, list[DocPairs]], None] | None = None,
) -> dict[str, SystemScore]:
    """:func:`~metaeval.core.perseval.measure.score_system` of every system of ``plan`` (in plan order), from a map
    of the distances: :func:`score_values` with them as an array."""
    pairs, layouts = plan.indexed()
    values = np.array([distance[pair] for pair in pairs], dtype=np.float64)
    return score_values(plan, layouts, pairs, values, params, workers=workers, collect=collect)


def score_values(
    plan: Plan,
    layouts: dict[str, SystemLayout],
    pairs: Sequence[TextPair],
    values: np.ndarray,
    params: Params,
    *,
    workers: int | None = None,
    collect: Callable[[str, list[DocPairs]], None] | None = None,
) -> dict[str, SystemScore]:
    """The :class:`SystemScore` of every system of ``plan`` (in plan order) from ``values[i]``, the distance of
    ``pairs[i]`` (``pairs, layouts = plan.indexed()``): :func:`~metaeval.core.perseval.arrays.score_layout`, the
    same numbers, bit for bit, as :func:`~metaeval.core.perseval.measure.score_system` of the system's
    :func:`corpus_doc_pairs`. The systems are split across ``workers`` forked processes on a large corpus (the
    numbers do not depend on ``workers``). ``collect(system, docs)``, when given, receives each system's
    :class:`DocPairs`."""
    global _FORK_SCORING
    workers = default_workers() if workers is None else max(1, workers)
    systems = list(plan.systems)
    if collect is not None:
        distance = dict(zip(pairs, values.tolist(), strict=True))
        for system in systems:
            collect(system, corpus_doc_pairs(plan, system, distance))
    entries = sum(len(layouts[system].readers) for system in systems)
    _FORK_SCORING = (layouts, values, params)
    try:
        if (workers == 1 or len(systems) < 2 or entries < SCORING_PARALLEL_THRESHOLD
                or "fork" not in multiprocessing.get_all_start_methods()):
            return {system: _score_one(system) for system in systems}
        with multiprocessing.get_context("fork").Pool(min(workers, len(systems)), initializer=gc.freeze) as pool:
            return dict(zip(systems, pool.map(_score_one, systems, chunksize=1), strict=True))
    finally:
        _FORK_SCORING = None
