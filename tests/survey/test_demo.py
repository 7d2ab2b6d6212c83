"""The demo: load_demo is idempotent, produces a usable study and stores the committed ratings; its careless
raters are the ones the rater checks flag; every participant page is blind."""
from __future__ import annotations

import csv
import hashlib
import io
import re
from collections import Counter
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders
from django.core.management import call_command
from django.test import Client

from metaeval.core.stats.raters import rater_report
from survey import demo
from survey.exporting import write_ratings
from survey.models import Assignment, Participant, Rating, Study, Summary, System

pytestmark = pytest.mark.django_db

SYSTEM_KIND_COUNTS = {"personalized": 7, "generic": 2, "llm": 1}
RATINGS = Path(settings.BASE_DIR) / "fixtures" / "demo" / "ratings.csv"


def test_no_demo_accounts_with_debug_off_unless_passwords_are_given(db, monkeypatch):
    """With DEBUG off the published passwords are refused: no account without DEMO_*_PASSWORD, and with them the
    accounts have exactly those passwords."""
    from django.contrib.auth.models import User

    out = io.StringIO()
    call_command("load_demo", participants=2, sets_each=1, stdout=out)
    assert "no demo accounts: DEBUG is off" in out.getvalue() and not User.objects.exists()
    monkeypatch.setenv("DEMO_RESEARCHER_PASSWORD", "a-long-private-secret-1")
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "a-long-private-secret-2")
    call_command("load_demo", participants=2, sets_each=1, stdout=io.StringIO())
    assert User.objects.get(username="researcher").check_password("a-long-private-secret-1")
    assert User.objects.get(username="admin").check_password("a-long-private-secret-2")
    assert not User.objects.get(username="admin").check_password("admin-demo-pass")


def test_demo_contents(demo_loaded):
    assert "researcher account: researcher / " in demo_loaded and "admin account: admin / " in demo_loaded
    study = Study.objects.get(slug="demo")
    assert study.status == "open" and study.systems.count() == 10
    assert Counter(System.objects.exclude(name="user").values_list("kind", flat=True)) == SYSTEM_KIND_COUNTS
    assert study.dataset.documents.count() >= 12
    assert all(len(r.history) >= 6 for r in study.dataset.readers.all())
    assert Summary.objects.filter(system__name="user").count() >= 36
    raters = Participant.objects.filter(study=study, assignments__completed_at__isnull=False).distinct()
    assert raters.count() >= 20
    assert Rating.objects.filter(assignment__questionnaire__study=study).values("value").distinct().count() >= 5
    # some questionnaires have both raters (agreement can be measured), and slots remain for live participants
    done = Counter(Assignment.objects.filter(completed_at__isnull=False).values_list("questionnaire", flat=True))
    assert 2 in done.values()
    assert sum(done.values()) < study.questionnaires.count() * study.raters_per_questionnaire


def test_demo_pairwise_judgments(demo_loaded):
    """The demo's judgment set: the committed file, every system, the three criteria, people and an LLM judge."""
    from metaeval.core.pairwise.judgments import load_judgments
    from metaeval.models import JudgmentSet

    stored = JudgmentSet.objects.get(name="demo")
    path = Path(settings.BASE_DIR) / "fixtures" / "demo" / "judgments.csv"
    assert stored.sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    table = load_judgments(path)
    assert stored.judgments == len(table.judgments) and stored.invalid == table.invalid > 0
    assert set(stored.systems) == set(Study.objects.get(slug="demo").systems.values_list("name", flat=True))
    assert stored.criteria == ["personalization", "quality", "relevance", "overall"]
    assert {j.judge_kind for j in table.judgments} == {"human", "llm"}
    assert "pairwise judgment set demo:" in demo_loaded


def test_demo_ratings_carry_signal(demo_loaded):
    """How alike a system's headlines for two readers look to the simulated raters follows its personalization: a
    generic system's pair (one text twice) is "almost same", a system that changes a word or two per reader comes
    next, one that personalizes some readers after it, and the most personalized system's pairs look as different
    as the readers' own headlines."""
    def mean(system: str) -> float:
        values = list(Rating.objects.filter(item__system__name=system).values_list("value", flat=True))
        return sum(values) / len(values)

    assert mean("GenericBARTx") > 5 > mean("ClickAttnSum") > mean("PlainPointerGen") > mean("PersonaPointer") + 1
    assert abs(mean("PersonaPointer") - mean("user")) < 0.5


def test_load_demo_stores_the_ratings_of_the_committed_file(demo_loaded):
    """The simulation is reproducible, times included: its export is fixtures/demo/ratings.csv to the byte
    (scripts/make_demo.py writes the file this way)."""
    out = io.StringIO()
    write_ratings(demo.export_rows(Study.objects.get(slug="demo")), out, "csv")
    assert out.getvalue() == RATINGS.read_text(encoding="utf-8")


def test_the_rater_checks_flag_the_careless_raters():
    """The straight-liner straight-lines every set, the random clicker does not agree with the others; both are
    far quicker than the careful raters, and leaving either out raises alpha."""
    with RATINGS.open(newline="", encoding="utf-8") as handle:
        lines = {line.rater: line for line in rater_report(list(csv.DictReader(handle)))}
    kinds = {f"P{number}": kind for number, kind in demo.CARELESS.items()}
    straight = next(r for r, kind in kinds.items() if kind == "straight-liner")
    clicker = next(r for r, kind in kinds.items() if kind == "random")
    careful = [line for rater, line in lines.items() if rater not in kinds]
    assert len(careful) == len(lines) - len(kinds) >= 20
    assert lines[straight].straightlined_share == 1 and lines[straight].longest_run == 6
    assert all(line.straightlined_share is not None and line.straightlined_share < 0.25 for line in careful)
    assert min(line.spearman_with_others for line in careful) > 0.6
    assert min(line.median_seconds for line in careful) > 90
    for rater in (straight, clicker):
        assert lines[rater].spearman_with_others < 0.2
        assert lines[rater].mad_from_others > max(line.mad_from_others for line in careful)
        assert lines[rater].median_seconds < 40
        assert lines[rater].alpha_change > 0


def test_demo_preference_study(demo_loaded):
    """The demo A/B study: four systems, answered by simulated participants through the real services; its export
    scores with the pairwise command's code and puts the most personalised system first on personalization."""
    from metaeval.core.pairwise.games import play
    from metaeval.core.pairwise.judgments import parse_judgments
    from metaeval.core.pairwise.leaderboard import leaderboard
    from survey import exporting, selectors
    from survey.models import JudgeRun, Judgment

    study = Study.objects.get(slug="demo-ab")
    assert study.kind == "preference" and study.status == "open" and study.systems.count() == 4
    assert "demo preference study demo-ab: 12 questionnaires; 6 simulated participants completed 18 sets" in demo_loaded
    out = io.StringIO()
    count = exporting.write_judgments(selectors.judgment_export_rows(study=study, source="human"), out, "csv")
    assert count == Judgment.objects.filter(assignment__questionnaire__study=study).count() == 18 * 3 * 3
    games = play(parse_judgments(out.getvalue(), "demo-ab.csv", json_lines=False).judgments)
    board = [row for row in leaderboard(games, n_boot=20, seed=0).rows if row["criterion"] == "personalization"]
    assert max(board, key=lambda row: row["bt"])["system"] == "PersonaPointer"
    # the simulated LLM judge (a file judge): every item 4 times per criterion, half of the runs in each order
    assert "a simulated LLM judge (file judge) gave 432 judgments" in demo_loaded
    run = JudgeRun.objects.get(study=study)
    assert (run.kind, run.status, run.name, run.total, run.runs) == ("file", "done", "demo-llm-judge", 432, 4)
    shown = Counter(run.judgments.values_list("shown_first", flat=True))
    assert shown["model_a"] == shown["model_b"] == 216
    llm = io.StringIO()
    exporting.write_judgments(selectors.judgment_export_rows(study=study, source="llm"), llm, "csv")
    table = parse_judgments(llm.getvalue(), "llm.csv", json_lines=False)
    assert 0 < table.invalid < 30 and {j.judge_kind for j in table.judgments} == {"llm"}
    board = [row for row in leaderboard(play(table.judgments), n_boot=20, seed=0).rows
             if row["criterion"] == "personalization"]
    assert max(board, key=lambda row: row["bt"])["system"] == "PersonaPointer"


def test_demo_preference_study_has_sets_for_visitors_and_short_holds(demo_loaded):
    """The demo A/B study does not run dry: 12 questionnaires x 10 people, 18 sets taken by the simulated
    participants; the 7th, 8th ... 20th visitor (each through the consent and start pages) gets a set, a set left
    unfinished holds its slot 10 minutes, and the design preview says so."""
    from datetime import timedelta

    from survey import services

    study = Study.objects.get(slug="demo-ab")
    assert (study.raters_per_questionnaire, study.assignment_timeout_minutes) == (10, 10)
    for visitor in range(1, 21):
        browser = Client()
        browser.post("/s/demo-ab/", {"consent": "on"})
        page = browser.post("/s/demo-ab/start/", follow=True)
        assert page.status_code == 200 and "Which text is better?" in page.content.decode(), visitor
    started = Assignment.objects.filter(questionnaire__study=study, completed_at__isnull=True)
    assert started.count() == 20
    assert {a.expires_at - a.claimed_at for a in started} == {timedelta(minutes=10)}
    # 18 done + 20 started of 120: a visitor who never finishes frees the slot after the hold
    late = services.participant_register(study=study)
    claim = services.assignment_claim(participant=late)
    assert claim.expires_at - claim.claimed_at == timedelta(minutes=10)
    from django.contrib.auth.models import User

    researcher = Client()
    researcher.force_login(User.objects.get(username="researcher"))  # the demo's researcher account
    design = researcher.get("/research/studies/demo-ab/design/").content.decode()
    assert re.search(r'data-design="hold_minutes">10 minutes</strong>', design)
    assert "Answer sets (questionnaires × 10 raters)" in design


def test_load_demo_is_idempotent(demo_loaded):
    counts = (Summary.objects.count(), Rating.objects.count(), Participant.objects.count(), Study.objects.count())
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    assert "demo study exists" in out.getvalue() and "pairwise judgment set" not in out.getvalue()
    assert "demo preference study" not in out.getvalue()
    assert (
        Summary.objects.count(),
        Rating.objects.count(),
        Participant.objects.count(),
        Study.objects.count(),
    ) == counts


def test_every_participant_page_of_the_demo_is_blind(demo_loaded):
    names = list(System.objects.values_list("name", flat=True))
    forbidden = [n for n in names if n != "user"] + ["reference", "gold"]
    client = Client()
    pages: list[str] = []

    def fetch(url: str, method: str = "get", data=None) -> str:
        response = getattr(client, method)(url, data or {}, follow=True)
        assert response.status_code == 200, url
        html = response.content.decode()
        pages.append(html)
        return html

    fetch("/")
    fetch("/s/demo/")
    fetch("/s/demo/", "post", {"consent": "on"})
    fetch("/s/demo/about/")
    fetch("/s/demo/instructions/")
    for asset in ["/static/survey/questionnaire.js", "/static/survey/site.css"]:
        pages.append(Path(finders.find(asset.removeprefix("/static/"))).read_text())
    participant = Participant.objects.latest("id")
    seen = 0
    while True:
        html = fetch("/s/demo/start/", "post")
        if "questionnaire" in html and "ratings-form" not in html:
            break  # nothing left for this participant
        assignment = Assignment.objects.filter(participant=participant, completed_at__isnull=True).get()
        keys = re.findall(r'type="radio" name="([^"]+)" value="1"', html)
        assert keys == [e["key"] for e in assignment.presentation]
        fetch(f"/q/{assignment.public_id}/", "post", {k: "3" for k in keys})
        seen += 1
    assert seen >= 10
    # random values (CSRF token, CSP nonce, assignment ids, field keys) may spell a forbidden word by chance: they
    # are blanked first; every other character of the page is checked
    randoms = [value for a in Assignment.objects.filter(participant=participant)
               for value in (a.public_id, *(e["key"] for e in a.presentation))]
    for html in pages:
        html = re.sub(r'(name="csrfmiddlewaretoken" value=|nonce=)"[^"]*"', r'\1""', html)
        for value in randoms:
            html = html.replace(value, "")
        lowered = html.lower()
        for word in forbidden:
            assert word.lower() not in lowered, word
        # no database ids of items or summaries in any field name or attribute
        assert not re.search(r'name="(item|summary|system)[-_]?\d', lowered)


def test_the_demo_judges_known_biases_show_on_the_judges_vs_people_page(demo_loaded):
    """The simulated judge of demo-ab prefers the text shown first and the longer text (survey.demo's
    position_bias and LENGTH_BIAS); the simulated participants have neither bias. The page's numbers show both,
    and style control puts the judge's leaderboard back in the people's order at the bottom."""
    from survey import selectors

    study = Study.objects.get(slug="demo-ab")
    result = selectors.study_versus(study=study)
    overall = next(row for row in result["tables"]["agreement"] if row["criterion"] == "overall")
    assert overall["judge"] == "demo-llm-judge" and overall["items"] == 108
    assert overall["judge_first_shown"] > overall["people_first_shown"] + 0.05
    assert overall["judge_longer"] > overall["human_longer"] + 0.1 and overall["length_items"] > 90
    boards = {}
    for row in result["tables"]["style"]:
        if row["criterion"] == "overall":
            boards.setdefault(row["source"], {})[row["system"]] = (row["rank_nostyle"], row["rank_style"])
    # the baseline, whose headlines are the longest (15.6 words on average, the others 10.7 to 12), climbs the
    # judge's plain board; style control sends it last, where the people put it
    assert boards["demo-llm-judge"]["LeadLineBaseline"][0] < 4 and boards["demo-llm-judge"]["LeadLineBaseline"][1] == 4
    assert boards["people"]["LeadLineBaseline"] == (4, 4)
    assert any(line.startswith("demo-llm-judge: style control changes the order in overall")
               for line in result["warnings"])
