"""One run's :class:`~metaeval.core.perseval.measure.DocPairs`, kept so the studies can rescore without computing a
distance
(:class:`StudyData`, :func:`prepare_study`, :func:`score`; no Django)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from metaeval.core.feedback.hj import FeedbackScale, FeedbackTable
from metaeval.core.io.corpus import Corpus, RatingTable
from metaeval.core.measures.cache import DistanceCache
from metaeval.core.perseval.measure import DocPairs, Params, Row, SystemScore, score_rows, system_rows
from metaeval.core.perseval.pipeline import (
    FEEDBACK_HJ_PREFIX,
    HJ_PREFIX,
    Distribute,
    Progress,
    RunOptions,
    RunResult,
    run_scores,
)

Scores = Mapping[str, Mapping[str, SystemScore]]
"""measure label -> system -> :class:`SystemScore`, as :func:`score` returns it."""


@dataclass
class StudyData:
    """Everything needed to rescore a run without computing any distance.

    ``docs[label][system]`` is the list of :class:`DocPairs` that :func:`~metaeval.core.perseval.measure.score_system`
    scores, accuracy distances included. ``label`` is an automatic measure name (``measures``, in run order)
    or ``"hj:<aux>"`` / ``"hj-openai:<aux>"`` for a human-judgment variant (``hj``). ``doc_ids`` lists the
    corpus documents in file
    order. ``result`` is the run that produced the data; its scores use ``options.params``. ``corpus`` is the
    scored corpus (the report reads which rated pairs compare identical texts from it); ``ratings`` the ratings
    behind the ``hj`` labels (the report's e-DINS-HJ reads them).
    """

    options: RunOptions
    doc_ids: list[str]
    measures: list[str]
    hj: list[str]
    docs: dict[str, dict[str, list[DocPairs]]]
    result: RunResult | None = None
    corpus: Corpus | None = field(default=None, repr=False, compare=False)
    ratings: RatingTable | None = field(default=None, repr=False, compare=False)
    _rows: dict[tuple[str, str, bool, int], tuple[list[Row], dict[tuple[str, str], float]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @property
    def labels(self) -> list[str]:
        """The automatic measures, then the human labels (``hj:``, then ``hj-openai:``)."""
        return [*self.measures, *self.hj]

    def systems(self, label: str) -> list[str]:
        return list(self.docs[label])

    def rows(
        self, label: str, system: str, *, simplified: bool = False, decimals: int = 0
    ) -> tuple[list[Row], dict[tuple[str, str], float]]:
        """The canonical rows of a system and its accuracy distances per (doc, reader), memoised.

        The rows are those of documents in order, each document's pairs in order. This is the order that
        row sampling draws from (conventions sec. 8). Rows do not depend on alpha, beta, gamma or delta, so
        rescoring at another beta reuses them.
        """
        key = (label, system, simplified, decimals)
        if key not in self._rows:
            self._rows[key] = system_rows(self.docs[label][system], simplified=simplified, decimals=decimals)
        return self._rows[key]


def prepare_study(
    corpus: Corpus,
    options: RunOptions,
    *,
    ratings: RatingTable | None = None,
    cache: DistanceCache | None = None,
    progress: Progress | None = None,
    distribute: Distribute | None = None,
    feedback: FeedbackTable | None = None,
    feedback_scale: FeedbackScale = "normalised",
) -> StudyData:
    """Compute the run's distances once and keep the :class:`DocPairs` behind every score.

    This is :func:`~metaeval.core.perseval.pipeline.run_scores` itself, with its ``collect`` hook: the same planning
    (``plan_corpus``, ``plan_human``), distances (``compute``) and assembly (``corpus_doc_pairs``,
    ``human_doc_pairs``). ``score(data, options.params)`` therefore equals the run's scores exactly.
    Measures the run could not load (``options.skip_unavailable``) are left out.
    """
    docs: dict[str, dict[str, list[DocPairs]]] = {}

    def collect(label: str, system: str, pairs: list[DocPairs]) -> None:
        docs.setdefault(label, {})[system] = pairs

    result = run_scores(corpus, options, ratings=ratings, cache=cache, progress=progress, collect=collect,
                        distribute=distribute, feedback=feedback, feedback_scale=feedback_scale)
    measures = [name for name in dict.fromkeys(options.measures) if name not in result.unavailable]
    hj: list[str] = []
    if ratings is not None:
        hj = [HJ_PREFIX + name for name in dict.fromkeys(options.aux) if name not in result.unavailable]
    if feedback is not None:  # the OpenAI PerSEval-HJ variant (conventions sec. 25)
        hj += [FEEDBACK_HJ_PREFIX + name for name in dict.fromkeys(options.aux) if name not in result.unavailable]
    for label in (*measures, *hj):
        docs.setdefault(label, {})
    return StudyData(
        options=options,
        doc_ids=[document.doc_id for document in corpus.documents],
        measures=measures,
        hj=hj,
        docs=docs,
        result=result,
        corpus=corpus,
        ratings=ratings,
    )


def score(
    data: StudyData, params: Params | None = None, *, labels: Sequence[str] | None = None
) -> dict[str, dict[str, SystemScore]]:
    """Every system under every label (default ``data.labels``), rescored with ``params``.

    ``params`` defaults to ``data.options.params``. The numbers are the same as ``score_system`` on the same
    DocPairs (sec. 4-7, eq. 1-7), bit for bit.
    """
    params = data.options.params if params is None else params
    chosen = data.labels if labels is None else list(labels)
    out: dict[str, dict[str, SystemScore]] = {}
    for label in chosen:
        out[label] = {}
        for system in data.docs[label]:
            rows, accuracy = data.rows(label, system, simplified=params.simplified, decimals=params.egises_decimals)
            out[label][system] = score_rows(rows, accuracy, params)
    return out
