"""DEGRESS, EGISES, EDP (ADP, ACP), PerSEval and P-Acc (perseval-tmlr eq. 1-7 and eq. 3).

The scoring follows docs/conventions.md sec. 4-6 exactly ("as the reference computes it"), for one system
at a time, from per-document distance maps (:class:`DocPairs`); the same code scores the distance path and the
human-judgment path (sec. 7), which differ only in which pairs exist.

Pipeline for one system:
  1. :func:`document_rows` turns each document's distances into rows ``(j, k, X_jk, Y_jk, p_jk)`` (eq. 1).
  2. :func:`egises_from_rows` and :func:`perseval_from_rows` aggregate a set of rows (all of them, or a
     sample, sec. 8) into system values (eq. 2, eq. 4-7).
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from metaeval.core.options import Option

NAN = float("nan")
PAIR_EPSILON = 1e-5
"""epsilon in the min/max proportion of eq. 1 (conventions sec. 4.4)."""
PENALTY_EPSILON = 1e-7
"""epsilon in ADP, ACP and EDP (eq. 4-6; conventions sec. 6), also added to EDP."""

Pair = tuple[str, str]


#: S_{a,b}(x) = 1 / (1 + 10^a exp(-10^b x)) takes 10**a and 10**b: beyond +-10 it is a step function (or overflows)
EXPONENT_BOUNDS = (-10.0, 10.0)
#: the hyper-parameters of :class:`Params`, in its field order (conventions sec. 6)
PARAMETERS: tuple[Option, ...] = (
    Option("alpha", 3.0, "EDP alpha (exponent of S_{alpha,beta})", low=EXPONENT_BOUNDS[0], high=EXPONENT_BOUNDS[1]),
    Option("beta", 1.0, "EDP beta (exponent of S_{alpha,beta}; the paper's optimum is 1.7)",
           low=EXPONENT_BOUNDS[0], high=EXPONENT_BOUNDS[1]),
    Option("gamma", 4.0, "ADP/ACP gamma", low=EXPONENT_BOUNDS[0], high=EXPONENT_BOUNDS[1]),
    Option("delta", 1.0, "ADP/ACP delta", low=EXPONENT_BOUNDS[0], high=EXPONENT_BOUNDS[1]),
    Option("pacc_alpha", 0.5, "P-Acc alpha (weight of the personalization penalty, eq. 3)"),
    Option("pacc_beta", 1.0, "P-Acc beta (slope of its sigmoid, eq. 3)"),
    Option("simplified", False, "proportions of raw distances (the reference's simplified_flag)", kind=bool),
    Option("egises_decimals", 0, "round X and Y to this many decimals before each proportion and the system EGISES "
           "to it (0: no rounding; the iCOPERNICUS authors' code: 4)", kind=int, low=0, high=15),
)
_DEFAULT = {option.name: option.default for option in PARAMETERS}
#: ``egises_decimals`` of the iCOPERNICUS authors' code (``--compat icopernicus``; conventions sec. 23)
ICOPERNICUS_DECIMALS = 4


@dataclass(frozen=True)
class Params:
    """Hyper-parameters. ``alpha``/``beta`` shape EDP, ``gamma``/``delta`` shape ADP and ACP (sec. 6).

    ``pacc_alpha``/``pacc_beta`` are P-Acc's alpha and beta (eq. 3). ``simplified`` is the reference's
    ``simplified_flag``: proportions of raw distances instead of X and Y. ``egises_decimals`` n > 0 rounds X and Y
    (``round(v, n)``) before the proportion and the system EGISES to n decimals (iCOPERNICUS compat: 4;
    conventions sec. 23).
    """

    alpha: float = _DEFAULT["alpha"]
    beta: float = _DEFAULT["beta"]
    gamma: float = _DEFAULT["gamma"]
    delta: float = _DEFAULT["delta"]
    pacc_alpha: float = _DEFAULT["pacc_alpha"]
    pacc_beta: float = _DEFAULT["pacc_beta"]
    simplified: bool = _DEFAULT["simplified"]
    egises_decimals: int = _DEFAULT["egises_decimals"]

    def __post_init__(self) -> None:
        """Every field checked (and numbers made floats) by its :data:`PARAMETERS` entry: the one validation
        of the command line, the run form and the API (:class:`~metaeval.core.options.OptionError` names it)."""
        for option in PARAMETERS:
            object.__setattr__(self, option.name, option.check(getattr(self, option.name)))

    def as_dict(self) -> dict[str, float | bool]:
        return {option.name: getattr(self, option.name) for option in PARAMETERS}


@dataclass
class DocPairs:
    """One document's distances for one system.

    ``user_doc[j]`` = sigma(u_j, d); ``system_doc[j]`` = sigma(s_j, d); ``user_pairs[(j, k)]`` =
    sigma(u_j, u_k) and ``system_pairs[(j, k)]`` = sigma(s_j, s_k), in row order; ``accuracy[j]`` =
    sigma(s_j, u_j). A missing key means the distance does not exist (an unrated pair in HJ).
    """

    doc_id: str
    user_doc: Mapping[str, float]
    system_doc: Mapping[str, float]
    user_pairs: Mapping[Pair, float]
    system_pairs: Mapping[Pair, float]
    accuracy: Mapping[str, float]


class Row(NamedTuple):
    """One ordered pair (j, k) of a document that has both a system and a reader distance (a named tuple: a
    PENS-scale system has half a million of them)."""

    doc_id: str
    j: str
    k: str
    x: float
    y: float
    p: float


@dataclass(frozen=True)
class ReaderDetail:
    doc_id: str
    reader: str
    degress: float
    accuracy: float
    acp: float
    edp: float
    perseval: float


@dataclass(frozen=True)
class DocumentDetail:
    doc_id: str
    readers: int
    rows: int
    degress: float
    adp: float
    d_min: float
    d_mean: float
    perseval: float


@dataclass
class SystemScore:
    """System-level values plus the per-document and per-reader detail behind them."""

    egises: float
    degress: float
    perseval: float
    accuracy: float
    egises_accuracy: float
    p_acc: float
    documents: int
    readers: int
    rows: int
    per_document: list[DocumentDetail] = field(default_factory=list)
    per_reader: list[ReaderDetail] = field(default_factory=list)


def nanmean(values: Iterable[float]) -> float:
    """Mean skipping NaN (pandas' ``mean``); NaN when nothing is left."""
    total = 0.0
    count = 0
    for value in values:
        if value == value:
            total += value
            count += 1
    return total / count if count else NAN


def _exp(value: float) -> float:
    """``numpy.exp`` semantics: overflow gives +inf instead of raising."""
    try:
        return math.exp(value)
    except OverflowError:
        return math.inf


def _divide(numerator: float, denominator: float) -> float:
    """IEEE division as numpy does it: x/0 is +-inf, 0/0 and nan/0 are NaN."""
    if denominator == 0.0:
        if numerator != numerator or numerator == 0.0:
            return NAN
        return math.copysign(math.inf, numerator) * math.copysign(1.0, denominator)
    return numerator / denominator


def weighted_softmax(pairs: Mapping[Pair, float], doc: Mapping[str, float]) -> dict[Pair, float]:
    """X (or Y) of eq. 1 for every pair whose origin j has a document distance.

    w_jk = sigma_jk / sigma(j, d), 0 when sigma(j, d) = 0 (sec. 4.2); then
    X_jk = exp(w_jk) / sum_{l != j} exp(w_jl) * sigma_jk, the sum running over the origin's pairs in order.
    """
    exps: dict[Pair, float] = {}
    totals: dict[str, float] = {}
    exp = math.exp
    for pair, sigma in pairs.items():
        origin = pair[0]
        base = doc.get(origin)
        if base is None:
            continue
        weight = 0.0 if base == 0.0 else sigma / base
        try:
            value = exp(weight)
        except OverflowError:
            value = math.inf
        exps[pair] = value
        totals[origin] = totals.get(origin, 0.0) + value
    out: dict[Pair, float] = {}
    for pair, value in exps.items():
        total = totals[pair[0]]
        out[pair] = (value / total if total != 0.0 else _divide(value, total)) * pairs[pair]
    return out


def proportion(y: float, x: float) -> float:
    """p = (min(Y, X) + eps) / (max(Y, X) + eps) with Python's min/max, Y first (sec. 4.4); 0 if the
    denominator is 0."""
    # max(y, x) and min(y, x) spelled out (faster, the same results, NaN included): each is y unless x is
    # strictly greater (smaller)
    denominator = (x if x > y else y) + PAIR_EPSILON
    if denominator == 0.0:
        return 0.0
    return ((x if x < y else y) + PAIR_EPSILON) / denominator


def document_rows(doc: DocPairs, *, simplified: bool = False, decimals: int = 0) -> list[Row]:
    """The rows of one document: system pairs that also have a reader pair and whose j has document distances;
    ``decimals`` > 0 rounds X and Y with ``round`` first (iCOPERNICUS compat)."""
    if simplified:
        xs = {pair: value for pair, value in doc.user_pairs.items() if pair[0] in doc.user_doc}
        ys = {pair: value for pair, value in doc.system_pairs.items() if pair[0] in doc.system_doc}
    else:
        xs = weighted_softmax(doc.user_pairs, doc.user_doc)
        ys = weighted_softmax(doc.system_pairs, doc.system_doc)
    if decimals:
        xs = {pair: round(value, decimals) for pair, value in xs.items()}
        ys = {pair: round(value, decimals) for pair, value in ys.items()}
    rows = []
    doc_id = doc.doc_id
    for pair, y in ys.items():
        x = xs.get(pair)
        if x is None:
            continue
        rows.append(Row(doc_id, pair[0], pair[1], x, y, proportion(y, x)))
    return rows


@dataclass
class _Grouped:
    """The rows of a system gathered in one pass, in first-seen order: ``proportions[doc][j]`` lists p over j's rows,
    ``row_readers[doc]`` the j of each of the document's rows (for the row-weighted document value), and
    ``either`` every (doc, j) and (doc, k) of the rows (for the EGISES-side accuracy)."""

    proportions: dict[str, dict[str, list[float]]]
    row_readers: dict[str, list[str]]
    either: dict[tuple[str, str], None]

    @classmethod
    def of(cls, rows: Iterable[Row]) -> _Grouped:
        proportions: dict[str, dict[str, list[float]]] = {}
        row_readers: dict[str, list[str]] = {}
        either: dict[tuple[str, str], None] = {}
        for doc_id, j, k, _x, _y, p in rows:
            readers = proportions.get(doc_id)
            if readers is None:
                readers = proportions[doc_id] = {}
                row_readers[doc_id] = []
            values = readers.get(j)
            if values is None:
                readers[j] = [p]
            else:
                values.append(p)
            row_readers[doc_id].append(j)
            either[(doc_id, j)] = None
            either[(doc_id, k)] = None
        return cls(proportions, row_readers, either)

    def reader_degress(self) -> dict[str, dict[str, float]]:
        """doc -> j -> DEGRESS_j, the NaN-skipping mean of j's proportions (sec. 4.5)."""
        return {doc_id: {j: nanmean(values) for j, values in readers.items()}
                for doc_id, readers in self.proportions.items()}

    def document_degress(self, degress: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
        """doc -> NaN-skipping mean over the document's rows of DEGRESS_{j(row)} (row-weighted, sec. 5)."""
        return {doc_id: nanmean([degress[doc_id][j] for j in readers]) for doc_id, readers in self.row_readers.items()}


def reader_degress(rows: Sequence[Row]) -> dict[tuple[str, str], float]:
    """DEGRESS_j per (doc, j): NaN-skipping mean of p over that reader's rows (sec. 4.5)."""
    return {(doc_id, j): value for doc_id, readers in _Grouped.of(rows).reader_degress().items()
            for j, value in readers.items()}


def egises_from_rows(rows: Sequence[Row]) -> tuple[float, dict[str, float]]:
    """System DEGRESS and the document values (sec. 5).

    Document value = NaN-skipping mean over the document's rows of DEGRESS_{j(row)} (row-weighted);
    system DEGRESS = NaN-skipping mean of the document values; EGISES = 1 - DEGRESS.
    """
    grouped = _Grouped.of(rows)
    values = grouped.document_degress(grouped.reader_degress())
    return nanmean(values.values()), values


def shifted_sigmoid(x: float, a: float, b: float) -> float:
    """S_{a,b}(x) = 1 / (1 + 10^a * exp(-10^b * x)) (eq. 4-6)."""
    return _sigmoid_of_powers(x, 10.0**a, 10.0**b)


def _sigmoid_of_powers(x: float, ten_a: float, ten_b: float) -> float:
    """S_{a,b}(x) from ``ten_a = 10^a`` and ``ten_b = 10^b``, taken once by a caller that evaluates it many times."""
    return 1.0 / (1.0 + ten_a * _exp(-ten_b * x))


def accuracy_distance(value: float | None) -> float:
    """a_j = sigma(s_j, u_j); NaN (or absent) becomes 1.0, the maximum distance (sec. 6)."""
    return 1.0 if value is None or value != value else value


def perseval_from_rows(
    rows: Sequence[Row],
    accuracy: Mapping[tuple[str, str], float],
    params: Params = Params(),
) -> tuple[float, float, list[DocumentDetail], list[ReaderDetail]]:
    """System PerSEval and pooled accuracy over the readers that are the first element of a row (sec. 6).

    Per document over those readers: d_min = min a_j, d_mean = mean a_j,
    ADP = S_{gamma,delta}(d_min / (1 - d_min + eps)), ACP_j = S_{gamma,delta}((a_j - d_min) / (d_mean - d_min + eps)),
    EDP_j = 1 - S_{alpha,beta}(ADP + ACP_j) + eps, PerSEval_j = DEGRESS_j * EDP_j;
    document = NaN-skipping mean over readers, system = NaN-skipping mean over documents.
    """
    grouped = _Grouped.of(rows)
    return _perseval(grouped, grouped.reader_degress(), accuracy, params)


def _perseval(
    grouped: _Grouped,
    degress: Mapping[str, Mapping[str, float]],
    accuracy: Mapping[tuple[str, str], float],
    params: Params,
) -> tuple[float, float, list[DocumentDetail], list[ReaderDetail]]:
    """:func:`perseval_from_rows` on rows already grouped, with their readers' DEGRESS."""
    eps = PENALTY_EPSILON
    ten_gamma, ten_delta = 10.0**params.gamma, 10.0**params.delta
    ten_alpha, ten_beta = 10.0**params.alpha, 10.0**params.beta
    documents: list[DocumentDetail] = []
    readers: list[ReaderDetail] = []
    pooled: list[float] = []
    for doc_id, groups in grouped.proportions.items():
        acc = {j: accuracy_distance(accuracy.get((doc_id, j))) for j in groups}
        d_min = min(acc.values())
        d_mean = sum(acc.values()) / len(acc)
        adp = _sigmoid_of_powers((d_min - 0.0) / (1.0 - d_min + eps), ten_gamma, ten_delta)
        spread = (d_mean - d_min) + eps
        doc_degress = degress[doc_id]
        values = []
        for j in groups:
            degress_j = doc_degress[j]
            a_j = acc[j]
            acp = _sigmoid_of_powers((a_j - d_min) / spread, ten_gamma, ten_delta)
            edp = 1.0 - _sigmoid_of_powers(adp + acp, ten_alpha, ten_beta) + eps
            value = degress_j * edp
            values.append(value)
            pooled.append(a_j)
            readers.append(ReaderDetail(doc_id, j, degress_j, a_j, acp, edp, value))
        documents.append(DocumentDetail(
            doc_id, len(groups), len(grouped.row_readers[doc_id]), NAN, adp, d_min, d_mean, nanmean(values)
        ))
    system = nanmean(detail.perseval for detail in documents)
    return system, (sum(pooled) / len(pooled) if pooled else NAN), documents, readers


def p_acc(accuracy_distance_mean: float, egises: float, *, alpha: float = 0.5, beta: float = 1.0) -> float:
    """P-Acc (eq. 3): Score_Acc * (1 - alpha * f_sig(beta * EGISES) / Score_Acc), Score_Acc = 1 - mean accuracy
    distance.

    f_sig is the logistic sigmoid. Written as the algebraically equal Score_Acc - alpha * f_sig(beta * EGISES),
    which stays defined when Score_Acc = 0.
    """
    score_acc = 1.0 - accuracy_distance_mean
    return score_acc - alpha * (1.0 / (1.0 + _exp(-beta * egises)))


def system_rows(
    docs: Iterable[DocPairs], *, simplified: bool = False, decimals: int = 0
) -> tuple[list[Row], dict[tuple[str, str], float]]:
    """All rows of one system (:func:`document_rows` of each document) and the accuracies ``(doc, j) -> a_j``;
    documents without rows contribute neither rows nor accuracies."""
    rows: list[Row] = []
    accuracy: dict[tuple[str, str], float] = {}
    for doc in docs:
        doc_rows = document_rows(doc, simplified=simplified, decimals=decimals)
        if not doc_rows:
            continue
        rows.extend(doc_rows)
        doc_id = doc.doc_id
        for j, value in doc.accuracy.items():
            accuracy[(doc_id, j)] = value
    return rows, accuracy


def score_system(docs: Iterable[DocPairs], params: Params = Params()) -> SystemScore:
    """Score one system from its documents' distances (all rows; sec. 4-6)."""
    rows, accuracy = system_rows(docs, simplified=params.simplified, decimals=params.egises_decimals)
    return score_rows(rows, accuracy, params)


def score_rows(
    rows: Sequence[Row], accuracy: Mapping[tuple[str, str], float], params: Params = Params()
) -> SystemScore:
    """System values from a set of rows (all rows, or a sample of them as in sec. 8).

    DEGRESS as :func:`egises_from_rows`, PerSEval as :func:`perseval_from_rows`, from one grouping of the rows;
    ``egises_accuracy`` = mean a_j over every reader that is j or k of a row, in the order they first occur."""
    grouped = _Grouped.of(rows)
    degress_by_reader = grouped.reader_degress()
    doc_values = grouped.document_degress(degress_by_reader)
    degress = nanmean(doc_values.values())
    perseval, pooled_accuracy, documents, readers = _perseval(grouped, degress_by_reader, accuracy, params)
    documents = [
        DocumentDetail(d.doc_id, d.readers, d.rows, doc_values[d.doc_id], d.adp, d.d_min, d.d_mean, d.perseval)
        for d in documents
    ]
    egises_acc = [accuracy_distance(accuracy.get(key)) for key in grouped.either]
    egises = 1.0 - degress
    if params.egises_decimals:
        egises = round(egises, params.egises_decimals)
    return SystemScore(
        egises=egises,
        degress=degress,
        perseval=perseval,
        accuracy=pooled_accuracy,
        egises_accuracy=sum(egises_acc) / len(egises_acc) if egises_acc else NAN,
        p_acc=p_acc(pooled_accuracy, egises, alpha=params.pacc_alpha, beta=params.pacc_beta),
        documents=len(documents),
        readers=len(readers),
        rows=len(rows),
        per_document=documents,
        per_reader=readers,
    )
