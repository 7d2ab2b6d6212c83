"""The shared base of the neural measures (metaeval.core.measures.neural): length-bounded batches, and the GPU's
batching run on the CPU giving the same numbers. torch is imported only for type checking."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pytest

from metaeval.core.measures.bertscore import BertScore
from metaeval.core.measures.infolm import InfoLM

from .neural_cases import POOL, bertscore, infolm

if TYPE_CHECKING:
    import torch

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def test_batches_bound_items_and_padded_tokens() -> None:
    """Sorted lengths 3,3,3,10,10 with at most 4 items and 20 padded tokens: the 10s do not join the 3s
    (4 x 10 = 40 > 20) and two 10s fit exactly (2 x 10 = 20)."""
    from metaeval.core.measures.neural import _batches

    assert _batches(list("abcde"), [3, 3, 3, 10, 10], 4, budget=20) == [["a", "b", "c"], ["d", "e"]]
    assert _batches(list("abcde"), [1, 1, 1, 1, 1], 2, budget=100) == [["a", "b"], ["c", "d"], ["e"]]
    assert _batches(["long"], [500], 4, budget=20) == [["long"]]  # one item longer than the budget still runs
    assert _batches([], [], 4) == []


def test_gpu_batching_is_the_same_computation(
    tiny_mlm: Path, tiny_encoder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batching a GPU gets (one length per batch, ``token_budget`` tokens, no attention mask when nothing is
    padded), run here on the CPU: the same distributions and distances as the CPU's padded batches up to float32
    rounding, every model batch of one length and unmasked, and idf weights still applied."""
    texts = [text for text in POOL if text.strip()]
    pairs = [(a, b) for a in texts for b in texts[::3]]
    cpu = infolm(tiny_mlm, idf=True)
    cpu.fit_idf(texts)
    expected_vectors, expected = np.stack(cpu.vectors(texts)), cpu.distances(pairs)
    bert_expected = bertscore(tiny_encoder, 2).distances(pairs)

    monkeypatch.setattr(InfoLM, "on_gpu", property(lambda self: True))
    monkeypatch.setattr(BertScore, "on_gpu", property(lambda self: True))
    gpu_like = infolm(tiny_mlm, idf=True)
    gpu_like.fit_idf(texts)
    assert gpu_like.token_budget == 65536 and infolm(tiny_mlm, batch_tokens=999).token_budget == 999
    seen: list[tuple[int, bool]] = []
    eager_step = gpu_like._eager_step

    def spy(input_ids: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        # the GPU step takes no attention mask: every copy of a batch has the batch's length, no padding
        seen.append((input_ids.shape[0], bool((input_ids != 0).all())))
        return eager_step(input_ids, positions)

    monkeypatch.setattr(gpu_like, "_eager_step", spy)
    vectors = np.stack(gpu_like.vectors(texts))
    lengths = {len(ids) for ids in gpu_like.tokenize(texts)}
    assert len(seen) == len(lengths) and all(unmasked for _, unmasked in seen)  # one batch per length here
    assert sum(rows for rows, _ in seen) == sum(len(ids) - 2 for ids in gpu_like.tokenize(texts))
    np.testing.assert_allclose(vectors, expected_vectors, rtol=0, atol=1e-6)
    np.testing.assert_allclose(gpu_like.distances(pairs), expected, rtol=0, atol=1e-5)
    np.testing.assert_allclose(bertscore(tiny_encoder, 2).distances(pairs), bert_expected, rtol=0, atol=1e-6)
