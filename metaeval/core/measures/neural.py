"""What the neural distance measures share (:mod:`~metaeval.core.measures.infolm`,
:mod:`~metaeval.core.measures.bertscore`): model resolution, device and dtype, idf, the per-text vector cache,
pair chunking and length-bucketed batches.

Both measures work per *unique text* first and per pair second, which is what makes them fast. Per-text vectors
go to the ``text_vector`` table of the distance cache (:mod:`metaeval.core.measures.cache`) under a key of model
fingerprint and text-level options, so changing alpha, beta, idf or the baseline runs no model again. torch and
transformers are imported when a measure is prepared, never at module import.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metaeval.core.measures.base import Measure, MeasureUnavailable
from metaeval.core.measures.models import ResolvedModel, resolve_model

if TYPE_CHECKING:
    from metaeval.core.measures.cache import DistanceCache

# neural: ready for tests
__all__ = ["NeuralMeasure", "resolve_device", "TORCH_DTYPES", "GPU_BATCH_TOKENS"]

TORCH_DTYPES = ("float32", "bfloat16", "float16")
#: padded tokens per model batch on a GPU unless ``batch_tokens`` says otherwise (docs/guide/gpus.md, GPU figures)
GPU_BATCH_TOKENS = 65536
#: pairs handled per step; texts of one step are encoded together (bounded memory for any corpus size)
PAIR_CHUNK = 4096
#: BERTScore pair batches: at most this many embedding floats (both sides, padded) at once (16M = 64 MB)
PAIR_FLOATS = 16 * 1024 * 1024


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when torch sees a GPU, else ``cpu``; anything else is passed to torch as given."""
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise MeasureUnavailable(f"device {device!r} was asked for but torch sees no CUDA GPU here; use device=cpu")
    return device


@contextlib.contextmanager
def _one_cpu_thread(device: str) -> Iterator[None]:
    """torch on one intra-op thread while inside, on a CPU (float32 sums then do not depend on the core count)."""
    import torch

    if not device.startswith("cpu"):
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _switch(name: str, value: object, extra: tuple[str, ...] = ()) -> str:
    """An on/off/auto option (``True`` -> ``on``, ``False`` -> ``off``), or one of ``extra``."""
    if value is True:
        return "on"
    if value is False:
        return "off"
    allowed = ("auto", "on", "off", *extra)
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}, not {value!r}")
    return str(value)


def _digest(parts: Iterable[bytes]) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(hashlib.blake2b(part, digest_size=16).digest())
    return h.hexdigest()


class NeuralMeasure(Measure):
    """What InfoLM and BERTScore share: model resolution, device/dtype, idf, per-text vector cache, chunking."""

    #: run in this process (torch batches internally); the engine must not fork workers for these
    parallel = False
    #: bump when the per-text vectors change (``version`` covers the pair distances computed from them)
    text_version: str = "1"
    env: str = ""
    option_flag: str = ""
    needs: str = ""
    display: str = ""

    def __init__(
        self,
        *,
        compat: bool = False,
        model: str | None = None,
        max_length: int | None = None,
        idf: bool = False,
        batch_size: int = 64,
        batch_tokens: int | None = None,
        device: str = "auto",
        dtype: str = "float32",
        recheck: bool | str = "auto",
    ) -> None:
        self.compat = bool(compat)
        self.model_spec = model or self._default_model()
        self.requested_max_length = max_length
        self.idf = bool(idf)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.batch_size = int(batch_size)
        if batch_tokens is not None and batch_tokens < 1:
            raise ValueError("batch_tokens must be at least 1")
        self.batch_tokens = batch_tokens
        self.device_request = device
        if dtype not in TORCH_DTYPES:
            raise ValueError(f"dtype must be one of {', '.join(TORCH_DTYPES)}, not {dtype!r}")
        self.dtype = dtype
        #: after a bfloat16/float16 run: re-check close systems in float32 (auto), only flag them, or neither
        #: (metaeval.core.perseval.precision; conventions sec. 3)
        mode = _switch("recheck", recheck, extra=("flag",))
        self.recheck = "auto" if mode == "on" else mode
        self.cache: DistanceCache | None = None
        self._resolved: ResolvedModel | None = None
        self._loaded = False
        self._idf_table: tuple[int, dict[int, float]] | None = None
        self._idf_corpus = ""
        self.stats: dict[str, float] = {"texts_encoded": 0, "texts_from_cache": 0, "model_seconds": 0.0,
                                        "vector_write_seconds": 0.0, "vector_bytes": 0}

    # -- configuration -------------------------------------------------------------------------------------

    def _default_model(self) -> str:
        raise NotImplementedError

    @property
    def resolved(self) -> ResolvedModel:
        if self._resolved is None:
            self._resolved = resolve_model(
                self.model_spec, measure=self.display, option=self.option_flag, env=self.env, needs=self.needs
            )
        return self._resolved

    def describe(self) -> str:
        """The model in one line, for reports."""
        return self.resolved.describe()

    def text_options(self) -> dict[str, object]:
        """Options that decide the per-text vectors."""
        return {"model": self.resolved.fingerprint, "max_length": self.max_length, "dtype": self.dtype}

    @property
    def text_key(self) -> str:
        return json.dumps(
            {"name": self.name, "version": self.text_version, **self.text_options()}, sort_keys=True,
            separators=(",", ":"),
        )

    @property
    def options(self) -> Mapping[str, object]:
        if self.idf and not self._idf_corpus:
            raise ValueError(f"{self.name}: idf=True needs fit_idf(texts) first (the corpus idf is computed on)")
        return {**self.text_options(), "idf": self._idf_corpus if self.idf else False}

    def attach_cache(self, cache: DistanceCache | None) -> None:
        """Keep per-text vectors in ``cache`` (the engine calls this before computing)."""
        self.cache = cache

    # -- loading -------------------------------------------------------------------------------------------

    def prepare(self) -> None:
        if self._loaded:
            return
        try:
            import torch  # noqa: F401
            import transformers  # noqa: F401
        except ImportError as exc:  # pragma: no cover - both are pinned in requirements.txt
            raise MeasureUnavailable(
                f"{self.display} needs torch and transformers ({exc}); run `make install`"
            ) from None
        self.device = resolve_device(self.device_request)
        self._load(self.resolved)
        self._loaded = True

    def _load(self, resolved: ResolvedModel) -> None:
        raise NotImplementedError

    def _load_tokenizer(self, resolved: ResolvedModel) -> Any:
        from transformers import AutoTokenizer

        try:
            return AutoTokenizer.from_pretrained(str(resolved.path), local_files_only=True)
        except (OSError, ValueError) as exc:
            raise MeasureUnavailable(f"{self.display}: no usable tokenizer in {resolved.path}: {exc}") from None

    @property
    def max_length(self) -> int:
        raise NotImplementedError

    def _model_max_length(self, config: Any, tokenizer: Any) -> int:
        limit = int(getattr(config, "max_position_embeddings", 512) or 512)
        model_max = getattr(tokenizer, "model_max_length", None)
        if isinstance(model_max, int) and 0 < model_max < limit:
            return model_max
        return limit

    @property
    def on_gpu(self) -> bool:
        self.prepare()
        return self.device.startswith("cuda")

    @property
    def token_budget(self) -> int:
        """Padded tokens per model batch: ``batch_tokens`` if set, else batch_size x 128 on a CPU and
        :data:`GPU_BATCH_TOKENS` on a GPU (large batches keep a GPU's tensor cores busy; on a CPU the
        batching decides float32 rounding, so it stays what the golden tests were computed with)."""
        if self.batch_tokens is not None:
            return int(self.batch_tokens)
        return GPU_BATCH_TOKENS if self.on_gpu else self.batch_size * 128

    def _autocast(self) -> Any:
        import torch

        if self.dtype == "float32":
            return contextlib.nullcontext()
        return torch.autocast(device_type=self.device.split(":")[0], dtype=getattr(torch, self.dtype))

    # -- idf -----------------------------------------------------------------------------------------------

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        raise NotImplementedError

    def fit_idf(self, texts: Iterable[str]) -> None:
        """idf(t) = log((N + 1) / (df(t) + 1)) over the stated ``texts`` (torchmetrics' and bert-score's formula);
        df counts the texts whose (truncated) token ids contain t; a token never seen gets log(N + 1). Every
        text counts, repeats included, as in both libraries (a run passes its set of unique texts)."""
        corpus = sorted(texts)
        self.prepare()
        df: Counter[int] = Counter()
        for ids in self.tokenize(corpus):
            df.update(set(ids))
        n = len(corpus)
        self._idf_table = (n, {token: math.log((n + 1) / (count + 1)) for token, count in df.items()})
        self._idf_corpus = _digest(text.encode("utf-8") for text in corpus)

    def idf_weights(self, ids: Sequence[int]) -> np.ndarray:
        if not self.idf:
            return np.ones(len(ids))
        if self._idf_table is None:
            raise ValueError(f"{self.name}: idf=True needs fit_idf(texts) first")
        n, table = self._idf_table
        unseen = math.log(n + 1)
        return np.array([table.get(token, unseen) for token in ids], dtype=np.float64)

    # -- per-text vectors ----------------------------------------------------------------------------------

    def _encode(self, texts: Sequence[str]) -> list[Any]:
        raise NotImplementedError

    def _pack(self, vector: Any) -> bytes:
        raise NotImplementedError

    def _unpack(self, blob: bytes) -> Any:
        raise NotImplementedError

    def vectors(self, texts: Sequence[str]) -> list[Any]:
        """Per-text vectors from the cache where present, the rest encoded (in batches) and stored."""
        from metaeval.core.measures.cache import DistanceCache, text_digest

        found: dict[str, Any] = {}
        keys: dict[str, bytes] = {}
        if self.cache is not None and texts:
            key_list = DistanceCache.text_keys(self.text_key, [text_digest(text) for text in texts])
            keys = dict(zip(texts, key_list, strict=True))
            blobs = self.cache.get_vectors(key_list)
            for text, key in keys.items():
                if key in blobs:
                    found[text] = self._unpack(blobs[key])
            self.stats["texts_from_cache"] += len(found)
        todo = [text for text in texts if text not in found]
        if todo:
            self.prepare()
            started = time.perf_counter()
            encoded = self._encode(todo)
            self.stats["model_seconds"] += time.perf_counter() - started
            self.stats["texts_encoded"] += len(todo)
            found.update(zip(todo, encoded, strict=True))
            if self.cache is not None:
                writing = time.perf_counter()
                packed = [(keys[text], self._pack(vector)) for text, vector in zip(todo, encoded, strict=True)]
                self.cache.put_vectors(packed)
                self.stats["vector_write_seconds"] += time.perf_counter() - writing
                self.stats["vector_bytes"] += sum(len(blob) for _, blob in packed)
        return [found[text] for text in texts]

    def distances(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        out = np.empty(len(pairs), dtype=np.float64)
        for start in range(0, len(pairs), PAIR_CHUNK):
            chunk = pairs[start : start + PAIR_CHUNK]
            index: dict[str, int] = {}
            for a, b in chunk:
                index.setdefault(a, len(index))
                index.setdefault(b, len(index))
            vectors = self.vectors(list(index))
            ia = np.array([index[a] for a, _ in chunk], dtype=np.int64)
            ib = np.array([index[b] for _, b in chunk], dtype=np.int64)
            out[start : start + len(chunk)] = self._pair_distances(vectors, ia, ib)
        return out

    def _pair_distances(self, vectors: list[Any], ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        raise NotImplementedError


def _batches(
    items: Sequence[Any], lengths: Sequence[int], size: int, budget: int | None = None, same_length: bool = False
) -> list[list[Any]]:
    """Consecutive batches of ``items`` (sorted by length) with at most ``size`` items and at most ``budget``
    padded tokens (items x longest length; default ``size`` x 128), so long texts go in smaller batches and
    short ones are not padded to a long one; ``same_length``: a batch never mixes lengths (nothing padded)."""
    budget = budget if budget is not None else size * 128
    out: list[list[Any]] = []
    current: list[Any] = []
    longest = 0
    for item, length in zip(items, lengths, strict=True):
        wider = max(longest, length)
        new_length = same_length and bool(current) and length != longest
        if current and (new_length or len(current) >= size or wider * (len(current) + 1) > budget):
            out.append(current)
            current, wider = [], length
        current.append(item)
        longest = wider
    if current:
        out.append(current)
    return out


def _padded(matrices: Sequence[np.ndarray], length: int) -> np.ndarray:
    out = np.zeros((len(matrices), length, matrices[0].shape[1]), dtype=np.float32)
    for row, matrix in enumerate(matrices):
        out[row, : len(matrix)] = matrix
    return out


def _padded_1d(vectors: Sequence[np.ndarray], length: int) -> np.ndarray:
    out = np.zeros((len(vectors), length), dtype=np.float64)
    for row, vector in enumerate(vectors):
        out[row, : len(vector)] = vector
    return out
