"""The data the tests of metaeval.core.perseval.studies share (perseval-tmlr sec. 7-8, Tables 1-8, Figure 3, App. B.2).

Two kinds of data:

* a **tiny hand case** built from DocPairs directly. Each document has two readers P and Q, both with
  accuracy distance 0. The softmax share of a single pair is 1, so X = sigma(u_P, u_Q) and
  Y = sigma(s_P, s_Q), and a document's PerSEval is p(Y, X) * EDP0. Here p(Y, X) = (min + 1e-5)/(max + 1e-5),
  and EDP0 = 1 - S_{3,beta}(2 S_{4,1}(0)) + 1e-7 is the same for every document.
* the **demo fixture** (14 documents, 10 systems) with lexical measures only (rouge_l, jsd) and no cache
  (the ``demo``, ``demo_options`` and ``demo_data`` fixtures in ``conftest.py``).
"""
from __future__ import annotations

import math
from pathlib import Path

from metaeval.core.perseval.measure import DocPairs, SystemScore
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.core.perseval.studies import StudyData

DEMO = Path(__file__).resolve().parents[5] / "fixtures" / "demo"
BETA = 1.7


def proportion(y: float, x: float) -> float:
    return (min(y, x) + 1e-5) / (max(y, x) + 1e-5)


def edp0(beta: float = 1.0) -> float:
    """EDP of a reader whose accuracy distance and d_min, d_mean are all 0: ADP = ACP = S_{4,1}(0)."""
    s0 = 1 / (1 + 10**4)
    return 1 - 1 / (1 + 10**3 * math.exp(-(10**beta) * 2 * s0)) + 1e-7


def two_reader_doc(doc_id: str, y: float, x: float = 0.5) -> DocPairs:
    return DocPairs(
        doc_id=doc_id,
        user_doc={"P": 0.5, "Q": 0.5},
        system_doc={"P": 0.5, "Q": 0.5},
        user_pairs={("P", "Q"): x, ("Q", "P"): x},
        system_pairs={("P", "Q"): y, ("Q", "P"): y},
        accuracy={"P": 0.0, "Q": 0.0},
    )


#: y per system and document; with x = 0.5, p = 1, 0.8, 0.6 on d1 and 0.7, 0.5, 0.95 on d2 (roughly).
#: d1 ranks S1 > S2 > S3, d2 ranks S3 > S1 > S2, and the full data ranks S1 > S3 > S2.
Y = {"S1": (0.5, 0.35), "S2": (0.4, 0.25), "S3": (0.3, 0.475)}


def hand_value(system: str, doc: int, beta: float = 1.0) -> float:
    return proportion(Y[system][doc], 0.5) * edp0(beta)


def tiny_data(*, drop_s2_d2: bool = False) -> StudyData:
    docs = {}
    for system, (y1, y2) in Y.items():
        pairs = [two_reader_doc("d1", y1)]
        if not (drop_s2_d2 and system == "S2"):
            pairs.append(two_reader_doc("d2", y2))
        docs[system] = pairs
    return StudyData(options=RunOptions(measures=["m"]), doc_ids=["d1", "d2"], measures=["m"], hj=[], docs={"m": docs})


def fake(egises=0.5, perseval=0.5, p_acc=0.5, accuracy=0.5) -> SystemScore:
    return SystemScore(egises=egises, degress=1 - egises, perseval=perseval, accuracy=accuracy,
                       egises_accuracy=accuracy, p_acc=p_acc, documents=1, readers=2, rows=2)
