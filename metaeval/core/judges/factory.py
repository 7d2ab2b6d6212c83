"""Judges from plain settings (conventions sec. 20, item 6): one definition of each judge's settings, their
defaults and checks, for ``python -m metaeval judge`` and the platform's judge runs.

``openai``: ``base_url`` and ``model`` (required), ``api_key_env`` (the NAME of the variable holding the key),
``temperature`` (0), ``max_tokens`` (8), ``timeout`` (60 s), ``retries`` (5), ``backoff`` (1 s), ``seed``,
``concurrency`` (4 requests at once). ``transformers``: ``model_path`` (required), ``max_new_tokens`` (8),
``temperature`` (0), ``seed`` (0), ``device`` (``cpu``); concurrency is always 1. ``name`` (both) is the
``judge`` column, by default the model name or the model folder's name.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .base import Judge, JudgeConfigError

__all__ = ["JUDGE_KINDS", "check_judge_settings", "judge_concurrency", "judge_name", "make_judge"]

JUDGE_KINDS = ("openai", "transformers")

#: per kind: setting -> (type, default, least value, most value); default None with a required flag below. Strings:
#: the most characters. The bounds keep one run's work on a worker bounded whoever starts it.
_FIELDS: dict[str, dict[str, tuple[type, Any, float | None, float]]] = {
    "openai": {
        "base_url": (str, None, None, 500), "model": (str, None, None, 200), "api_key_env": (str, None, None, 100),
        "temperature": (float, 0.0, 0, 2), "max_tokens": (int, 8, 1, 4096), "timeout": (float, 60.0, 0, 600),
        "retries": (int, 5, 0, 20), "backoff": (float, 1.0, 0, 60), "seed": (int, None, 0, 2**31 - 1),
        "concurrency": (int, 4, 1, 64), "name": (str, None, None, 200),
    },
    "transformers": {
        "model_path": (str, None, None, 500), "max_new_tokens": (int, 8, 1, 4096), "temperature": (float, 0.0, 0, 2),
        "seed": (int, 0, 0, 2**31 - 1), "device": (str, "cpu", None, 20), "name": (str, None, None, 200),
    },
}
_REQUIRED = {"openai": ("base_url", "model"), "transformers": ("model_path",)}


def check_judge_settings(kind: str, settings: Mapping[str, object]) -> dict[str, Any]:
    """The settings with defaults filled in and numbers as numbers; :class:`JudgeConfigError` naming each bad
    field (unknown kind or field, a missing required one, a wrong type, a value outside its bounds, a text too long
    or holding NUL, a base URL without http(s)://). Empty strings count as unset."""
    if kind not in _FIELDS:
        raise JudgeConfigError(f"judge kind must be one of {', '.join(JUDGE_KINDS)}, not {kind!r}")
    fields = _FIELDS[kind]
    problems = [f"{str(key)[:50]}: not a setting of the {kind} judge" for key in settings if key not in fields]
    out: dict[str, Any] = {}
    for key, (kind_of, default, least, most) in fields.items():
        value = settings.get(key)
        if value is None or (isinstance(value, str) and not value.strip()):
            if key in _REQUIRED[kind]:
                problems.append(f"{key}: required for the {kind} judge")
            out[key] = default
            continue
        try:
            out[key] = _convert(value, kind_of)
        except (TypeError, ValueError, OverflowError):
            problems.append(f"{key}: expected {'a whole number' if kind_of is int else kind_of.__name__}, "
                            f"found {_show(value)}")
            continue
        if kind_of is str:
            if len(out[key]) > most:
                problems.append(f"{key}: at most {_number(most)} characters, not {len(out[key])}")
            elif "\x00" in out[key]:
                problems.append(f"{key}: must not contain NUL characters")
            continue
        if least is not None and (out[key] < least or (key in ("timeout",) and out[key] <= least)):
            problems.append(f"{key}: must be {'above' if key == 'timeout' else 'at least'} {least:g}, "
                            f"not {out[key]}")
        elif out[key] > most:
            problems.append(f"{key}: must be at most {_number(most)}, not {_show(out[key])}")
    if kind == "openai" and out.get("base_url") and not str(out["base_url"]).startswith(("http://", "https://")):
        problems.append(f"base_url: must start with http:// or https://, not {_show(out['base_url'])}")
    if problems:
        raise JudgeConfigError("; ".join(problems))
    return out


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _show(value: object) -> str:
    """A refused value in a message, shortened: a researcher's 50 MB string is not echoed back."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _convert(value: object, kind_of: type) -> object:
    if kind_of is str:
        if not isinstance(value, str):
            raise TypeError
        return value.strip()
    if isinstance(value, bool):
        raise TypeError
    if kind_of is int:
        number = float(value) if isinstance(value, str) else value
        if not isinstance(number, int | float) or not float(number).is_integer():
            raise ValueError
        return int(number)
    number = float(value) if isinstance(value, str | int | float) else math.nan
    if not math.isfinite(number):
        raise ValueError
    return number


def judge_name(kind: str, settings: Mapping[str, Any]) -> str:
    """The ``judge`` column: ``name``, else the model name (openai) or the model folder's name (transformers)."""
    if settings.get("name"):
        return str(settings["name"])
    if kind == "openai":
        return str(settings["model"])
    return Path(str(settings["model_path"])).name


def judge_concurrency(kind: str, settings: Mapping[str, Any]) -> int:
    """Requests at once: the openai judge's ``concurrency``; 1 for a local model."""
    return int(settings.get("concurrency") or 4) if kind == "openai" else 1


def make_judge(kind: str, settings: Mapping[str, object], *, allow_private: bool = True) -> Judge:
    """The judge of ``kind`` with :func:`check_judge_settings`'s settings. Reads the API key variable and loads a
    local model, so a missing key or model folder is a :class:`JudgeConfigError` saying how to provide it.
    ``allow_private=False`` (the platform's endpoints unless the operator allows it) lets the openai judge reach
    globally routable addresses only (:mod:`~metaeval.core.judges.netguard`)."""
    checked = check_judge_settings(kind, settings)
    name = judge_name(kind, checked)
    if kind == "openai":
        from .openai_http import OpenAIJudge

        return OpenAIJudge(checked["base_url"], checked["model"], checked["api_key_env"],
                           temperature=checked["temperature"], max_tokens=checked["max_tokens"],
                           timeout=checked["timeout"], retries=checked["retries"], backoff=checked["backoff"],
                           seed=checked["seed"], name=name, allow_private=allow_private)
    from .transformers_local import TransformersJudge

    return TransformersJudge(checked["model_path"], max_new_tokens=checked["max_new_tokens"],
                             temperature=checked["temperature"], seed=checked["seed"], device=checked["device"],
                             name=name)
