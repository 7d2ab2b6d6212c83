"""Session fixtures for the neural measures: tiny random-weight models, each written once (see tiny_models)."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.metaeval.core.measures import tiny_models
from tests.metaeval.core.measures.tiny_models import ENCODER_MAX_LENGTH


@pytest.fixture(scope="module")
def one_torch_thread() -> Iterator[None]:
    """Tiny models run fastest on one thread (and do not fight other processes for cores); restored afterwards.
    Modules opt in with ``pytestmark = pytest.mark.usefixtures("one_torch_thread")``."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def tiny_mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random BertForMaskedLM (2 layers, hidden 32, 64 positions) with its tokenizer."""
    return tiny_models.masked_lm(tmp_path_factory.mktemp("tiny_mlm"), seed=0)


@pytest.fixture(scope="session")
def tiny_distilbert_mlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random DistilBertForMaskedLM over the same vocabulary."""
    return tiny_models.distilbert_masked_lm(tmp_path_factory.mktemp("tiny_distilbert_mlm"), seed=1)


@pytest.fixture(scope="session")
def tiny_encoder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random 3-layer BertModel (no LM head) whose tokenizer truncates at :data:`ENCODER_MAX_LENGTH`."""
    return tiny_models.encoder(tmp_path_factory.mktemp("tiny_encoder"), seed=2, model_max_length=ENCODER_MAX_LENGTH)


@pytest.fixture(scope="session")
def tiny_encoder_unbounded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same weights as ``tiny_encoder`` but a tokenizer without a usable limit (model_max_length 10**30)."""
    return tiny_models.encoder(tmp_path_factory.mktemp("tiny_encoder_unbounded"), seed=2, model_max_length=10**30)


@pytest.fixture(scope="session")
def tiny_encoder64(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same weights as ``tiny_encoder``, tokenizer limit = max_position_embeddings (64)."""
    return tiny_models.encoder(tmp_path_factory.mktemp("tiny_encoder64"), seed=2, model_max_length=64)
