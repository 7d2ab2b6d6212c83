"""Judge endpoints: what the operator lets researchers' judge runs reach (docs/conventions.md sec. 21, item 8).

The operator (staff in the admin) configures :class:`~survey.models.JudgeEndpoint` rows: base URL, the models
researchers may pick, the NAME of the workers' environment variable holding the key, whether private network
addresses are allowed; or a local model folder. A researcher's judge run names an endpoint and sets only the
sampling settings (:data:`RESEARCHER_SETTINGS`); a base URL, a key variable, a model folder or a device in a
researcher's settings is refused. The worker builds the judge from the endpoint as it is when the run executes
(:func:`judge_for_run`) and checks it again, so an endpoint that was disabled, deleted or changed to something the
rules refuse stops its runs with a message.

Rules for the key variable (:func:`key_env_problem`): it ends in ``_API_KEY`` and matches
``settings.JUDGE_API_KEY_ENV_PATTERN`` (default ``[A-Z][A-Z0-9_]*_API_KEY``; an operator may narrow it, e.g. to
``(OPENAI|TOGETHER)_API_KEY``), and it never names a variable the platform itself reads (:data:`PLATFORM_ENV_NAMES`)
or one whose name says it holds a secret of another kind (:data:`SENSITIVE_WORDS`).
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from metaeval.core.judges.base import Judge, JudgeConfigError
from metaeval.core.judges.factory import check_judge_settings, make_judge
from metaeval.core.judges.netguard import AddressRefused, check_url
from survey.models import JudgeEndpoint, JudgeRun

__all__ = [
    "OPERATOR_SETTINGS",
    "address_problem",
    "PLATFORM_ENV_NAMES",
    "RESEARCHER_SETTINGS",
    "SENSITIVE_WORDS",
    "endpoint_find",
    "endpoint_problems",
    "endpoints_available",
    "judge_for_run",
    "key_env_problem",
    "run_settings",
]

#: the settings a researcher may give per judge kind; everything else comes from the endpoint
RESEARCHER_SETTINGS: dict[str, tuple[str, ...]] = {
    "openai": ("model", "temperature", "max_tokens", "timeout", "retries", "backoff", "seed", "concurrency", "name"),
    "transformers": ("max_new_tokens", "temperature", "seed", "name"),
}
#: settings only the operator sets (on the endpoint); a researcher who gives one is told so
OPERATOR_SETTINGS = ("base_url", "api_key_env", "model_path", "device", "allow_private")

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


def endpoint_problems(endpoint: JudgeEndpoint) -> dict[str, str]:
    """Field -> what is wrong with an endpoint's operator settings (empty when it may be used)."""
    problems: dict[str, str] = {}
    if endpoint.kind == JudgeEndpoint.Kind.OPENAI:
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
    elif endpoint.kind == JudgeEndpoint.Kind.TRANSFORMERS:
        if not endpoint.model_path.strip():
            problems["model_path"] = "a model folder on the workers is required for a local model"
        if not _DEVICE.fullmatch(endpoint.device.strip() or "cpu"):
            problems["device"] = f"{endpoint.device!r}: use cpu, cuda, cuda:N or mps"
    else:
        problems["kind"] = f"{endpoint.kind!r} is not a judge endpoint kind"
    return problems


def endpoints_available() -> QuerySet[JudgeEndpoint]:
    """The enabled endpoints researchers may choose, by name."""
    return JudgeEndpoint.objects.filter(enabled=True).order_by("name")


def endpoint_find(name: object) -> JudgeEndpoint:
    """The enabled endpoint called ``name``; :class:`JudgeConfigError` naming the ones there are otherwise."""
    found = endpoints_available().filter(name=str(name)).first() if isinstance(name, str) and name else None
    if found is None:
        known = ", ".join(endpoints_available().values_list("name", flat=True))
        hint = f"choose one of: {known}" if known else "none is configured yet: an administrator adds them in the " \
            "admin (Judge endpoints)"
        raise JudgeConfigError(f"endpoint: no enabled judge endpoint {str(name)[:100]!r}; {hint}")
    return found


def _merged(endpoint: JudgeEndpoint, chosen: Mapping[str, object]) -> dict[str, object]:
    """The endpoint's operator settings with the researcher's ``chosen`` ones (already limited to theirs)."""
    if endpoint.kind == JudgeEndpoint.Kind.OPENAI:
        return {**chosen, "base_url": endpoint.base_url.strip(), "api_key_env": endpoint.api_key_env.strip()}
    return {**chosen, "model_path": endpoint.model_path.strip(), "device": endpoint.device.strip() or "cpu"}


def run_settings(endpoint: JudgeEndpoint, chosen: Mapping[str, object]) -> dict[str, Any]:
    """The settings a run over ``endpoint`` stores: the researcher's ``chosen`` settings checked
    (``check_judge_settings``) and the endpoint's operator settings for the record, under ``endpoint``.
    :class:`JudgeConfigError` naming each refused setting: one only the operator sets, one the kind does not take,
    a model the endpoint does not offer, a concurrency above the endpoint's, or the endpoint's own problems."""
    kind = str(endpoint.kind)
    allowed = RESEARCHER_SETTINGS[kind]
    problems = [f"{key}: set by the operator on the judge endpoint, not per run" for key in chosen
                if key in OPERATOR_SETTINGS]
    problems += [f"{key}: not a setting of the {kind} judge (a run takes {', '.join(allowed)})" for key in chosen
                 if key not in allowed and key not in OPERATOR_SETTINGS]
    broken = endpoint_problems(endpoint)
    problems += [f"endpoint {endpoint.name}: {field}: {message}" for field, message in broken.items()]
    if problems:
        raise JudgeConfigError("; ".join(problems))
    picked = {key: value for key, value in chosen.items() if key in allowed}
    if kind == JudgeEndpoint.Kind.OPENAI:
        model = picked.get("model") or endpoint.model_names[0]
        if model not in endpoint.model_names:
            raise JudgeConfigError(f"model: {str(model)[:200]!r} is not offered by endpoint {endpoint.name} "
                                   f"(it offers {', '.join(endpoint.model_names)})")
        picked["model"] = model
    checked = check_judge_settings(kind, _merged(endpoint, picked))
    if kind == JudgeEndpoint.Kind.OPENAI and checked["concurrency"] > endpoint.max_concurrency:
        raise JudgeConfigError(f"concurrency: at most {endpoint.max_concurrency} for endpoint {endpoint.name}, "
                               f"not {checked['concurrency']}")
    return {"endpoint": endpoint.name, **checked}


def judge_for_run(run: JudgeRun) -> Judge:
    """The judge of a stored ``openai``/``transformers`` run, built on the worker from its endpoint as it is now
    and the researcher's stored settings (:func:`run_settings` again). :class:`JudgeConfigError` when the run has
    no endpoint (made before endpoints existed), or it was disabled, deleted or no longer passes the rules."""
    stored = dict(run.judge_settings or {})
    name = stored.get("endpoint")
    if not name:
        raise JudgeConfigError("this run was started with free judge settings, which the platform no longer "
                               "accepts; start a new run on one of the operator's judge endpoints")
    endpoint = endpoint_find(name)
    if str(endpoint.kind) != run.kind:
        raise JudgeConfigError(f"endpoint {endpoint.name} is now a {endpoint.kind} endpoint; this run is {run.kind}")
    chosen = {key: value for key, value in stored.items() if key in RESEARCHER_SETTINGS[run.kind]}
    checked = run_settings(endpoint, chosen)
    checked.pop("endpoint")
    if run.kind == JudgeEndpoint.Kind.OPENAI and not endpoint.allow_private:
        address_problem(endpoint, raising=True)
    return make_judge(run.kind, checked, allow_private=endpoint.allow_private)


def address_problem(endpoint: JudgeEndpoint, *, raising: bool = False) -> str | None:
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
