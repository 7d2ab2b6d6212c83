"""The rules a judge endpoint's operator settings must follow (docs/conventions.md sec. 21, item 8): which key
variables it may name, which addresses it may reach. Plain functions of an endpoint's fields, so the model's
``clean`` and the services (:mod:`survey.judge_endpoints`) share them without importing each other.

Rules for the key variable (:func:`key_env_problem`): it ends in ``_API_KEY`` and matches
``settings.JUDGE_API_KEY_ENV_PATTERN`` (default ``[A-Z][A-Z0-9_]*_API_KEY``; an operator may narrow it, e.g. to
``(OPENAI|TOGETHER)_API_KEY``), and it never names a variable the platform itself reads (:data:`PLATFORM_ENV_NAMES`)
or one whose name says it holds a secret of another kind (:data:`SENSITIVE_WORDS`)."""
from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from metaeval.core.judges.base import JudgeConfigError
from metaeval.core.judges.netguard import AddressRefused, check_url

__all__ = [
    "KEY_ENV_SUFFIX",
    "PLATFORM_ENV_NAMES",
    "SENSITIVE_WORDS",
    "address_problem",
    "endpoint_problems",
    "key_env_problem",
]

#: environment variables the platform reads (config/settings.py and the numeric core): never a judge's key variable
PLATFORM_ENV_NAMES = frozenset({
    "ALLOWED_HOSTS", "API_LOGIN_RATE", "AXES_COOLOFF_MINUTES", "AXES_FAILURE_LIMIT", "CACHE_URL",
    "CELERY_BROKER_URL", "CELERY_EAGER", "CELERY_QUEUE", "CELERY_QUEUE_DIR", "CELERY_VISIBILITY_TIMEOUT",
    "CSRF_TRUSTED_ORIGINS", "DATABASE_URL", "DB_CONN_MAX_AGE", "DEBUG", "DEMO_ADMIN_PASSWORD",
    "DEMO_RESEARCHER_PASSWORD", "HF_HOME", "HF_HUB_CACHE", "HF_HUB_OFFLINE", "HSTS_INCLUDE_SUBDOMAINS", "HSTS_PRELOAD",
    "HSTS_SECONDS", "JUDGE_API_KEY_ENV_PATTERN", "LOG_FORMAT", "LOG_LEVEL", "METAEVAL_BERTSCORE_MODEL",
    "METAEVAL_ALLOWED_BASELINES", "METAEVAL_ALLOWED_MODELS", "METAEVAL_CACHE_DIR", "METAEVAL_CACHE_URL",
    "METAEVAL_INFOLM_MODEL", "METAEVAL_RUN_ATTEMPTS",
    "METAEVAL_RUN_LEASE_SECONDS", "METAEVAL_SHARD_HELPERS", "METAEVAL_SHARD_PAIRS", "METAEVAL_WORKER_CONCURRENCY",
    "METAEVAL_WORKER_MAX_MEMORY_MB", "NLTK_DATA", "SECRET_KEY", "SECURE_COOKIES", "SECURE_PROXY_SSL_HEADER",
    "SECURE_SSL_REDIRECT", "STATIC_ROOT", "TRUSTED_PROXY_COUNT", "TERM", "HOME", "PATH", "PWD", "USER",
})
#: a key variable whose name contains one of these is refused whatever the pattern says
SENSITIVE_WORDS = ("SECRET", "PASSWORD", "PASSWD", "DATABASE", "BROKER", "CREDENTIAL", "PRIVATE", "_URL")

_KEY_ENV_DEFAULT = r"[A-Z][A-Z0-9_]*_API_KEY"
#: every key variable ends so, whatever the pattern: the platform's own settings never do
KEY_ENV_SUFFIX = "_API_KEY"
_DEVICE = re.compile(r"cpu|cuda(:\d{1,2})?|mps")


def key_env_problem(name: str) -> str | None:
    """Why ``name`` may not be a judge's key variable, or None when it may (see the module docstring)."""
    pattern = str(getattr(settings, "JUDGE_API_KEY_ENV_PATTERN", "") or _KEY_ENV_DEFAULT)
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,99}", name):
        return f"{name!r} is not an environment variable name"
    if name.upper() in PLATFORM_ENV_NAMES:
        return f"{name} is one of the platform's own settings, never a judge's key"
    word = next((word for word in SENSITIVE_WORDS if word in name.upper()), None)
    if word:
        return f"{name} looks like a secret of another kind (it contains {word.strip('_')}), not a judge's API key"
    if not name.endswith(KEY_ENV_SUFFIX):
        return f"{name} does not end in {KEY_ENV_SUFFIX}, as every judge key variable must"
    if not re.fullmatch(pattern, name):
        return f"{name} does not match the allowed pattern {pattern} (JUDGE_API_KEY_ENV_PATTERN)"
    return None


def endpoint_problems(endpoint: Any) -> dict[str, str]:
    """Field -> what is wrong with an endpoint's operator settings (empty when it may be used)."""
    problems: dict[str, str] = {}
    if endpoint.kind == "openai":
        if not re.match(r"https?://[^/\s]+", endpoint.base_url.strip()):
            problems["base_url"] = "an http:// or https:// address is required for an OpenAI-compatible endpoint"
        if not endpoint.model_names:
            problems["model_choices"] = "name at least one model researchers may pick"
        elif any(len(name) > 200 or "\x00" in name for name in endpoint.model_names):
            problems["model_choices"] = "a model name is at most 200 characters, without NUL characters"
        if endpoint.api_key_env.strip():
            problem = key_env_problem(endpoint.api_key_env.strip())
            if problem:
                problems["api_key_env"] = problem
    elif endpoint.kind == "transformers":
        if not endpoint.model_path.strip():
            problems["model_path"] = "a model folder on the workers is required for a local model"
        if not _DEVICE.fullmatch(endpoint.device.strip() or "cpu"):
            problems["device"] = f"{endpoint.device!r}: use cpu, cuda, cuda:N or mps"
    else:
        problems["kind"] = f"{endpoint.kind!r} is not a judge endpoint kind"
    return problems



def address_problem(endpoint: Any, *, raising: bool = False) -> str | None:
    """Why an openai endpoint restricted to public addresses may not be used: its host resolves, now, to a
    loopback, private, link-local or reserved address (``netguard.check_url``); None otherwise. ``raising``: a
    :class:`JudgeConfigError` instead."""
    try:
        check_url(endpoint.base_url.strip())
    except AddressRefused as exc:
        if raising:
            raise JudgeConfigError(f"endpoint {endpoint.name}: {exc}") from None
        return str(exc)
    return None
