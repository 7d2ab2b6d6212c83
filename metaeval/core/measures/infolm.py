"""InfoLM-alpha-beta (paper Appendix B.1 item 7, eq. 8): every content token of a text is masked in turn, all
masked copies of all texts run through the masked LM in large batches, the MLM head is applied only at the masked
position, and softmax(logits / T) is averaged into one vocabulary distribution per text; a pair's distance is the
AB-divergence of two cached distributions. The authors called torchmetrics' ``InfoLM`` on one pair at a time,
which re-runs the model for every pair and applies the vocabulary projection at every position of every copy.
"""
from __future__ import annotations

import os
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from metaeval.core.measures.base import MeasureUnavailable, round_like_python
from metaeval.core.measures.models import AUTHORS_INFOLM, INFOLM_ENV, ResolvedModel
from metaeval.core.measures.neural import NeuralMeasure, _batches, _one_cpu_thread, _switch, resolve_device

__all__ = ["InfoLM", "COMPILE_AFTER_TOKENS"]

#: ``compile=auto`` compiles the step once a measure has encoded this many tokens (about 8 s of eager work for the
#: BERT-base shape in bf16 on an H100, docs/guide/gpus.md), so small runs never pay the compiler's start
COMPILE_AFTER_TOKENS = 8_000_000


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
        compile: bool | str = "auto",
        recheck: bool | str = "auto",
    ) -> None:
        if compat:
            if idf or alpha != 1.0 or beta != 1.0 or temperature != 0.25 or dtype != "float32":
                raise ValueError("infolm compat uses the authors' settings (T=0.25, idf off, alpha=beta=1, float32)")
            max_length = 20 if max_length is None else max_length
        super().__init__(compat=compat, model=model, max_length=max_length, idf=idf, batch_size=batch_size,
                         batch_tokens=batch_tokens, device=device, dtype=dtype, recheck=recheck)
        self.compile_mode = _switch("compile", compile)
        self._fused: Any = None
        self._compile_error = ""
        self._tokens_seen = 0
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
        """Every content position of every text masked in turn, in batches (:meth:`_masked_batches` on a CPU,
        :meth:`_encode_by_length` on a GPU); the head's softmax(logits / T) at the masked position summed per text
        in float64 with the weights g_k."""
        if self.compat:
            return self._encode_as_torchmetrics(texts)
        if self.on_gpu:
            return list(self._encode_by_length(self.tokenize(texts)).float().cpu().numpy())
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
        text_lengths = [len(ids) for ids in ids_list]
        lengths = torch.tensor(text_lengths, dtype=torch.long)
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
        jobs.sort(key=lambda job: text_lengths[job[0]])
        job_lengths = [text_lengths[text] for text, _, _ in jobs]
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
            row_lengths = lengths[rows]
            batch_width = int(row_lengths.max())
            input_ids = padded[rows, :batch_width]
            input_ids[torch.arange(len(batch)), positions] = mask_id
            attention = None
            if not (by_length and bool((row_lengths == batch_width).all())):
                attention = send((torch.arange(batch_width)[None, :] < row_lengths[:, None]).long())
            batch_weights = torch.tensor([w for _, _, w in batch], dtype=torch.float64)
            yield send(input_ids), attention, send(positions), send(batch_weights), send(rows)

    def _length_jobs(self, ids_list: list[list[int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray,
                                                                 list[tuple[int, int, int]]]:
        """The masked copies of :meth:`_encode_by_length`, built once with array operations: (padded token ids
        (texts, width), text index, masked position and weight g_k per copy, batches). Copies are ordered by text
        then position, then stably by text length; a batch is a run of copies of one length L, at most
        ``token_budget // L`` of them: ``(start, end, L)``. The same batches as the former per-batch host loop."""
        mask_free = np.array(sorted(self._special), dtype=np.int64)
        lengths = np.array([len(ids) for ids in ids_list], dtype=np.int64)
        width = int(lengths.max()) if len(ids_list) else 0
        pad_id = int(self.tokenizer.pad_token_id or 0)
        padded = np.full((len(ids_list), width), pad_id, dtype=np.int64)
        for row, ids in enumerate(ids_list):
            padded[row, : len(ids)] = ids
        inside = np.arange(width)[None, :] < lengths[:, None]
        content = inside & ~np.isin(padded, mask_free)
        rows, positions = np.nonzero(content)  # row-major: text by text, positions in order
        if self.idf:
            weights = np.concatenate([self.idf_weights(ids) for ids in ids_list])[
                np.flatnonzero(content[inside])] if len(rows) else np.empty(0)
        else:
            weights = np.ones(len(rows), dtype=np.float64)
        order = np.argsort(lengths[rows], kind="stable")
        rows, positions, weights = rows[order], positions[order], weights[order]
        copy_lengths = lengths[rows]
        batches: list[tuple[int, int, int]] = []
        start = 0
        budget = self.token_budget
        while start < len(rows):
            length = int(copy_lengths[start])
            run_end = int(np.searchsorted(copy_lengths, length, side="right"))
            step = max(1, budget // length)
            for first in range(start, run_end, step):
                batches.append((first, min(first + step, run_end), length))
            start = run_end
        return padded, rows, positions, weights, batches

    def _encode_by_length(self, ids_list: list[list[int]]) -> Any:
        """The GPU path: (texts, vocab) float64 on the device. The padded token ids, copy indices and weights go to
        the device once; each batch's masked copies are gathered and masked there (no host work, no pinned
        staging, no synchronisation inside the loop), so the host only queues kernels and the card never waits
        for it. A batch holds copies of one length: no padding, no attention mask, and the encoder runs without
        the model's wrapper (:meth:`_probabilities`), whose padding check and mask test each stop the queue."""
        import torch

        padded, rows, positions, weights, batches = self._length_jobs(ids_list)
        vocab = int(self.model.config.vocab_size)
        total = torch.zeros((len(ids_list), vocab), dtype=torch.float64, device=self.device)
        weight_sum = torch.zeros(len(ids_list), dtype=torch.float64, device=self.device)
        if not batches:
            return total / weight_sum[:, None]
        padded_d = torch.from_numpy(padded).to(self.device)
        rows_d = torch.from_numpy(rows).to(self.device)
        positions_d = torch.from_numpy(positions).to(self.device)
        weights_d = torch.from_numpy(weights).to(self.device)
        index = torch.arange(max(end - start for start, end, _ in batches), device=self.device)
        mask_id = int(self.tokenizer.mask_token_id)
        with torch.inference_mode(), self._autocast():
            for start, end, length in batches:
                batch_rows, batch_positions = rows_d[start:end], positions_d[start:end]
                input_ids = padded_d[batch_rows, :length]
                input_ids[index[: end - start], batch_positions] = mask_id
                probs = self._probabilities(input_ids, batch_positions)
                batch_weights = weights_d[start:end]
                total.index_add_(0, batch_rows, probs.double() * batch_weights[:, None])
                weight_sum.index_add_(0, batch_rows, batch_weights)
        return total / weight_sum[:, None]

    def _probabilities(self, input_ids: Any, positions: Any) -> Any:
        """softmax(logits at the masked position / T) in float32 for unpadded copies (no attention mask), through
        the fused step when :meth:`_fused_step` built one, else eagerly."""
        self._tokens_seen += int(input_ids.numel())
        step = self._fused_step()
        if step is not None:
            try:
                return step(input_ids, positions)
            except Exception as exc:  # noqa: BLE001 - any compiler failure: fall back to the eager step
                self._fused = False
                self.stats["compile_failed"] = 1
                self._compile_error = f"{type(exc).__name__}: {exc}"[:500]
        return self._eager_step(input_ids, positions)

    def _eager_step(self, input_ids: Any, positions: Any) -> Any:
        import torch

        rows = torch.arange(len(positions), device=input_ids.device)
        direct = self._direct_encoder()
        if direct is not None and self._parts is not None:
            hidden = direct(input_ids)
            logits = self._parts[1](hidden[rows, positions])
        else:
            logits = self._masked_logits(input_ids, None, positions)
        return torch.softmax(logits.float() / self.temperature, dim=-1)

    def _direct_encoder(self) -> Any:
        """For BERT and RoBERTa layouts: embeddings then the layer stack, without the model's ``forward`` (which
        checks the ids for padding and the all-ones mask on the host, two device synchronisations per batch);
        with no mask the attention runs as SDPA's fused kernel. None for other layouts."""
        parts = self._parts
        if parts is None:
            return None
        encoder = parts[0]
        if not (hasattr(encoder, "embeddings") and hasattr(encoder, "encoder")):
            return None
        if getattr(self.model.config, "model_type", "") not in ("bert", "roberta", "xlm-roberta", "camembert"):
            return None

        def run(input_ids: Any) -> Any:
            return encoder.encoder(encoder.embeddings(input_ids=input_ids))[0]

        return run

    def _fused_step(self) -> Any:
        """``torch.compile`` of the eager step (element-wise work fused; dynamic shapes, so one graph serves every
        batch length) when ``compile`` is ``on``, or ``auto`` on a GPU for a BERT/RoBERTa layout once the run has
        encoded :data:`COMPILE_AFTER_TOKENS` tokens (compiling takes tens of seconds, more than a small run's whole
        encoding). A compiler failure falls back to the eager step for the rest of the run
        (``stats['compile_failed']``)."""
        if self._fused is False:
            return None
        if self._fused is None:
            if self.compile_mode == "off" or (self.compile_mode == "auto" and not (
                    self.on_gpu and self._direct_encoder() is not None)):
                self._fused = False
                return None
            if self.compile_mode == "auto" and self._tokens_seen < COMPILE_AFTER_TOKENS:
                return None
            import torch

            try:
                self._fused = torch.compile(self._eager_step, dynamic=True)
                self.stats["compiled"] = 1
            except Exception as exc:  # noqa: BLE001 - no compiler here: eager
                self._compile_error = f"{type(exc).__name__}: {exc}"[:500]
                self.stats["compile_failed"] = 1
                self._fused = False
                return None
        return self._fused

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
        # float32 (texts, vocab); the sums below run in float64, on the GPU when the model runs there
        where = resolve_device(self.device_request)
        matrix = torch.from_numpy(np.stack(vectors)).to(where)
        power_sum = torch.empty(len(vectors), dtype=torch.float64, device=where)
        step = 512 if where == "cpu" else 8192
        for start in range(0, len(vectors), step):
            power_sum[start : start + step] = (matrix[start : start + step].double() ** (a + b)).sum(dim=1)
        log_power = torch.log(power_sum)
        ia_t, ib_t = torch.from_numpy(ia).to(where), torch.from_numpy(ib).to(where)
        cross = torch.empty(len(ia), dtype=torch.float64, device=where)
        for start in range(0, len(ia), step):
            sl = slice(start, start + step)
            preds, target = matrix[ia_t[sl]].double(), matrix[ib_t[sl]].double()
            cross[sl] = ((target if a == 1.0 else target**a) * (preds if b == 1.0 else preds**b)).sum(dim=1)
        value = log_power[ib_t] / (b * (a + b)) + log_power[ia_t] / (a * (a + b)) - torch.log(cross) / (a * b)
        return value.cpu().numpy()

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
