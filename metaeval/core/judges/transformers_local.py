"""A judge that is a local causal language model loaded with transformers (conventions sec. 20, item 6).

The model is a local folder holding ``config.json``, the weights and the tokenizer files (as written by
``save_pretrained``); nothing is downloaded (``local_files_only=True``). The prompt is the tokenizer's chat
template applied to the messages when it has one (with the generation prompt added), otherwise the messages
joined as ``role: content`` paragraphs ending with ``assistant:``. Decoding is greedy when ``temperature`` is 0,
otherwise sampling at that temperature; the reply is the decoded new tokens (special tokens skipped). Calls run
one at a time. Sampling is reproducible: the k-th call with a given prompt seeds torch with a number derived from
``seed``, the prompt and k, so the same plan gives the same replies whatever the thread timing.
"""
from __future__ import annotations

import hashlib
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from .base import JudgeConfigError, JudgeError

__all__ = ["TransformersJudge"]

HOW = ("pass --model-path a local folder holding config.json, the model weights (model.safetensors or "
       "pytorch_model.bin) and the tokenizer files, as written by save_pretrained(); models are never downloaded "
       "(e.g. run `huggingface-cli download ORG/MODEL --local-dir DIR` beforehand)")
_INPUTS = ("input_ids", "attention_mask")


class TransformersJudge:
    """A :class:`~metaeval.core.judges.base.Judge` running a local causal LM on ``device`` (default cpu)."""

    kind = "transformers"

    def __init__(self, model_path: str | Path, *, max_new_tokens: int = 8, temperature: float = 0.0,
                 seed: int = 0, device: str = "cpu", name: str | None = None) -> None:
        path = Path(model_path)
        if not path.is_dir() or not (path / "config.json").is_file():
            raise JudgeConfigError(f"{path}: not a model folder (no config.json); {HOW}")
        if max_new_tokens < 1 or temperature < 0:
            raise JudgeConfigError("max_new_tokens >= 1 and temperature >= 0 are required")
        try:
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError as exc:  # pragma: no cover - transformers is a dependency
            raise JudgeConfigError(f"the transformers judge needs transformers and torch ({exc})") from None
        try:
            self.tokenizer: Any = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
            model: Any = AutoModelForCausalLM.from_pretrained(str(path), local_files_only=True)
        except (OSError, ValueError, KeyError) as exc:
            raise JudgeConfigError(f"{path}: cannot load a causal language model ({exc}); {HOW}") from None
        self.model: Any = model.to(device).eval()
        self.path = path
        self.max_new_tokens = max_new_tokens
        self.temperature = temperature
        self.seed = seed
        self.device = device
        self.name = name or path.name
        self._lock = threading.Lock()
        self._calls: Counter[str] = Counter()
        config = self.model.config
        self.max_positions: int | None = getattr(config, "max_position_embeddings", None) or getattr(
            config, "n_positions", None)

    def describe(self) -> dict[str, object]:
        return {
            "kind": self.kind, "name": self.name, "model_path": str(self.path),
            "model_type": getattr(self.model.config, "model_type", None), "max_new_tokens": self.max_new_tokens,
            "temperature": self.temperature, "seed": self.seed, "device": self.device,
            "chat_template": bool(getattr(self.tokenizer, "chat_template", None)),
        }

    def prompt(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The prompt text for ``messages`` (chat template, or ``role: content`` paragraphs)."""
        if getattr(self.tokenizer, "chat_template", None):
            text = self.tokenizer.apply_chat_template([dict(m) for m in messages], tokenize=False,
                                                      add_generation_prompt=True)
            return str(text)
        return "\n\n".join(f"{m['role']}: {m['content']}" for m in messages) + "\n\nassistant:"

    def _call_seed(self, prompt: str) -> int:
        self._calls[prompt] += 1
        digest = hashlib.sha256(f"{self.seed}\0{self._calls[prompt]}\0{prompt}".encode()).digest()
        return int.from_bytes(digest[:4], "big")

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        import torch

        prompt = self.prompt(messages)
        with self._lock:
            seed = self._call_seed(prompt)
            encoded = self.tokenizer(prompt, return_tensors="pt", add_special_tokens=False)
            length = int(encoded["input_ids"].shape[1])
            if self.max_positions and length + self.max_new_tokens > self.max_positions:
                raise JudgeError(f"the prompt has {length} tokens; with {self.max_new_tokens} new tokens that is "
                                 f"more than the model's {self.max_positions} positions")
            pad = self.tokenizer.pad_token_id
            if pad is None:
                pad = self.tokenizer.eos_token_id
            settings: dict[str, Any] = {"max_new_tokens": self.max_new_tokens, "pad_token_id": pad}
            if self.temperature > 0:
                settings.update(do_sample=True, temperature=self.temperature, top_k=0, top_p=1.0)
            else:
                settings.update(do_sample=False)
            try:
                torch.manual_seed(seed)
                with torch.no_grad():
                    inputs = {k: encoded[k].to(self.device) for k in _INPUTS if k in encoded}
                    output = self.model.generate(**inputs, **settings)
            except (RuntimeError, ValueError) as exc:
                raise JudgeError(f"generation failed: {exc}") from None
        return str(self.tokenizer.decode(output[0, length:], skip_special_tokens=True))
