"""Bad input on the HTTP API: a JSON 4xx naming the problem (the field, where it can), never a 500 or an HTML page,
and nothing stored, on SQLite and PostgreSQL alike (PostgreSQL refuses NUL characters in text and integers beyond a
bigint, where SQLite kept or overflowed them). One test per class: NUL characters, nesting depth, integer range,
field length, body size."""
from __future__ import annotations

import json

import pytest

from metaeval.core.jsonsafe import MAX_JSON_DEPTH
from metaeval.core.options import SEED_MAX
from metaeval.models import MetaevalRun
from survey.models import JudgeRun
from tests.survey.test_preference import preference_study

pytestmark = pytest.mark.django_db


def _nested(depth: int, inner: object = 1) -> object:
    for _ in range(depth):
        inner = [inner]
    return inner


def _refused(response, status: int = 400) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    return response.json()


def test_nul_characters_in_the_address_the_body_and_the_credentials(researcher_api, api, rated_study):
    name = rated_study.dataset.name
    for url in ("/api/datasets/a%00b/", f"/api/runs/?dataset={name}%00", "/api/studies/?dataset=%00",
                f"/api/studies/{rated_study.slug}/ratings/?as=%00"):
        assert "NUL character" in _refused(researcher_api.get(url))["detail"], url
    assert "NUL character" in _refused(researcher_api.post("/api/runs/?x=%00", {"dataset": name},
                                                           format="json"))["detail"]
    for body, where in (({"dataset": "a\x00b"}, '"dataset"'), ({"dataset": name, "systems": ["A", "B\x00"]},
                                                                '"systems[1]"'),
                        ({"dataset": name, "measure_options": {"infolm": {"temperature": "\x00"}}},
                         '"measure_options.infolm.temperature"'),
                        ({"dataset": name, "report": {"n\x00": 1}, "kind": "report"}, 'a key of "report"')):
        detail = _refused(researcher_api.post("/api/runs/", body, format="json"))["detail"]
        assert detail.startswith("JSON refused: NUL character") and where in detail, detail
    for fmt in ("json", "multipart"):
        token = api.post("/api/token/", {"username": "research\x00er", "password": "x"}, format=fmt)
        assert token.status_code == 400 and "username" in json.dumps(token.json()), token.content
    assert not MetaevalRun.objects.exists()


def test_json_nested_too_deeply(researcher_api, rated_study):
    """A body nested deeper than MAX_JSON_DEPTH is a 400 (Python's decoder raised RecursionError beyond ~1000
    levels: a 500), on the run and the judge-run endpoints and the token view alike."""
    deep = "[" * 100_000 + "]" * 100_000
    study = preference_study(slug="deep-pref")
    for url in ("/api/runs/", f"/api/studies/{study.slug}/judge-runs/", "/api/token/"):
        detail = _refused(researcher_api.post(url, deep, content_type="application/json"))["detail"]
        assert detail == f"JSON refused: nested deeper than {MAX_JSON_DEPTH} levels.", (url, detail)
    body = {"dataset": rated_study.dataset.name, "kind": "report", "report": {"n_boot": _nested(MAX_JSON_DEPTH)}}
    detail = _refused(researcher_api.post("/api/runs/", body, format="json"))["detail"]
    assert detail.startswith(f'JSON refused: nested deeper than {MAX_JSON_DEPTH} levels at "report.n_boot[0][0]')
    # at the limit the body is read (and the value judged by its field)
    body["report"]["n_boot"] = _nested(MAX_JSON_DEPTH - 2)
    assert "n_boot" in str(_refused(researcher_api.post("/api/runs/", body, format="json")))
    assert not MetaevalRun.objects.exists() and not JudgeRun.objects.exists()


def test_integers_beyond_their_column(researcher_api, rated_study):
    """"seed": 2**70 was a bigint overflow (500); every integer the run request carries is bounded."""
    base = {"dataset": rated_study.dataset.name, "study": rated_study.slug}
    for seed in (2**70, SEED_MAX + 1, -1):
        errors = _refused(researcher_api.post("/api/runs/", {**base, "kind": "report", "seed": seed}, format="json"))
        assert list(errors) == ["seed"], errors
    for report, field in (({"n_boot": 2**70}, "report"), ({"stability_levels": [50, 2**64]}, "report")):
        errors = _refused(researcher_api.post("/api/runs/", {**base, "kind": "report", "report": report},
                                              format="json"))
        assert list(errors) == [field] and "must be an integer" in errors[field][0], errors
    errors = _refused(researcher_api.post("/api/runs/", {**base, "egises_decimals": 2**70}, format="json"))
    assert list(errors) == ["egises_decimals"], errors
    digits = json.dumps({"dataset": rated_study.dataset.name, "seed": 0}).replace("0}", "9" * 5000 + "}")
    detail = _refused(researcher_api.post("/api/runs/", digits, content_type="application/json"))["detail"]
    assert detail == "JSON refused: a number of more than 4300 digits."  # beyond what Python converts
    assert not MetaevalRun.objects.exists()
    made = researcher_api.post("/api/runs/", {**base, "kind": "report", "seed": SEED_MAX,
                                              "report": {"n_boot": 20, "n_permutations": 20, "stability_samples": 2}},
                               format="json")
    assert made.status_code == 201 and MetaevalRun.objects.get().seed == SEED_MAX


def test_names_longer_than_their_column(researcher_api, rated_study):
    """A name longer than the column it names is a 400 naming the field (not echoed back in full)."""
    long = "x" * 50_000
    for body, field in (({"dataset": long}, "dataset"),
                        ({"dataset": rated_study.dataset.name, "study": long}, "study"),
                        ({"dataset": rated_study.dataset.name, "systems": ["SysnameA", long]}, "systems"),
                        ({"dataset": rated_study.dataset.name, "kind": "report", "judgment_set": long},
                         "judgment_set")):
        response = researcher_api.post("/api/runs/", body, format="json")
        errors = _refused(response)
        assert list(errors) == [field] and "no more than 100 characters" in json.dumps(errors), errors
        assert len(response.content) < 1000
    assert not MetaevalRun.objects.exists()


def test_a_body_over_the_upload_limit_is_a_json_413(researcher_api, settings):
    """Over DATA_UPLOAD_MAX_MEMORY_SIZE (Django's 2.5 MB by default) the answer was Django's HTML 400 page."""
    big = json.dumps({"dataset": "x" * (settings.DATA_UPLOAD_MAX_MEMORY_SIZE + 10)})
    detail = _refused(researcher_api.post("/api/runs/", big, content_type="application/json"), 413)["detail"]
    assert "larger than this server accepts" in detail and str(settings.DATA_UPLOAD_MAX_MEMORY_SIZE) in detail
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    _refused(researcher_api.post("/api/runs/", {"dataset": "y" * 2000}, format="json"), 413)
    assert not MetaevalRun.objects.exists()
