"""Participant flow through the test client (no JavaScript), crowd parameters, researcher access."""
from __future__ import annotations

import csv
import io
import json
import re

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from django.urls import reverse

from survey.models import Assignment, Participant, Rating
from tests.conftest import build_study

pytestmark = pytest.mark.django_db


def consent(client: Client, slug: str, query: str = "") -> Participant:
    page = client.get(f"/s/{slug}/{query}")
    assert page.status_code == 200
    hidden = dict(re.findall(r'name="(external_\w+)" value="([^"]*)"', page.content.decode()))
    response = client.post(f"/s/{slug}/", {"consent": "on", **hidden})
    assert response.status_code == 302 and response["Location"] == f"/s/{slug}/about/"
    return Participant.objects.latest("id")


def start(client: Client, slug: str) -> Assignment:
    response = client.post(f"/s/{slug}/start/")
    assert response.status_code == 302
    public_id = response["Location"].strip("/").split("/")[-1]
    return Assignment.objects.get(public_id=public_id)


def field_names(html: str) -> list[str]:
    return re.findall(r'type="radio" name="([^"]+)" value="1"', html)


def test_full_flow_without_javascript(study):
    client = Client(enforce_csrf_checks=False)
    participant = consent(client, study.slug)
    r = client.post(f"/s/{study.slug}/about/", {"name": "Ada", "gender": "female", "occupation": "grad"})
    assert r["Location"] == f"/s/{study.slug}/instructions/"
    participant.refresh_from_db()
    assert (participant.name, participant.gender, participant.occupation) == ("Ada", "female", "grad")
    page = client.get(f"/s/{study.slug}/instructions/")
    for label in study.scale_labels:
        assert label in page.content.decode()
    assignment = start(client, study.slug)
    page = client.get(f"/q/{assignment.public_id}/")
    html = page.content.decode()
    names = field_names(html)
    assert names == [e["key"] for e in assignment.presentation]  # shown in the recorded order
    assert "Pair 1 of 6" in html and "Pair 6 of 6" in html
    # an incomplete submission is rejected with a message and keeps what was chosen
    partial = {names[0]: "2", names[1]: "6"}
    r = client.post(f"/q/{assignment.public_id}/", partial)
    assert r.status_code == 400
    assert "4 of 6 pairs need a valid rating; nothing was saved." in r.content.decode()
    assert not Rating.objects.exists()
    assert re.search(rf'name="{re.escape(names[1])}" value="6" required checked', r.content.decode())
    answers = {name: str(1 + i % 6) for i, name in enumerate(names)}
    r = client.post(f"/q/{assignment.public_id}/", answers)
    assert r.status_code == 302 and r["Location"] == f"/q/{assignment.public_id}/done/"
    done = client.get(r["Location"]).content.decode()
    assignment.refresh_from_db()
    assert assignment.completion_code in done
    # the back button / a replayed POST changes nothing
    r = client.post(f"/q/{assignment.public_id}/", {name: "1" for name in names})
    assert r.status_code == 302
    assert sorted(Rating.objects.values_list("value", flat=True)) == sorted(int(v) for v in answers.values())
    # offer of the next questionnaire
    nxt = start(client, study.slug)
    assert nxt.pk != assignment.pk and nxt.participant_id == participant.pk


def test_skip_demographics_and_resume_live_assignment(study):
    client = Client()
    consent(client, study.slug)
    r = client.post(f"/s/{study.slug}/about/", {"skip": "1"})
    assert r["Location"] == f"/s/{study.slug}/instructions/"
    first = start(client, study.slug)
    assert start(client, study.slug).pk == first.pk


def test_pages_need_consent_and_own_assignment(study):
    stranger = Client()
    assert stranger.get(f"/s/{study.slug}/instructions/")["Location"] == f"/s/{study.slug}/"
    assert stranger.post(f"/s/{study.slug}/start/")["Location"] == f"/s/{study.slug}/"
    owner = Client()
    consent(owner, study.slug)
    a = start(owner, study.slug)
    assert stranger.get(f"/q/{a.public_id}/").status_code == 404
    other = Client()
    consent(other, study.slug)
    assert other.get(f"/q/{a.public_id}/").status_code == 404
    assert other.get("/q/not-a-real-id/").status_code == 404
    assert stranger.post(f"/s/{study.slug}/", {}).status_code == 400  # consent box is required


def test_csrf_is_enforced_on_participant_posts(study):
    client = Client(enforce_csrf_checks=True)
    client.get(f"/s/{study.slug}/")
    assert client.post(f"/s/{study.slug}/", {"consent": "on"}).status_code == 403


def test_crowd_id_from_url_and_completion_redirect(dataset):
    study = build_study(dataset, slug="crowd", completion_url="https://crowd.example/done?cc={code}&w={pid}")
    client = Client()
    participant = consent(client, study.slug, "?PROLIFIC_PID=abc123&STUDY_ID=s1")
    assert (participant.external_id, participant.external_source) == ("abc123", "prolific")
    a = start(client, study.slug)
    client.post(f"/q/{a.public_id}/", {e["key"]: "3" for e in a.presentation})
    a.refresh_from_db()
    done = client.get(f"/q/{a.public_id}/done/").content.decode()
    assert reverse("survey:finish", args=[a.public_id]) in done
    r = client.get(f"/q/{a.public_id}/finish/")
    assert r.status_code == 302 and r["Location"] == f"https://crowd.example/done?cc={a.completion_code}&w=abc123"


def test_an_over_long_crowd_id_is_reported_not_cut(dataset):
    """A crowd id longer than we can record: the consent page says so at once (the id is not silently cut, which
    would lose the participant's payment), and consenting anyway shows the message instead of the same page."""
    study = build_study(dataset, slug="longid")
    client = Client()
    long_id = "x" * 201
    page = client.get(f"/s/{study.slug}/?PROLIFIC_PID={long_id}").content.decode()
    assert "longer than 200 characters" in page and f'value="{long_id}"' in page
    again = client.post(f"/s/{study.slug}/", {"consent": "on", "external_id": long_id, "external_source": "prolific"})
    assert again.status_code == 400 and "longer than 200 characters" in again.content.decode()
    assert not Participant.objects.filter(study=study).exists()
    ok = client.get(f"/s/{study.slug}/?PROLIFIC_PID={'x' * 200}").content.decode()
    assert "longer than" not in ok


def test_a_rating_sent_twice_in_one_submission_is_refused(study):
    """``k=7&k=2``: not "the last one wins" but an error on that pair; nothing is stored."""
    client = Client()
    consent(client, study.slug)
    a = start(client, study.slug)
    first = a.presentation[0]["key"]
    data = {e["key"]: "3" for e in a.presentation}
    body = "&".join(f"{key}={value}" for key, value in data.items()) + f"&{first}=5"
    response = client.post(f"/q/{a.public_id}/", body, content_type="application/x-www-form-urlencoded")
    assert response.status_code == 400 and "answered 2 times in one submission" in response.content.decode()
    assert not Rating.objects.filter(assignment=a).exists()
    a.refresh_from_db()
    assert a.completed_at is None


def test_questionnaire_page_is_blind(study):
    client = Client()
    consent(client, study.slug)
    a = start(client, study.slug)
    html = client.get(f"/q/{a.public_id}/").content.decode()
    for name in list(study.systems.values_list("name", flat=True)):
        assert name not in html
    # every field name is the CSRF token or one of the assignment's random per-pair keys (which encode nothing:
    # a key can contain digits by chance, so matching item ids inside keys would be flaky)
    keys = {e["key"] for e in a.presentation}
    names = set(re.findall(r'name="([^"]*)"', html)) - {"csrfmiddlewaretoken", "viewport"}
    assert names == keys
    assert not keys & {str(e["item"]) for e in a.presentation}
    assert "reference" not in html.lower() and "user" not in html.lower().replace("user-scalable", "")


@pytest.fixture
def researcher(db) -> User:
    user = User.objects.create_user("res", password="pw-for-tests-1")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    return user


def test_research_pages_need_login_and_role(study, researcher):
    anonymous = Client()
    for url in ["/research/", f"/research/studies/{study.slug}/", f"/research/studies/{study.slug}/ratings.csv"]:
        r = anonymous.get(url)
        assert r.status_code == 302 and r["Location"].startswith("/accounts/login/")
    plain = Client()
    User.objects.create_user("plain", password="pw-for-tests-2")
    plain.force_login(User.objects.get(username="plain"))
    assert plain.get("/research/").status_code == 403
    assert plain.get(f"/research/studies/{study.slug}/ratings.csv").status_code == 403
    client = Client()
    client.force_login(User.objects.get(username="res"))
    assert client.get("/research/").status_code == 200
    assert study.title in client.get(f"/research/studies/{study.slug}/").content.decode()
    assert client.get(f"/research/studies/{study.slug}/ratings.xml").status_code == 400


def test_ratings_download_layout(study, researcher):
    participant_client = Client()
    consent(participant_client, study.slug)
    a = start(participant_client, study.slug)
    participant_client.post(f"/q/{a.public_id}/", {e["key"]: "5" for e in a.presentation})
    client = Client()
    client.force_login(User.objects.get(username="res"))
    r = client.get(f"/research/studies/{study.slug}/ratings.csv")
    assert r["Content-Disposition"] == f'attachment; filename="{study.slug}-ratings.csv"'
    rows = list(csv.DictReader(io.StringIO(r.getvalue().decode())))
    assert len(rows) == 6
    assert list(rows[0])[:5] == ["doc_id", "system", "uid1", "uid2", "rating"]
    q = a.questionnaire
    assert {row["system"] for row in rows} == set(q.items.values_list("system__name", flat=True))
    assert all((row["doc_id"], row["uid1"], row["uid2"]) == (q.document.external_id, q.reader_j.external_id,
                                                             q.reader_k.external_id) for row in rows)
    r = client.get(f"/research/studies/{study.slug}/ratings.jsonl")
    records = [json.loads(line) for line in r.getvalue().decode().splitlines()]
    assert len(records) == 6 and all(rec["rating"] == 5 for rec in records)


def test_participant_pages_query_counts(study, django_assert_max_num_queries):
    """The flow's database work per page stays what the load figures (docs/guide/deploy.md) rest on (session,
    participant and page queries); a change that adds a query per page shows here, not only as a slower load test."""
    client = Client()
    consent(client, study.slug)
    # study, session, participant, live hold, candidates, locked questionnaire, its slots, items, insert; and the
    # begin/commit of two transactions
    with django_assert_max_num_queries(13):
        url = client.post(f"/s/{study.slug}/start/")["Location"]
    assignment = Assignment.objects.get(public_id=url.strip("/").split("/")[-1])
    with django_assert_max_num_queries(5):  # assignment, session, participant, items, sets done
        page = client.get(url)
    with django_assert_max_num_queries(8):
        response = client.post(url, {name: "4" for name in field_names(page.content.decode())})
    assert response.status_code == 302 and Rating.objects.filter(assignment=assignment).count()


def test_with_a_shared_cache_a_participant_page_reads_no_session_row(study, settings):
    """CACHE_URL on Redis selects cached_db sessions: written to the database and the cache, read from the cache."""
    from django.core.cache import caches
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    from config.settings import _caches, _session_engine

    assert _session_engine("") == "django.contrib.sessions.backends.db"
    settings.CACHES = _caches("redis://127.0.0.1:6379/13")
    settings.SESSION_ENGINE = _session_engine("redis://127.0.0.1:6379/13")
    caches["default"].clear()
    try:
        client = Client()
        consent(client, study.slug)
        assignment = start(client, study.slug)
        with CaptureQueriesContext(connection) as queries:
            page = client.get(f"/q/{assignment.public_id}/")
        assert page.status_code == 200 and len(field_names(page.content.decode())) == len(assignment.presentation)
        assert not [q for q in queries.captured_queries if "django_session" in q["sql"]]
        from django.contrib.sessions.models import Session

        assert Session.objects.filter(session_key=client.session.session_key).exists()  # also stored for good
    finally:
        caches["default"].clear()


def _stat(html: str, key: str) -> int:
    return int(re.search(rf'data-stat="{key}">(\d+)<', html).group(1))


def test_dashboard_counts_questionnaires_with_a_free_slot(dataset, researcher):
    """Every questionnaire held once of two slots still has a free slot (the old "open" said 0); one rater each:
    a submitted set is complete, a live hold takes the only slot, an expired hold frees it again."""
    from datetime import timedelta

    from django.utils import timezone

    from survey import selectors, services
    from tests.conftest import full_answers

    two = build_study(dataset, slug="two", raters=2)
    total = two.questionnaires.count()
    for _ in range(total):
        services.assignment_claim(participant=services.participant_register(study=two))
    assert Assignment.objects.filter(questionnaire__study=two).values("questionnaire").distinct().count() == total
    progress = selectors.study_progress(two)
    assert (progress.complete, progress.all_slots_taken, progress.with_free_slot) == (0, 0, total)
    assert progress.free_slots == total

    one = build_study(dataset, slug="one", raters=1)
    p1 = services.participant_register(study=one)
    a1 = services.assignment_claim(participant=p1)
    services.ratings_submit(assignment_public_id=a1.public_id, participant=p1, values=full_answers(a1))
    a2 = services.assignment_claim(participant=services.participant_register(study=one))
    n = one.questionnaires.count()
    progress = selectors.study_progress(one)
    assert (progress.complete, progress.all_slots_taken, progress.with_free_slot, progress.free_slots) == (
        1, 1, n - 2, n - 2
    )
    client = Client()
    client.force_login(researcher)
    html = client.get(f"/research/studies/{one.slug}/").content.decode()
    assert _stat(html, "complete") == 1 and _stat(html, "all_slots_taken") == 1
    assert _stat(html, "with_free_slot") == n - 2 and "with a free slot" in html
    home = client.get("/research/").content.decode()
    assert "With a free slot" in home and "All slots taken" in home and "<th>Open</th>" not in home
    assert f"<td>{total}</td><td>0</td><td>0</td><td>{total}</td>" in home  # study "two": every one has a slot

    Assignment.objects.filter(pk=a2.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    progress = selectors.study_progress(one)
    assert (progress.all_slots_taken, progress.with_free_slot) == (0, n - 1)
    data = client.get(f"/research/studies/{one.slug}/progress.json").json()
    assert data["with_free_slot"] == n - 1 and "open" not in data and "in_progress" not in data


def test_participant_pages_are_never_cached_and_a_resubmit_says_nothing_changed(study):
    """Back after submitting asks the server again (no-store), and a form posted again to a completed set lands on
    the thank-you page with a message that nothing was changed (the ratings stay as first sent)."""
    client = Client()
    consent(client, study.slug)
    a = start(client, study.slug)
    names = [e["key"] for e in a.presentation]
    for response in [
        client.get(f"/s/{study.slug}/instructions/"),
        client.get(f"/q/{a.public_id}/"),
        client.post(f"/q/{a.public_id}/", {names[0]: "2"}),  # rejected: 400, not to be replayed from the cache
    ]:
        assert "no-store" in response["Cache-Control"], response.status_code
    first = client.post(f"/q/{a.public_id}/", {name: "5" for name in names}, follow=True)
    assert "no-store" in first["Cache-Control"]
    assert "Thank you!" in first.content.decode() and "already submitted" not in first.content.decode()
    again = client.post(f"/q/{a.public_id}/", {name: "1" for name in names}, follow=True)
    html = again.content.decode()
    assert again.redirect_chain == [(f"/q/{a.public_id}/done/", 302)]
    assert "You already submitted this set; nothing was changed." in html and "Thank you!" in html
    assert set(Rating.objects.filter(assignment=a).values_list("value", flat=True)) == {5}
    assert "already submitted" not in client.get(f"/q/{a.public_id}/done/").content.decode()  # said once


def test_times_are_shown_in_utc_with_a_local_time_script(study):
    """The deadline (and the submission time) is a <time datetime=ISO> reading "HH:MM UTC" without JavaScript; a
    static script (allowed by the CSP's 'self', no inline code) rewrites it in the browser's time zone."""
    from datetime import datetime

    client = Client()
    consent(client, study.slug)
    a = start(client, study.slug)
    response = client.get(f"/q/{a.public_id}/")
    html = response.content.decode()
    match = re.search(r'<time datetime="([^"]+)" data-local-time>(\d\d:\d\d) UTC</time>', html)
    assert match and datetime.fromisoformat(match.group(1)) == a.expires_at
    assert match.group(2) == a.expires_at.strftime("%H:%M")
    assert re.search(r'<script src="[^"]*survey/localtime\.js" defer></script>', html)
    script_src = re.search(r"script-src ([^;]*)", response["Content-Security-Policy"]).group(1)
    assert "'self'" in script_src and "unsafe-inline" not in script_src
    client.post(f"/q/{a.public_id}/", {e["key"]: "3" for e in a.presentation})
    a.refresh_from_db()
    done = client.get(f"/q/{a.public_id}/done/").content.decode()
    match = re.search(r'<time datetime="([^"]+)" data-local-time>', done)
    assert match and datetime.fromisoformat(match.group(1)) == a.completed_at and "localtime.js" in done


def test_an_expired_set_taken_by_someone_else_shows_when_it_ended(dataset):
    from datetime import timedelta

    from django.utils import timezone

    study = build_study(dataset, slug="late", raters=1)
    client = Client()
    consent(client, study.slug)
    a = start(client, study.slug)
    Assignment.objects.filter(pk=a.pk).update(expires_at=timezone.now() - timedelta(minutes=5))
    a.refresh_from_db()
    other = Client()
    consent(other, study.slug)
    assert start(other, study.slug).questionnaire_id == a.questionnaire_id  # the freed slot went to someone else
    response = client.post(f"/q/{a.public_id}/", {e["key"]: "3" for e in a.presentation})
    html = response.content.decode()
    assert "This set has expired" in html and 'id="expired-at"' in html
    assert f'data-local-time>{a.expires_at.strftime("%H:%M")} UTC</time>' in html


@pytest.mark.parametrize("show", [True, False])
def test_the_article_pane_follows_the_study_setting_and_stays_blind(dataset, show):
    study = build_study(dataset, slug=f"article-{show}".lower(), show_article=show)
    client = Client()
    consent(client, study.slug)
    a = start(client, study.slug)
    html = client.get(f"/q/{a.public_id}/").content.decode()
    document = a.questionnaire.document
    assert ('<details class="article" id="article" open>' in html) is show
    assert (document.body.strip()[:40] in html) is show and (f"<h2>{document.headline}</h2>" in html) is show
    assert html.index('id="ratings-form"') > (html.index('id="article"') if show else -1)  # above the pairs
    for name in study.systems.values_list("name", flat=True):
        assert name not in html
    assert "reference" not in html.lower() and "user" not in html.lower().replace("user-scalable", "")
