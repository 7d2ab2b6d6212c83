"""GET /api/studies/{slug}/judges-vs-people/ (issue 32): the page's numbers as JSON, researchers only, JSON errors."""
from __future__ import annotations

import pytest

from survey import selectors
from tests.survey.bulk_judgments import add_human_judgments, add_llm_judgments, bulk_preference_study
from tests.survey.test_preference import build_dataset

pytestmark = pytest.mark.django_db


def test_the_api_gives_the_pages_numbers(researcher_api, api, plain_api):
    study = bulk_preference_study("vs-api")
    add_human_judgments(study, 3 * 9 * 2)
    add_llm_judgments(study, 9 * 2 * 2, repeats=2)
    url = f"/api/studies/{study.slug}/judges-vs-people/"
    assert api.get(url).status_code == 401 and plain_api.get(url).status_code == 403
    response = researcher_api.get(url)
    assert response.status_code == 200
    body = response.json()
    assert body["error"] is None and body["judges"] == ["bulk-judge-0"]
    assert set(body["tables"]) == {"agreement", "ppi", "alt_test", "matrix", "style"}
    assert body == selectors.study_versus(study=study)
    assert body["versions"][0]["column"] == "bulk-judge-0"


def test_json_errors(researcher_api):
    missing = researcher_api.get("/api/studies/nope/judges-vs-people/")
    assert missing.status_code == 404 and missing.json() == {"detail": 'No study "nope".'}
    from survey.models import Study
    rating = Study.objects.create(slug="vs-rating", title="r", dataset=build_dataset(name="vs-r-data"))
    conflict = researcher_api.get(f"/api/studies/{rating.slug}/judges-vs-people/")
    assert conflict.status_code == 409 and "collects ratings" in conflict.json()["detail"]


def test_sentence_studies_have_judge_runs_but_no_judges_vs_people(researcher_api, tmp_path):
    from tests.survey.test_sentence_preference import sentence_study

    study = sentence_study(tmp_path)
    assert researcher_api.get(f"/api/studies/{study.slug}/judge-runs/").json() == []
    refused = researcher_api.get(f"/api/studies/{study.slug}/judges-vs-people/")
    assert refused.status_code == 409 and "sentence preference study" in refused.json()["detail"]
