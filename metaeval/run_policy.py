"""What a researcher's run may ask of a worker through the neural measures' options (docs/conventions.md sec. 21,
item 8; issue 28).

On the command line a user names any model folder or baseline file of their own machine. A run requested over the
platform's API is executed by a worker in the operator's deployment, so the options that name something on the
worker are limited to what the operator allows:

- ``model``: one of ``METAEVAL_ALLOWED_MODELS`` (comma-separated model folders or Hugging Face cache names), the
  models of ``METAEVAL_INFOLM_MODEL`` / ``METAEVAL_BERTSCORE_MODEL``, the offline all-MiniLM-L6-v2, or the authors'
  two models (``--compat authors``), which are looked up in the operator's Hugging Face cache;
- ``baseline`` (BERTScore's rescaling file): one of ``METAEVAL_ALLOWED_BASELINES`` (file paths). Any other path
  would make the worker open a file of the researcher's choice, and its first line would come back in the run's
  error message (``/proc/self/environ`` holds the worker's secrets);
- ``device``: ``auto``, ``cpu``, ``cuda``, ``cuda:N`` or ``mps``; the batch and length options are whole numbers
  within bounds, so one request cannot ask for unbounded memory.
"""
from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping

from django.conf import settings

from metaeval.core.measures.models import (
    AUTHORS_BERTSCORE,
    AUTHORS_INFOLM,
    BERTSCORE_ENV,
    INFOLM_ENV,
    OFFLINE_BERTSCORE,
)

__all__ = ["allowed_baselines", "allowed_models", "measure_options_problems"]

#: whole-number options and their inclusive bounds (None is allowed: the measure's default)
_INTEGERS = {"batch_size": (1, 1024), "batch_tokens": (1, 1_048_576), "max_length": (1, 4096), "layer": (-100, 100)}
#: float options and their inclusive bounds
_FLOATS = {"temperature": (1e-6, 100.0), "alpha": (-100.0, 100.0), "beta": (-100.0, 100.0)}
_DEVICE = re.compile(r"auto|cpu|cuda(:\d{1,2})?|mps")


def _listed(name: str) -> list[str]:
    value = getattr(settings, name, "") or ""
    items = value if isinstance(value, list | tuple) else str(value).split(",")
    return [str(item).strip() for item in items if str(item).strip()]


def allowed_models() -> set[str]:
    """The model specs a researcher's run may name (see the module docstring)."""
    found = set(_listed("METAEVAL_ALLOWED_MODELS")) | {OFFLINE_BERTSCORE, AUTHORS_INFOLM, AUTHORS_BERTSCORE}
    found |= {os.environ[name].strip() for name in (INFOLM_ENV, BERTSCORE_ENV) if os.environ.get(name, "").strip()}
    return found


def allowed_baselines() -> set[str]:
    """The BERTScore baseline files a researcher's run may name."""
    return set(_listed("METAEVAL_ALLOWED_BASELINES"))


def measure_options_problems(measure_options: Mapping[str, Mapping[str, object]]) -> list[str]:
    """``measure.option: what is wrong`` for each option a researcher may not set this way (empty when all may);
    the option names themselves are checked by ``metaeval.core.measures.registry``."""
    problems: list[str] = []
    for measure, options in measure_options.items():
        for key, value in options.items():
            problem = _problem(key, value)
            if problem:
                problems.append(f"{measure}.{key}: {problem}")
    return problems


def _problem(key: str, value: object) -> str | None:
    if value is None:
        return None
    if key == "model":
        allowed = allowed_models()
        if value not in allowed:
            return (f"{str(value)[:200]!r} is not a model the operator allows (one of {', '.join(sorted(allowed))}; "
                    "an operator adds more with METAEVAL_ALLOWED_MODELS)")
    elif key == "baseline":
        if value not in allowed_baselines():
            return "not a baseline file the operator allows (METAEVAL_ALLOWED_BASELINES)"
    elif key == "device":
        if not isinstance(value, str) or not _DEVICE.fullmatch(value):
            return "auto, cpu, cuda, cuda:N or mps"
    elif key in _INTEGERS:
        low, high = _INTEGERS[key]
        if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
            return f"a whole number from {low} to {high}"
    elif key in _FLOATS:
        low_f, high_f = _FLOATS[key]
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) \
                or not low_f <= value <= high_f:
            return f"a number from {low_f:g} to {high_f:g}"
    return None
