"""InfoLM's GPU encoding path (``InfoLM._encode_by_length``) run on the CPU: copies gathered and masked on the
device, one length per batch, the encoder without the model's wrapper, optional ``torch.compile`` with its
fallback. It must give the distributions of the per-batch host loop it replaced (same batches) and of the CPU
path (other batches: float32 rounding only)."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from metaeval.core.measures.infolm import InfoLM

from .neural_cases import LONG, POOL

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TEXTS = ["the cat ran home", "a big red car", "cat", "", LONG, "the old man read a book", *POOL[:6]]


def as_gpu(measure: InfoLM, monkeypatch: pytest.MonkeyPatch) -> InfoLM:
    """``measure`` taking its GPU branches while running on the CPU."""
    monkeypatch.setattr(InfoLM, "on_gpu", property(lambda self: True))
    return measure


def host_loop(measure: InfoLM, texts: list[str]) -> np.ndarray:
    """The former GPU encoding: ``_masked_batches`` (built on the host batch by batch) through the model."""
    import torch

    ids_list = measure.tokenize(texts)
    vocab = int(measure.model.config.vocab_size)
    total = torch.zeros((len(texts), vocab), dtype=torch.float64)
    weight_sum = torch.zeros(len(texts), dtype=torch.float64)
    with torch.inference_mode():
        for input_ids, attention, positions, weights, targets in measure._masked_batches(ids_list):
            logits = measure._masked_logits(input_ids, attention, positions)
            probs = torch.softmax(logits.float() / measure.temperature, dim=-1).double()
            total.index_add_(0, targets, probs * weights[:, None])
            weight_sum.index_add_(0, targets, weights)
    return (total / weight_sum[:, None]).float().numpy()


@pytest.mark.parametrize("idf", [False, True])
def test_same_batches_same_numbers(tiny_mlm: Path, monkeypatch: pytest.MonkeyPatch, idf: bool) -> None:
    measure = as_gpu(InfoLM(model=str(tiny_mlm), device="cpu", max_length=64, batch_tokens=96, idf=idf,
                            compile="off"), monkeypatch)
    if idf:
        measure.fit_idf(TEXTS)
    new = np.stack(measure._encode(TEXTS))
    old = host_loop(measure, TEXTS)
    assert np.isnan(new[3]).all() and np.isnan(old[3]).all()  # the empty text: no distribution
    keep = [i for i in range(len(TEXTS)) if i != 3]
    np.testing.assert_allclose(new[keep], old[keep], rtol=0, atol=1e-7)
    np.testing.assert_allclose(new[keep].sum(axis=1), 1.0, atol=1e-5)


def test_batches_hold_one_length_within_the_budget(tiny_mlm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    measure = as_gpu(InfoLM(model=str(tiny_mlm), device="cpu", max_length=64, batch_tokens=40, compile="off"),
                     monkeypatch)
    ids_list = measure.tokenize(TEXTS)
    padded, rows, positions, weights, batches = measure._length_jobs(ids_list)
    lengths = [len(ids) for ids in ids_list]
    content = sum(sum(token not in measure._special for token in ids) for ids in ids_list)
    assert len(rows) == content == batches[-1][1] and batches[0][0] == 0
    for (start, end, length), following in zip(batches, [*batches[1:], None], strict=True):
        assert {lengths[r] for r in rows[start:end]} == {length}
        assert (end - start) * length <= 40 or end - start == 1
        if following is not None:
            assert following[0] == end
    assert all(padded[r, p] not in measure._special for r, p in zip(rows, positions, strict=True))
    assert (weights == 1.0).all()


def test_close_to_the_cpu_path(tiny_mlm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cpu = InfoLM(model=str(tiny_mlm), device="cpu", max_length=64)
    reference = np.stack(cpu._encode(TEXTS))
    measure = as_gpu(InfoLM(model=str(tiny_mlm), device="cpu", max_length=64, compile="off"), monkeypatch)
    new = np.stack(measure._encode(TEXTS))
    keep = [i for i in range(len(TEXTS)) if i != 3]
    np.testing.assert_allclose(new[keep], reference[keep], rtol=0, atol=1e-6)


def test_compiler_failure_falls_back_to_eager(tiny_mlm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    calls: list[int] = []

    def broken_compile(function: Any, **kwargs: Any) -> Any:
        def run(*args: Any) -> Any:
            calls.append(1)
            raise RuntimeError("no compiler here")

        return run

    monkeypatch.setattr(torch, "compile", broken_compile)
    eager = as_gpu(InfoLM(model=str(tiny_mlm), device="cpu", max_length=64, compile="off"), monkeypatch)
    fused = InfoLM(model=str(tiny_mlm), device="cpu", max_length=64, compile="on")
    expected = np.stack(eager._encode(TEXTS[:3]))
    got = np.stack(fused._encode(TEXTS[:3]))
    assert calls == [1]  # tried once, then eager for the rest of the run
    assert fused.stats["compile_failed"] == 1 and "no compiler here" in fused._compile_error
    np.testing.assert_array_equal(got, expected)


def test_compile_auto_waits_for_a_large_run(tiny_mlm: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    from metaeval.core.measures import infolm as module

    compiled: list[Any] = []

    def recording_compile(function: Any, **kwargs: Any) -> Any:
        compiled.append(kwargs)
        return function  # the eager step itself: only when it is asked for is tested here

    monkeypatch.setattr(torch, "compile", recording_compile)
    measure = as_gpu(InfoLM(model=str(tiny_mlm), device="cpu", max_length=64), monkeypatch)
    monkeypatch.setattr(module, "COMPILE_AFTER_TOKENS", 10**9)
    first = np.stack(measure._encode(TEXTS[:3]))
    assert compiled == [] and "compiled" not in measure.stats and measure._tokens_seen > 0
    monkeypatch.setattr(module, "COMPILE_AFTER_TOKENS", measure._tokens_seen)
    again = np.stack(measure._encode(TEXTS[:3]))
    assert compiled == [{"dynamic": True}] and measure.stats["compiled"] == 1
    np.testing.assert_array_equal(first, again)


def test_compile_auto_stays_off_on_a_cpu(tiny_mlm: Path) -> None:
    measure = InfoLM(model=str(tiny_mlm), device="cpu", max_length=64)
    measure.prepare()
    assert measure.compile_mode == "auto" and measure._fused_step() is None


@pytest.mark.parametrize(("option", "value"), [("compile", "sometimes"), ("recheck", "later"), ("compile", 2)])
def test_switch_options_are_checked(option: str, value: object) -> None:
    with pytest.raises(ValueError, match=option):
        InfoLM(model="x", **{option: value})


def test_switch_options_take_booleans() -> None:
    measure = InfoLM(model="x", compile=False, recheck=True)
    assert measure.compile_mode == "off" and measure.recheck == "auto"
    assert InfoLM(model="x", recheck="flag").recheck == "flag"
    assert InfoLM(model="x", recheck=False).recheck == "off"
