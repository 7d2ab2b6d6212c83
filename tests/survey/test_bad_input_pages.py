"""Bad input on the pages (researcher pages, the participant pages, the admin): a 400 with a message naming the
field or ``file:line``, never a 500, nothing stored; on SQLite and PostgreSQL alike."""
from __future__ import annotations

import pytest
from django.contrib.auth.models import Group, User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from survey.models import JudgeRun
from tests.survey.test_judge_runs import cli_file, ranked_study

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher_client(db) -> Client:
    user = User.objects.create_user("bad-input-res", password="bad-input-pass-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _judge_upload(client: Client, slug: str, data: bytes, name: str = "judged.csv"):
    return client.post(f"/research/studies/{slug}/judges/",
                       {"action": "import", "file": SimpleUploadedFile(name, data, "text/csv")})


def test_a_refused_file_judge_upload_is_a_400_like_the_judgment_set_upload(researcher_client):
    """The LLM judges page's file upload: a bad file answers 400 with its problems on the page and stores nothing
    (it answered 200); a good one is stored and redirects."""
    study = ranked_study()
    bad = _judge_upload(researcher_client, study.slug, cli_file(study, extra="c-unknown,quality,x,y,model_a\n"),
                        "bad.csv")
    assert bad.status_code == 400
    assert "bad.csv:" in bad.content.decode() and not JudgeRun.objects.exists()
    empty = _judge_upload(researcher_client, study.slug, b"", "empty.csv")
    assert empty.status_code == 400 and not JudgeRun.objects.exists()
    good = _judge_upload(researcher_client, study.slug, cli_file(study))
    assert good.status_code == 302 and JudgeRun.objects.count() == 1
