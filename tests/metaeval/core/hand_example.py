"""A PerSEval example small enough to work out by hand (docs/conventions.md sec. 4-6).

One system, "S", and three documents:

* d1 with readers A, B, C (every quantity worked out below),
* d2 with readers P, Q (the two-reader case: a softmax over one pair is exactly 1),
* d3 with the single reader Z (absent everywhere; the table has no entry for its texts, so computing any
  distance of d3 would raise).

The distance is a TABLE: :func:`table_distance` looks up hand-chosen values keyed by the ordered text pair
``(a, b)``. Only the argument orders of the conventions are in the table (sigma(summary, document),
sigma(summary_j, summary_k), sigma(system summary_j, user summary_j)); any other call raises ``KeyError``, so the
example also checks the argument order. Some pairs are deliberately asymmetric (sigma(sA, sB) = 0.3 but
sigma(sB, sA) = 0.4).

Notation: u_j is reader j's own summary, s_j the system's summary for j, d the document text
(headline + " " + body), e = 1e-5 (proportion), eps = 1e-7 (ADP, ACP, EDP),
S_{a,b}(x) = 1 / (1 + 10^a * exp(-10^b * x)); gamma = 4, delta = 1 (ADP, ACP), alpha = 3, beta = 1 (EDP).

=== d1 (readers A, B, C) ====================================================================================

Distances (the table):
  sigma(u_j, d):  uA 0.5   uB 0.8   uC 0.4
  sigma(u_j,u_k): AB 0.4   AC 0.6   BA 0.4   BC 0.8   CA 0.6   CB 0.8
  sigma(s_j, d):  sA 0.6   sB 0.5   sC 0.0      <- zero: the ZeroDivisionError rule gives w = 0
  sigma(s_j,s_k): AB 0.3   AC 0.6   BA 0.4   BC 0.5   CA 0.6   CB 0.5
  sigma(s_j,u_j): A 0.2    B 0.4    C 0.3

Step 1, weights w_jk = sigma(j, k) / sigma(j, d), ordered pairs j != k only:
  user:   w_AB = 0.4/0.5 = 0.8   w_AC = 0.6/0.5 = 1.2
          w_BA = 0.4/0.8 = 0.5   w_BC = 0.8/0.8 = 1.0
          w_CA = 0.6/0.4 = 1.5   w_CB = 0.8/0.4 = 2.0
  system: w_AB = 0.3/0.6 = 0.5   w_AC = 0.6/0.6 = 1.0
          w_BA = 0.4/0.5 = 0.8   w_BC = 0.5/0.5 = 1.0
          w_CA = 0.6/0.0 -> 0    w_CB = 0.5/0.0 -> 0

Step 2, softmax over k != j (two members each, so the first share is 1 / (1 + exp(w_2 - w_1))):
  user:   A: 1/(1+e^0.4) = 0.401312, 0.598688    B: 1/(1+e^0.5) = 0.377541, 0.622459
          C: 1/(1+e^0.5) = 0.377541, 0.622459
  system: A: 1/(1+e^0.5) = 0.377541, 0.622459    B: 1/(1+e^0.2) = 0.450166, 0.549834
          C: e^0/(e^0+e^0) = 0.5, 0.5
  X_jk = share * sigma(u_j,u_k):
          X_AB = 0.401312*0.4 = 0.160525   X_AC = 0.598688*0.6 = 0.359213
          X_BA = 0.377541*0.4 = 0.151016   X_BC = 0.622459*0.8 = 0.497967
          X_CA = 0.377541*0.6 = 0.226524   X_CB = 0.622459*0.8 = 0.497967
  Y_jk = share * sigma(s_j,s_k):
          Y_AB = 0.377541*0.3 = 0.113262   Y_AC = 0.622459*0.6 = 0.373476
          Y_BA = 0.450166*0.4 = 0.180066   Y_BC = 0.549834*0.5 = 0.274917
          Y_CA = 0.5*0.6      = 0.3        Y_CB = 0.5*0.5      = 0.25

Step 3, p_jk = (min(Y, X) + e) / (max(Y, X) + e):
          p_AB = 0.113272/0.160535 = 0.705592   p_AC = 0.359223/0.373486 = 0.961811
          p_BA = 0.151026/0.180076 = 0.838679   p_BC = 0.274927/0.497977 = 0.552087
          p_CA = 0.226534/0.300010 = 0.755090   p_CB = 0.250010/0.497977 = 0.502051

Step 4, DEGRESS_j = mean of j's p (2 rows each):
          DEGRESS_A = (0.705592 + 0.961811)/2 = 0.833702
          DEGRESS_B = (0.838679 + 0.552087)/2 = 0.695383
          DEGRESS_C = (0.755090 + 0.502051)/2 = 0.628570
  document value (row-weighted; every reader has 2 rows) = (0.833702 + 0.695383 + 0.628570)/3 = 0.719218

Step 5, EDP. Accuracy a = (0.2, 0.4, 0.3): d_min = 0.2, d_mean = 0.3.
  ADP   = S_{4,1}(0.2 / (0.8 + eps)) = S_{4,1}(0.25) = 1/(1 + 1e4*e^-2.5)          = 0.00121677
  ACP_A = S_{4,1}((0.2-0.2)/(0.1+eps)) = S_{4,1}(0)  = 1/(1 + 1e4)                 = 0.00009999
  ACP_B = S_{4,1}((0.4-0.2)/(0.1+eps)) = S_{4,1}(2.0) = 1/(1 + 1e4*e^-20)          = 0.99997939
  ACP_C = S_{4,1}((0.3-0.2)/(0.1+eps)) = S_{4,1}(1.0) = 1/(1 + 1e4*e^-10)          = 0.68775609
  EDP_j = 1 - S_{3,1}(ADP + ACP_j) + eps = 1 - 1/(1 + 1e3*exp(-10*(ADP + ACP_j))) + eps:
          EDP_A = 0.998988   EDP_B = 0.042934   EDP_C = 0.504507
  PerSEval_j = DEGRESS_j * EDP_j: A 0.832858   B 0.029856   C 0.317118
  document PerSEval = (0.832858 + 0.029856 + 0.317118)/3 = 0.393277

=== d2 (readers P, Q) =======================================================================================

  sigma(u_j, d): uP 0.5, uQ 0.25; sigma(u_P,u_Q) = sigma(u_Q,u_P) = 0.5
  sigma(s_j, d): sP 0.5, sQ 0.5;  sigma(s_P,s_Q) = sigma(s_Q,s_P) = 0.25
  sigma(s_j,u_j): P 0.1, Q NaN (-> 1.0, the maximum distance)
  Each origin has one pair, so its softmax share is exp(w)/exp(w) = 1 whatever w is:
          X_PQ = X_QP = 0.5,  Y_PQ = Y_QP = 0.25
          p = (0.25 + e)/(0.5 + e) = 0.500010 for both rows; DEGRESS_P = DEGRESS_Q = document value = 0.500010
  EDP: a = (0.1, 1.0): d_min = 0.1, d_mean = 0.55
  ADP   = S_{4,1}(0.1/(0.9 + eps)) = S_{4,1}(0.111111)                              = 0.00030368
  ACP_P = S_{4,1}(0)                                                                = 0.00009999
  ACP_Q = S_{4,1}(0.9/(0.45 + eps)) = S_{4,1}(2.0)                                  = 0.99997939
          EDP_P = 0.998997   EDP_Q = 0.043311
  document PerSEval = 0.500010 * (0.998997 + 0.043311)/2 = 0.260582

=== d3 (reader Z alone) =====================================================================================

  No ordered pair: absent from DEGRESS, PerSEval and the accuracies.

=== System S ================================================================================================

  DEGRESS  = (0.719218 + 0.500010)/2 = 0.609614        EGISES = 1 - DEGRESS = 0.390386
  PerSEval = (0.393277 + 0.260582)/2 = 0.326930
  accuracy = pooled over A, B, C, P, Q = (0.2 + 0.4 + 0.3 + 0.1 + 1.0)/5 = 0.4 = egises_accuracy
"""
from __future__ import annotations

from math import exp

from metaeval.core.io.corpus import Corpus, Document

SYSTEM = "S"

# --- the data ------------------------------------------------------------------------------------------------

HEADLINES = {"d1": "d1 headline", "d2": "d2 headline", "d3": "d3 headline"}
BODIES = {"d1": "d1 body", "d2": "d2 body", "d3": "d3 body"}
TEXTS = {doc: f"{HEADLINES[doc]} {BODIES[doc]}" for doc in HEADLINES}  # "d1 headline d1 body", ...

READERS = {"d1": ["A", "B", "C"], "d2": ["P", "Q"], "d3": ["Z"]}


def user_text(reader: str) -> str:
    return f"user summary of {reader}"


def system_text(reader: str) -> str:
    return f"system summary for {reader}"


SUMMARIES = {
    doc: {reader: {"user": user_text(reader), SYSTEM: system_text(reader)} for reader in readers}
    for doc, readers in READERS.items()
}

# hand-chosen distances, by reader names; the text-keyed TABLE is built from these
USER_DOC = {"A": 0.5, "B": 0.8, "C": 0.4, "P": 0.5, "Q": 0.25}
SYSTEM_DOC = {"A": 0.6, "B": 0.5, "C": 0.0, "P": 0.5, "Q": 0.5}
USER_PAIR = {("A", "B"): 0.4, ("A", "C"): 0.6, ("B", "A"): 0.4, ("B", "C"): 0.8, ("C", "A"): 0.6, ("C", "B"): 0.8,
             ("P", "Q"): 0.5, ("Q", "P"): 0.5}
SYSTEM_PAIR = {("A", "B"): 0.3, ("A", "C"): 0.6, ("B", "A"): 0.4, ("B", "C"): 0.5, ("C", "A"): 0.6, ("C", "B"): 0.5,
               ("P", "Q"): 0.25, ("Q", "P"): 0.25}
ACCURACY = {"A": 0.2, "B": 0.4, "C": 0.3, "P": 0.1, "Q": float("nan")}
DOC_OF = {"A": "d1", "B": "d1", "C": "d1", "P": "d2", "Q": "d2"}

TABLE: dict[tuple[str, str], float] = {}
for _reader, _value in USER_DOC.items():
    TABLE[(user_text(_reader), TEXTS[DOC_OF[_reader]])] = _value  # sigma(summary, document)
for _reader, _value in SYSTEM_DOC.items():
    TABLE[(system_text(_reader), TEXTS[DOC_OF[_reader]])] = _value
for (_j, _k), _value in USER_PAIR.items():
    TABLE[(user_text(_j), user_text(_k))] = _value  # sigma(summary_j, summary_k)
for (_j, _k), _value in SYSTEM_PAIR.items():
    TABLE[(system_text(_j), system_text(_k))] = _value
for _reader, _value in ACCURACY.items():
    TABLE[(system_text(_reader), user_text(_reader))] = _value  # sigma(system summary_j, user summary_j)


def table_distance(a: str, b: str) -> float:
    """The hand-chosen distance of the ordered pair (a, b); KeyError for a pair the pipeline should not need."""
    try:
        return TABLE[(a, b)]
    except KeyError:
        raise KeyError(f"the hand example has no distance for ({a!r}, {b!r})") from None


def build_corpus() -> Corpus:
    documents = tuple(
        Document(doc_id=doc, headline=HEADLINES[doc], body=BODIES[doc], summaries=SUMMARIES[doc])
        for doc in ("d1", "d2", "d3")
    )
    return Corpus(documents=documents, systems=(SYSTEM,))


# --- the hand computation, step by step as in the docstring (plain math, no project code) ---------------------

E = 1e-5
EPS = 1e-7


def shifted_sigmoid(a: float, b: float, x: float) -> float:
    return 1 / (1 + 10**a * exp(-(10**b) * x))


def first_share(w_first: float, w_second: float) -> float:
    """exp(w_first) / (exp(w_first) + exp(w_second))."""
    return exp(w_first) / (exp(w_first) + exp(w_second))


def proportion(y: float, x: float) -> float:
    return (min(y, x) + E) / (max(y, x) + E)


# d1, steps 1-2
X_AB = first_share(0.8, 1.2) * 0.4
X_AC = first_share(1.2, 0.8) * 0.6
X_BA = first_share(0.5, 1.0) * 0.4
X_BC = first_share(1.0, 0.5) * 0.8
X_CA = first_share(1.5, 2.0) * 0.6
X_CB = first_share(2.0, 1.5) * 0.8
Y_AB = first_share(0.5, 1.0) * 0.3
Y_AC = first_share(1.0, 0.5) * 0.6
Y_BA = first_share(0.8, 1.0) * 0.4
Y_BC = first_share(1.0, 0.8) * 0.5
Y_CA = 0.5 * 0.6  # both weights 0 (sigma(sC, d) = 0)
Y_CB = 0.5 * 0.5

# d1, steps 3-4
P_D1 = {
    ("A", "B"): proportion(Y_AB, X_AB),
    ("A", "C"): proportion(Y_AC, X_AC),
    ("B", "A"): proportion(Y_BA, X_BA),
    ("B", "C"): proportion(Y_BC, X_BC),
    ("C", "A"): proportion(Y_CA, X_CA),
    ("C", "B"): proportion(Y_CB, X_CB),
}
DEGRESS_D1 = {
    "A": (P_D1[("A", "B")] + P_D1[("A", "C")]) / 2,
    "B": (P_D1[("B", "A")] + P_D1[("B", "C")]) / 2,
    "C": (P_D1[("C", "A")] + P_D1[("C", "B")]) / 2,
}
DOC_DEGRESS_D1 = (DEGRESS_D1["A"] + DEGRESS_D1["B"] + DEGRESS_D1["C"]) / 3

# d1, step 5
ACC_D1 = {"A": 0.2, "B": 0.4, "C": 0.3}
D_MIN_D1 = 0.2
D_MEAN_D1 = (0.2 + 0.4 + 0.3) / 3
ADP_D1 = shifted_sigmoid(4, 1, D_MIN_D1 / ((1 - D_MIN_D1) + EPS))
ACP_D1 = {j: shifted_sigmoid(4, 1, (a - D_MIN_D1) / ((D_MEAN_D1 - D_MIN_D1) + EPS)) for j, a in ACC_D1.items()}
EDP_D1 = {j: 1 - shifted_sigmoid(3, 1, ADP_D1 + ACP_D1[j]) + EPS for j in ACC_D1}
PERSEVAL_D1 = {j: DEGRESS_D1[j] * EDP_D1[j] for j in ACC_D1}
DOC_PERSEVAL_D1 = (PERSEVAL_D1["A"] + PERSEVAL_D1["B"] + PERSEVAL_D1["C"]) / 3

# d2
P_D2 = (0.25 + E) / (0.5 + E)  # X = 0.5, Y = 0.25 for both rows
DEGRESS_D2 = {"P": P_D2, "Q": P_D2}
DOC_DEGRESS_D2 = P_D2
ACC_D2 = {"P": 0.1, "Q": 1.0}  # Q's NaN became 1.0
D_MIN_D2 = 0.1
D_MEAN_D2 = (0.1 + 1.0) / 2
ADP_D2 = shifted_sigmoid(4, 1, D_MIN_D2 / ((1 - D_MIN_D2) + EPS))
ACP_D2 = {j: shifted_sigmoid(4, 1, (a - D_MIN_D2) / ((D_MEAN_D2 - D_MIN_D2) + EPS)) for j, a in ACC_D2.items()}
EDP_D2 = {j: 1 - shifted_sigmoid(3, 1, ADP_D2 + ACP_D2[j]) + EPS for j in ACC_D2}
DOC_PERSEVAL_D2 = (P_D2 * EDP_D2["P"] + P_D2 * EDP_D2["Q"]) / 2

# system S
EXPECTED_DEGRESS = (DOC_DEGRESS_D1 + DOC_DEGRESS_D2) / 2
EXPECTED = {
    "degress": EXPECTED_DEGRESS,
    "egises": 1 - EXPECTED_DEGRESS,
    "perseval": (DOC_PERSEVAL_D1 + DOC_PERSEVAL_D2) / 2,
    "accuracy": (0.2 + 0.4 + 0.3 + 0.1 + 1.0) / 5,
    "egises_accuracy": (0.2 + 0.4 + 0.3 + 0.1 + 1.0) / 5,
}

# rounded values written in the docstring, for a readable sanity check
DOCSTRING_VALUES = {"degress": 0.609614, "egises": 0.390386, "perseval": 0.326930, "accuracy": 0.4}
