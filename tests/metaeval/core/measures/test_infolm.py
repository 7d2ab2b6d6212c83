"""Golden parity of InfoLM with ``torchmetrics.functional.text.infolm`` (AB-divergence) on tiny random-weight models,
one pair per call: torchmetrics sorts the texts of a batch by length and indexes its distributions back with the
sorting permutation instead of its inverse, so only one-pair calls are trustworthy. The idf-weighted distributions
come from torchmetrics' internals with that permutation undone (verified first without idf). Also the authors'
compat mode. torch and torchmetrics are imported inside the tests, so collecting this file stays fast.

Models come from :mod:`.tiny_models` via the session fixtures in ``conftest.py``. Nothing touches a model hub.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.infolm import InfoLM

from .neural_cases import BATCH_PAIRS, INFOLM_MAX_LENGTH, LONG, LONG_TAIL_CHANGED, POOL, VERY_LONG, Pair, infolm, record

pytestmark = pytest.mark.usefixtures("one_torch_thread")


INFOLM_PAIRS: list[Pair] = [
    ("cat", "dog"),  # one wordpiece each: masking it leaves [CLS] [MASK] [SEP] for both, distance 0
    ("happiness", "the cat"),
    ("the dog ran home", "the cat ran home"),
    ("the cat ran home", "the cat ran home"),  # identical
    ("a big red car", "the old man read a book"),
    ("she said that the police came after the game.", "the children played music at school"),
    (LONG, "the president said"),  # LONG is cut at INFOLM_MAX_LENGTH
    ("the president said", LONG),
    (LONG, LONG_TAIL_CHANGED),  # identical once truncated
    ("Happy Birthday, Quixotic Zebra!", "happy birthday quixotic zebra"),
]


def torchmetrics_infolm(
    folder: Path, a: str, b: str, *, temperature: float = 0.25, alpha: float = 1.0, beta: float = 1.0,
    max_length: int = INFOLM_MAX_LENGTH,
) -> float:
    """torchmetrics' InfoLM (AB-divergence) of one pair, ``a`` as preds and ``b`` as target, idf off."""
    from torchmetrics.functional.text import infolm as tm_infolm

    value = tm_infolm(
        preds=[a], target=[b], model_name_or_path=str(folder), temperature=temperature,
        information_measure="ab_divergence", idf=False, alpha=alpha, beta=beta, device="cpu",
        max_length=max_length, verbose=False, return_sentence_level_score=False,
    )
    return float(value)


def torchmetrics_distributions(
    folder: Path,
    texts: Sequence[str],
    *,
    temperature: float,
    idf: bool,
    idf_corpus: Sequence[str] | None = None,
    max_length: int = INFOLM_MAX_LENGTH,
) -> tuple[np.ndarray, np.ndarray]:
    """torchmetrics' per-text distributions for ``texts`` as one corpus; with ``idf``, idf over ``idf_corpus``
    (default: ``texts`` themselves, what torchmetrics' InfoLM does).

    Returns (in the order of ``texts``, in the order torchmetrics' ``_infolm_compute`` produces). Its dataset
    sorts texts by length (``sorted = original[sorting_indices]``), so the original order is
    ``sorted[argsort(sorting_indices)]``; torchmetrics itself applies ``sorted[sorting_indices]``.
    """
    import torch
    from torch.utils.data import DataLoader
    from torchmetrics.functional.text.helper_embedding_metric import TokenizedDataset, _load_tokenizer_and_model
    from torchmetrics.functional.text.infolm import (
        _get_data_distribution,
        _get_dataloader,
        _get_special_tokens_map,
        _infolm_update,
    )

    tokenizer, model = _load_tokenizer_and_model(str(folder), "cpu")
    ids, mask, _, _ = _infolm_update(list(texts), list(texts), tokenizer, max_length)
    if idf_corpus is None:
        loader = _get_dataloader(ids, mask, idf=idf, batch_size=64, num_workers=0)
    else:  # idf from another corpus: the tokens_idf hook of torchmetrics' dataset (unseen tokens: log(N + 1))
        corpus_ids, corpus_mask, _, _ = _infolm_update(list(idf_corpus), list(idf_corpus), tokenizer, max_length)
        tokens_idf = TokenizedDataset(corpus_ids, corpus_mask, idf=True).tokens_idf
        loader = DataLoader(TokenizedDataset(ids, mask, idf=True, tokens_idf=tokens_idf), batch_size=64)
    dist = _get_data_distribution(model, loader, temperature, idf, _get_special_tokens_map(tokenizer), False)
    order = loader.dataset.sorting_indices
    return dist[torch.argsort(order)].double().numpy(), dist[order].double().numpy()


def ab_divergence(p: np.ndarray, q: np.ndarray, alpha: float, beta: float) -> float:
    """The AB log-divergence as torchmetrics computes it, p = preds, q = target, in float64."""
    s = alpha + beta
    return float(
        np.log(np.sum(q**s)) / (beta * s)
        + np.log(np.sum(p**s)) / (alpha * s)
        - np.log(np.sum(q**alpha * p**beta)) / (alpha * beta)
    )


def test_tiny_masked_lm_gives_informative_distances(tiny_mlm: Path) -> None:
    """The random tiny MLM is peaked enough that different texts are clearly apart (the parity tests have teeth)."""
    texts = ["the dog ran home", "a big red car", "she said that the police came", "happiness", LONG]
    values = [torchmetrics_infolm(tiny_mlm, a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]]
    assert min(values) > 1e-2
    assert np.std(values) > 1e-2
    ours = infolm(tiny_mlm).distances([(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :]])
    assert ours.min() > 1e-2


@pytest.mark.parametrize(
    "model, temperature, alpha, beta",
    [
        ("tiny_mlm", 0.25, 1.0, 1.0),
        ("tiny_mlm", 0.25, 0.5, 2.0),
        ("tiny_mlm", 1.0, 1.0, 1.0),
        ("tiny_mlm", 0.5, 2.0, 0.5),
        ("tiny_distilbert_mlm", 0.25, 1.0, 1.0),
    ],
)
def test_infolm_matches_torchmetrics(
    request: pytest.FixtureRequest, model: str, temperature: float, alpha: float, beta: float
) -> None:
    """sigma(a, b) == torchmetrics infolm(preds=[a], target=[b]) within 1e-5 on texts from 1 word to truncated,
    for BERT and DistilBERT heads, two temperatures and symmetric and asymmetric (alpha, beta); identical texts
    and texts identical once cut to max_length are at ~0."""
    folder: Path = request.getfixturevalue(model)
    expected = np.array(
        [torchmetrics_infolm(folder, a, b, temperature=temperature, alpha=alpha, beta=beta) for a, b in INFOLM_PAIRS]
    )
    got = infolm(folder, temperature=temperature, alpha=alpha, beta=beta).distances(INFOLM_PAIRS)
    assert got.dtype == np.float64 and got.shape == (len(INFOLM_PAIRS),)
    record(f"infolm {model} T={temperature} a={alpha} b={beta}", got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    assert abs(got[3]) < 1e-5 and abs(got[8]) < 1e-5  # identical, identical after truncation
    assert np.count_nonzero(np.abs(expected) > 1e-3) >= 6


def test_infolm_asymmetric_divergence_keeps_argument_order(tiny_mlm: Path) -> None:
    """With alpha=0.5, beta=2 the divergence is asymmetric: sigma(a, b) != sigma(b, a), and each matches
    torchmetrics with a as preds and b as target (a swapped order would be caught)."""
    base = [("the dog ran home", "a big red car"), ("happiness", "the old man read a book"), (LONG, "the cat")]
    pairs = base + [(b, a) for a, b in base]
    expected = np.array([torchmetrics_infolm(tiny_mlm, a, b, alpha=0.5, beta=2.0) for a, b in pairs])
    got = infolm(tiny_mlm, alpha=0.5, beta=2.0).distances(pairs)
    record("infolm asymmetric a=0.5 b=2", got, expected)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
    forward, backward = got[: len(base)], got[len(base) :]
    assert np.abs(forward - backward).max() > 1e-2 and np.count_nonzero(np.abs(forward - backward) > 1e-3) >= 2


def test_infolm_max_length_truncates(tiny_mlm: Path) -> None:
    """Texts that differ only past max_length are at distance ~0; with a larger max_length they are not, and
    both agree with torchmetrics."""
    pair = [(LONG, LONG_TAIL_CHANGED)]
    short = infolm(tiny_mlm, max_length=INFOLM_MAX_LENGTH).distances(pair)[0]
    full = infolm(tiny_mlm, max_length=40).distances(pair)[0]
    assert abs(short) < 1e-5
    assert full > 1e-3
    assert full == pytest.approx(torchmetrics_infolm(tiny_mlm, LONG, LONG_TAIL_CHANGED, max_length=40), abs=1e-5)
    # max_length=None: the model's limit, here tokenizer.model_max_length = max_position_embeddings = 64
    pair = [(VERY_LONG, "the president said the government")]
    default = infolm(tiny_mlm, max_length=None).distances(pair)[0]
    assert default == pytest.approx(torchmetrics_infolm(tiny_mlm, *pair[0], max_length=64), abs=1e-5)


def test_torchmetrics_distribution_order_is_undone_by_inverse_permutation(tiny_mlm: Path) -> None:
    """Without idf, torchmetrics' distributions re-indexed with argsort(sorting_indices) equal ours text by text;
    the order torchmetrics itself uses (sorted[sorting_indices]) does not (its multi-text misordering)."""
    corpus = ["the old man read a book about the war", "cat", "the dog ran home"]  # lengths 10, 1, 4: a 3-cycle
    original, torchmetrics_order = torchmetrics_distributions(tiny_mlm, corpus, temperature=0.25, idf=False)
    ours = infolm(tiny_mlm).text_distributions(corpus)
    assert ours.shape == original.shape and ours.shape[0] == 3
    record("infolm distributions idf=False", ours, original)
    np.testing.assert_allclose(ours, original, rtol=0, atol=1e-5)
    assert np.abs(ours - torchmetrics_order).max() > 1e-3
    np.testing.assert_allclose(ours.sum(axis=1), 1.0, atol=1e-5)


IDF_CORPUS = [
    "the old man read a book about the war",
    "the cat",
    "a big red car and the dog ran home",
    "happiness",
    "she said that the police came after the game.",
    LONG,  # truncated: its tail must not count towards document frequencies
    "the dog ran home",
]


def test_infolm_idf_distributions_match_torchmetrics(tiny_mlm: Path) -> None:
    """After fit_idf(corpus), text_distributions equal torchmetrics' idf-weighted distributions for the same corpus
    (idf log((N+1)/(df+1)) over truncated ids) within 1e-5, differ clearly from the unweighted ones, and the pair
    distances equal torchmetrics' AB-divergence of those distributions."""
    import torch
    from torchmetrics.functional.text.infolm import _InformationMeasure

    expected, _ = torchmetrics_distributions(tiny_mlm, IDF_CORPUS, temperature=0.25, idf=True)
    plain, _ = torchmetrics_distributions(tiny_mlm, IDF_CORPUS, temperature=0.25, idf=False)
    measure = infolm(tiny_mlm, idf=True)
    measure.fit_idf(IDF_CORPUS)
    got = measure.text_distributions(IDF_CORPUS)
    record("infolm distributions idf=True", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)
    assert max(ab_divergence(expected[i], plain[i], 1.0, 1.0) for i in range(len(IDF_CORPUS))) > 1e-3

    pairs = [(IDF_CORPUS[i], IDF_CORPUS[j]) for i in range(len(IDF_CORPUS)) for j in range(len(IDF_CORPUS)) if i != j]
    index = {text: i for i, text in enumerate(IDF_CORPUS)}
    measure_ab = _InformationMeasure("ab_divergence", 1.0, 1.0)
    reference = (
        measure_ab(
            torch.from_numpy(expected[[index[a] for a, _ in pairs]]).float(),
            torch.from_numpy(expected[[index[b] for _, b in pairs]]).float(),
        )
        .double()
        .numpy()
    )
    distances = measure.distances(pairs)
    record("infolm distances idf=True", distances, reference)
    np.testing.assert_allclose(distances, reference, rtol=1e-5, atol=1e-5)


def test_infolm_idf_on_texts_outside_the_corpus(tiny_mlm: Path) -> None:
    """Texts not in the fitted corpus are weighted with the corpus idf, unseen tokens with log(N + 1), as
    torchmetrics' dataset does with a given ``tokens_idf``."""
    texts = ["a quixotic zebra and the cat", "the dog ran home", "music for the children"]
    expected, _ = torchmetrics_distributions(tiny_mlm, texts, temperature=0.25, idf=True, idf_corpus=IDF_CORPUS)
    measure = infolm(tiny_mlm, idf=True)
    measure.fit_idf(IDF_CORPUS)
    got = measure.text_distributions(texts)
    record("infolm distributions idf=True, texts outside the corpus", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_infolm_idf_counts_repeated_texts_like_torchmetrics(tiny_mlm: Path) -> None:
    """A corpus that repeats a text counts it once per occurrence (N and df), as torchmetrics (and bert-score's
    get_idf_dict) do."""
    corpus = IDF_CORPUS[:4] + [IDF_CORPUS[1], IDF_CORPUS[1], IDF_CORPUS[3]]
    expected, _ = torchmetrics_distributions(tiny_mlm, corpus, temperature=0.25, idf=True)
    measure = infolm(tiny_mlm, idf=True)
    measure.fit_idf(corpus)
    got = measure.text_distributions(corpus)
    record("infolm distributions idf=True, repeated texts", got, expected)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-5)


def test_infolm_empty_text(tiny_mlm: Path) -> None:
    """An empty (or blank) text has no content token, so no distribution (0/0): ours gives NaN distances and a NaN
    row. torchmetrics computes the same NaN but its ``nan_to_num`` reports it as 0.0 ("identical")."""
    pairs = [("", "the dog ran home"), ("the dog ran home", ""), ("", ""), ("   ", "cat")]
    reference = [torchmetrics_infolm(tiny_mlm, a, b) for a, b in pairs]
    assert reference == [0.0, 0.0, 0.0, 0.0]
    measure = infolm(tiny_mlm)
    assert np.isnan(measure.distances(pairs)).all()
    rows = measure.text_distributions(["", "the dog"])
    assert np.isnan(rows[0]).all() and not np.isnan(rows[1]).any()


def test_infolm_batch_equals_one_pair_calls(tiny_mlm: Path) -> None:
    """distances() over 40 mixed pairs in small model batches equals one-pair calls within 1e-6."""
    batched = infolm(tiny_mlm, batch_size=5).distances(BATCH_PAIRS)
    single = infolm(tiny_mlm)
    one_by_one = np.array([single(a, b) for a, b in BATCH_PAIRS])
    record("infolm batch vs one pair", batched, one_by_one)
    np.testing.assert_allclose(batched, one_by_one, rtol=0, atol=1e-6)


def test_infolm_missing_model_is_unavailable(tmp_path: Path) -> None:
    """A model folder that does not exist raises MeasureUnavailable naming it."""
    missing = tmp_path / "nope"
    with pytest.raises(MeasureUnavailable, match="nope"):
        measure = InfoLM(model=str(missing), max_length=INFOLM_MAX_LENGTH, device="cpu")
        measure.prepare()
        measure.distances([("a cat", "a dog")])


def test_infolm_without_masked_lm_head_is_unavailable(tiny_encoder: Path) -> None:
    """A plain encoder (BertModel, no MLM head) raises MeasureUnavailable mentioning the masked-LM head."""
    with pytest.raises(MeasureUnavailable, match=r"(?i)mask(ed)?[- ]?LM head"):
        measure = InfoLM(model=str(tiny_encoder), max_length=INFOLM_MAX_LENGTH, device="cpu")
        measure.prepare()
        measure.distances([("a cat", "a dog")])


def test_infolm_identical_texts_are_at_distance_exactly_0(tiny_mlm: Path) -> None:
    """The same text has one cached distribution, and the AB-divergence of a distribution with itself is computed
    as exactly 0 (log(sum p^2)/2 twice minus log(sum p*p), the same float64 sums)."""
    measure = infolm(tiny_mlm, max_length=64)
    texts = [text for text in POOL if text] + [VERY_LONG]
    pairs = [(text, text) for text in texts] + [(a, a) for a, _ in BATCH_PAIRS]
    assert measure.distances(pairs).tolist() == [0.0] * len(pairs)
    assert measure.distances([(POOL[0], POOL[1])])[0] > 1e-3


def test_ab_divergence_oracle() -> None:
    """Guard for the helper: the AB-divergence oracle is symmetric at alpha = beta = 1 and 0 on equal inputs."""
    p = np.array([0.2, 0.3, 0.5])
    q = np.array([0.1, 0.6, 0.3])
    assert ab_divergence(p, q, 1.0, 1.0) == pytest.approx(ab_divergence(q, p, 1.0, 1.0))
    assert ab_divergence(p, p, 0.5, 2.0) == pytest.approx(0.0, abs=1e-12)
    assert not math.isnan(ab_divergence(p, q, 0.5, 2.0))


def test_infolm_compat_uses_the_authors_call(tiny_mlm: Path) -> None:
    """compat = torchmetrics' defaults in the authors' call: max_length 20 (texts cut to 18 wordpieces), and the
    final nan_to_num, so an empty text is 0 ("identical") where the default mode says NaN."""
    measure = InfoLM(compat=True, model=str(tiny_mlm), device="cpu")
    assert measure.max_length == 20
    long_a = " ".join(["the city police said"] * 8)
    long_b = long_a + " and the market report"
    pairs = [("", "the news"), (long_a, long_b), ("the news said", "a new study")]
    got = measure.distances(pairs)
    expected = [torchmetrics_infolm(tiny_mlm, a, b, max_length=20) for a, b in pairs]
    assert got[0] == 0.0 and math.isnan(infolm(tiny_mlm).distances(pairs[:1])[0])
    assert got[1] == 0.0  # identical in their first 18 wordpieces
    assert got[2] == round(expected[2], 5) and got[2] > 1e-3
    for options in ({"idf": True}, {"dtype": "bfloat16"}, {"alpha": 0.5}):
        with pytest.raises(ValueError, match="authors' settings"):
            InfoLM(compat=True, model=str(tiny_mlm), **options)


#: texts of every length up to and past compat's 18 wordpieces, for the one-pair parity of compat mode
COMPAT_TEXTS = [
    "kana vo mi",
    "vo mi gigi ex ex umvogi lotasex",
    "cat",
    "use",
    "not green",
    "the dog ran home",
    "she said that the police came after the game.",
    LONG,
    VERY_LONG,
    "Happy Birthday, Quixotic Zebra!",
    "the old man read a book about the war",
    "",
    "  the dog  ",
]


def test_infolm_compat_is_torchmetrics_one_pair_at_a_time_rounded_to_5_dp(tiny_mlm: Path) -> None:
    """The authors' ``calculate_infoLM``: ``round(infolm([a], [b]).item(), 5)``. compat runs torchmetrics' own
    shapes and float32 arithmetic, so on one CPU thread the value before rounding is torchmetrics' to the bit and
    the rounded value is the same decimal for every pair."""
    from torchmetrics.functional.text.helper_embedding_metric import _load_tokenizer_and_model
    from torchmetrics.functional.text.infolm import (
        _get_data_distribution,
        _get_dataloader,
        _get_special_tokens_map,
        _infolm_update,
    )

    measure = InfoLM(compat=True, model=str(tiny_mlm), device="cpu")
    pairs = [(a, b) for a in COMPAT_TEXTS for b in COMPAT_TEXTS]
    got = measure.distances(pairs)
    memo: dict[Pair, float] = {}
    for (a, b), value in zip(pairs, got, strict=True):
        if (a, b) not in memo:
            memo[(a, b)] = torchmetrics_infolm(tiny_mlm, a, b, max_length=20)
        assert value == round(memo[(a, b)], 5), (a, b)
    # the distributions themselves are torchmetrics' bits (a batch of one text, as in a one-pair call)
    tokenizer, model = _load_tokenizer_and_model(str(tiny_mlm), "cpu")
    for text, vector in zip(COMPAT_TEXTS, measure.vectors(COMPAT_TEXTS), strict=True):
        ids, mask, _, _ = _infolm_update([text], [text], tokenizer, 20)
        loader = _get_dataloader(ids, mask, idf=False, batch_size=64, num_workers=0)
        theirs = _get_data_distribution(model, loader, 0.25, False, _get_special_tokens_map(tokenizer), False)
        np.testing.assert_array_equal(vector, theirs[0].numpy(), err_msg=text)


def test_infolm_compat_rounds_where_the_default_does_not(tiny_mlm: Path) -> None:
    """The audit's pair: compat returns the 5-dp value the authors' code stores, the default the unrounded one."""
    pair = [("kana vo mi", "vo mi gigi ex ex umvogi lotasex")]
    reference = torchmetrics_infolm(tiny_mlm, *pair[0], max_length=20)
    compat = float(InfoLM(compat=True, model=str(tiny_mlm), device="cpu").distances(pair)[0])
    default = float(infolm(tiny_mlm, max_length=20).distances(pair)[0])
    assert compat == round(reference, 5) == round(compat, 5)
    # the default batches masked copies (float32 logits round differently with more rows) and sums in float64:
    # it stays within a few 1e-6 of torchmetrics, and is not a 5-dp number
    assert default != round(default, 5) and default == pytest.approx(reference, abs=5e-6)
    assert abs(default - compat) <= 5e-6


def test_infolm_compat_runs_on_one_thread_and_restores_the_setting(tiny_mlm: Path) -> None:
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        seen: list[int] = []
        measure = InfoLM(compat=True, model=str(tiny_mlm), device="cpu")
        measure.prepare()
        original = measure.model.forward

        def spy(*args: object, **kwargs: object) -> object:
            seen.append(torch.get_num_threads())
            return original(*args, **kwargs)

        measure.model.forward = spy  # type: ignore[method-assign]
        measure.distances([("the dog ran home", "a cat")])
        assert seen and set(seen) == {1}
        assert torch.get_num_threads() == 2
    finally:
        torch.set_num_threads(before)
