"""Judge endpoints: what the operator lets researchers' judge runs reach (docs/conventions.md sec. 21, item 8).

The operator (staff in the admin) configures :class:`~survey.models.JudgeEndpoint` rows: base URL, the models
researchers may pick, the NAME of the workers' environment variable holding the key, whether private network
addresses are allowed; or a local model folder. A researcher's judge run names an endpoint and sets only the
sampling settings (:data:`RESEARCHER_SETTINGS`); a base URL, a key variable, a model folder or a device in a
researcher's settings is refused. The worker builds the judge from the endpoint as it is when the run executes
(:func:`judge_for_run`) and checks it again, so an endpoint that was disabled, deleted or changed to something the
rules refuse stops its runs with a message.

The rules an endpoint's operator settings follow (its key variable, the addresses it may reach) are in
:mod:`survey.judge_policy`.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from django.db.models import QuerySet

from metaeval.core.judges.base import Judge, JudgeConfigError
from metaeval.core.judges.factory import check_judge_settings, make_judge
from survey.judge_policy import address_problem, endpoint_problems
from survey.models import JudgeEndpoint, JudgeRun

__all__ = [
    "OPERATOR_SETTINGS",
    "RESEARCHER_SETTINGS",
    "endpoint_find",
    "endpoints_available",
    "judge_for_run",
    "run_settings",
]

#: the settings a researcher may give per judge kind; everything else comes from the endpoint
RESEARCHER_SETTINGS: dict[str, tuple[str, ...]] = {
    "openai": ("model", "temperature", "max_tokens", "timeout", "retries", "backoff", "seed", "concurrency", "name"),
    "transformers": ("max_new_tokens", "temperature", "seed", "name"),
}
#: settings only the operator sets (on the endpoint); a researcher who gives one is told so
OPERATOR_SETTINGS = ("base_url", "api_key_env", "model_path", "device", "allow_private")

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
