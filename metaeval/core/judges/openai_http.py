"""A judge behind any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp server, Ollama, ...)
(conventions sec. 20, item 6).

``POST {base_url}/chat/completions`` with ``{"model", "messages", "temperature", "max_tokens"[, "seed"]}`` and,
when ``api_key_env`` names an environment variable, ``Authorization: Bearer <its value>``. The key is read once,
never logged and never part of :meth:`OpenAIJudge.describe`. Retried (up to ``retries`` times after the first
try): timeouts, connection errors, HTTP 429 and 5xx, a reply that is not JSON or has no
``choices[0].message.content`` string. Not retried: any other 4xx (401, 400, 404, ...), a redirect (3xx: never
followed) and, with ``allow_private=False`` (the platform's endpoints), an address that is not globally routable
(:mod:`~metaeval.core.judges.netguard`). The wait before retry k
(0-based) is the reply's ``Retry-After`` (seconds or an HTTP date, at most :data:`MAX_RETRY_AFTER`) when
present, otherwise ``min(max_backoff, backoff * 2**k)`` scaled by a uniform factor in [0.5, 1) (jitter from a
``random.Random(seed)``).
"""
from __future__ import annotations

import email.utils
import os
import random
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import requests

from .base import JudgeConfigError, JudgeError
from .netguard import AddressRefused, guarded_session

__all__ = ["MAX_RETRY_AFTER", "OpenAIJudge"]

#: the longest ``Retry-After`` wait honoured, in seconds
MAX_RETRY_AFTER = 600.0


class _Retry(Exception):
    """A failed attempt worth retrying; ``wait`` is the server's ``Retry-After`` in seconds, if any."""

    def __init__(self, message: str, wait: float | None = None) -> None:
        super().__init__(message)
        self.wait = wait


class OpenAIJudge:
    """A :class:`~metaeval.core.judges.base.Judge` over HTTP; ``sleep`` and ``session`` are injectable (tests)."""

    kind = "openai"

    def __init__(
        self, base_url: str, model: str, api_key_env: str | None = None, *, temperature: float = 0.0,
        max_tokens: int = 8, timeout: float = 60.0, retries: int = 5, backoff: float = 1.0,
        max_backoff: float = 60.0, seed: int | None = None, name: str | None = None,
        environ: Mapping[str, str] | None = None, sleep: Callable[[float], None] = time.sleep,
        session_factory: Callable[[], Any] | None = None, allow_private: bool = True,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise JudgeConfigError(f"--base-url must start with http:// or https://, not {base_url!r}")
        if retries < 0 or timeout <= 0 or max_tokens < 1 or backoff < 0:
            raise JudgeConfigError("retries >= 0, timeout > 0, max_tokens >= 1 and backoff >= 0 are required")
        self.base_url = base_url.rstrip("/")
        self.url = self.base_url + "/chat/completions"
        self.model = model
        self.api_key_env = api_key_env or None
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.seed = seed
        self.name = name or model
        self._sleep = sleep
        self.allow_private = allow_private
        self._session_factory = session_factory or (requests.Session if allow_private else guarded_session)
        self._local = threading.local()
        self._rng = random.Random(seed)
        self._rng_lock = threading.Lock()
        self._key: str | None = None
        if self.api_key_env:
            environ = os.environ if environ is None else environ
            key = environ.get(self.api_key_env, "")
            if not key.strip():
                raise JudgeConfigError(
                    f"the environment variable {self.api_key_env} is not set or empty; it must hold the API key "
                    f"for {self.base_url} (export {self.api_key_env}=...), or leave out --api-key-env for a "
                    "server without authentication")
            self._key = key.strip()

    def __repr__(self) -> str:  # never show the key
        return f"OpenAIJudge(base_url={self.base_url!r}, model={self.model!r}, api_key_env={self.api_key_env!r})"

    def describe(self) -> dict[str, object]:
        """The settings to record: everything but the key itself (its variable's name is recorded)."""
        return {
            "kind": self.kind, "name": self.name, "base_url": self.base_url, "model": self.model,
            "api_key_env": self.api_key_env, "temperature": self.temperature, "max_tokens": self.max_tokens,
            "timeout": self.timeout, "retries": self.retries, "backoff": self.backoff,
            "max_backoff": self.max_backoff, "seed": self.seed, "allow_private": self.allow_private,
        }

    def _session(self) -> Any:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = self._session_factory()
        return session

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry ``attempt`` (0-based), as the module docstring says."""
        if retry_after is not None:
            return min(max(retry_after, 0.0), MAX_RETRY_AFTER)
        with self._rng_lock:
            factor = 0.5 + self._rng.random() / 2
        return min(self.max_backoff, self.backoff * 2 ** attempt) * factor

    def complete(self, messages: Sequence[Mapping[str, str]]) -> str:
        """The reply's ``choices[0].message.content``; :class:`JudgeError` once the retries are spent."""
        payload: dict[str, object] = {"model": self.model, "messages": [dict(m) for m in messages],
                                      "temperature": self.temperature, "max_tokens": self.max_tokens}
        if self.seed is not None:
            payload["seed"] = self.seed
        headers = {"Content-Type": "application/json"}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        failures: list[str] = []
        for attempt in range(self.retries + 1):
            try:
                return self._attempt(payload, headers)
            except _Retry as exc:
                failures.append(str(exc))
                if attempt == self.retries:
                    break
                self._sleep(self.delay(attempt, exc.wait))
        tries = self.retries + 1
        raise JudgeError(f"{tries} attempt{'s' if tries > 1 else ''} failed; last: {failures[-1]}")

    def _attempt(self, payload: Mapping[str, object], headers: Mapping[str, str]) -> str:
        try:
            response = self._session().post(self.url, json=payload, headers=headers, timeout=self.timeout,
                                            allow_redirects=False)
        except AddressRefused as exc:
            raise JudgeError(str(exc)) from None
        except requests.Timeout:
            raise _Retry(f"timed out after {self.timeout:g} s") from None
        except requests.ConnectionError as exc:
            raise _Retry(f"connection error: {type(exc).__name__}") from None
        except requests.RequestException as exc:
            raise JudgeError(f"request failed: {type(exc).__name__}: {exc}") from None
        status = response.status_code
        if status == 429 or status >= 500:
            raise _Retry(f"HTTP {status}{_snippet(response)}", _retry_after(response.headers.get("Retry-After")))
        if status >= 400:
            raise JudgeError(f"HTTP {status} (not retried){_snippet(response)}")
        if status >= 300:
            raise JudgeError(f"HTTP {status}: redirects are not followed; give the endpoint's final address")
        try:
            document = response.json()
        except ValueError:
            raise _Retry(f"HTTP {status}: the reply is not JSON{_snippet(response)}") from None
        try:
            content = document["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise _Retry("the reply has no choices[0].message.content") from None
        if not isinstance(content, str):
            raise _Retry(f"choices[0].message.content is {type(content).__name__}, not text")
        return content


def _snippet(response: Any, limit: int = 200) -> str:
    text = " ".join(str(getattr(response, "text", "") or "").split())
    return f": {text[:limit]}{'...' if len(text) > limit else ''}" if text else ""


def _retry_after(value: str | None) -> float | None:
    """Seconds from a ``Retry-After`` header (delta-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)

