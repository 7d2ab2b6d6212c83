"""The excluded-rater round trip (issue 29): participants rejected or excluded on the participants page are left
out of a run on the platform (``run_enqueue`` + ``run_process``) and of the command line on the downloaded export
alike, so both give the same numbers; a preference study's judgments through ``pairwise`` too."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.core.management import call_command
from django.test import Client

from metaeval import services
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey.models import Participant, Study
from tests.metaeval.cli_run import run as cli

pytestmark = pytest.mark.django_db
DATASET = str(Path(settings.BASE_DIR) / "fixtures" / "demo" / "consolidated.jsonl")
REPORT = {"n_boot": 20, "n_permutations": 20, "stability_samples": 2}
SEED = 11


@pytest.fixture
def demo(tmp_path, monkeypatch, settings) -> Client:
    """The demo's studies (``manage.py load_demo``), a researcher's browser, runs executed inline."""
    monkeypatch.setenv("METAEVAL_CACHE_DIR", str(tmp_path / "metaeval-cache"))
    settings.METAEVAL_RUN_LAUNCHER = "inline"
    settings.DEBUG = True
    call_command("load_demo", stdout=io.StringIO())
    user = User.objects.create_user("analyst", password="pw-for-tests-29")
    user.groups.add(Group.objects.get_or_create(name="researcher")[0])
    client = Client()
    client.force_login(user)
    return client


def _review(client: Client, study: Study, participants: list[Participant], action: str, note: str = "") -> None:
    """Press the participants page's button for ``participants``, as a researcher does; the page says what the
    downloads and the command line do with them."""
    page = client.post(f"/research/studies/{study.slug}/participants/",
                       {"participant": [p.pk for p in participants], "action": action, "note": note}, follow=True)
    text = page.content.decode()
    assert page.status_code == 200 and f"{len(participants)} participant" in text
    assert "<code>python -m metaeval</code> leaves those rows out too" in text


def _download(client: Client, url: str, path: Path) -> str:
    response = client.get(url)
    assert response.status_code == 200
    path.write_bytes(b"".join(response.streaming_content))
    return str(path)


def _web_run(**fields) -> MetaevalRun:
    run = services.run_enqueue(**fields)
    run = services.run_process(run.pk, use_cache=False)
    assert run.status == "done", run.error
    return run


def _close(a: object, b: object, path: str = "") -> None:
    """``a`` equals ``b`` with every float within 1e-12 (a NaN equal to a NaN or None, as a run stores it)."""
    if isinstance(a, dict) and isinstance(b, dict):
        assert set(a) == set(b), (path, sorted(set(a) ^ set(b)))
        for key in a:
            _close(a[key], b[key], f"{path}.{key}")
    elif isinstance(a, list) and isinstance(b, list):
        assert len(a) == len(b), path
        for n, (x, y) in enumerate(zip(a, b, strict=True)):
            _close(x, y, f"{path}[{n}]")
    elif isinstance(a, float) or isinstance(b, float):
        missing = [value is None or (isinstance(value, float) and math.isnan(value)) for value in (a, b)]
        assert missing[0] == missing[1], (path, a, b)
        assert missing[0] or abs(float(a) - float(b)) <= 1e-12, (path, a, b)  # type: ignore[arg-type]
    else:
        assert a == b, (path, a, b)


def test_a_web_run_and_the_cli_on_the_downloaded_ratings_agree(demo, tmp_path):
    study = Study.objects.get(slug="demo")
    by_number = {p.external_id: p for p in study.participants.all()}
    straight, clicker = by_number["sim-05"], by_number["sim-17"]  # the careless raters (fixtures/demo/README.md)
    _review(demo, study, [straight], "reject", note="straight-lined every set")
    _review(demo, study, [clicker], "exclude", note="random clicks")
    left_out = sorted([f"P{straight.pk}", f"P{clicker.pk}"], key=lambda name: int(name[1:]))

    export = _download(demo, f"/research/studies/{study.slug}/ratings.csv", tmp_path / "demo-ratings.csv")
    with open(export, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    marked = {(row["rater"], row["review"], row["excluded"], row["review_note"]) for row in rows
              if row["excluded"] == "1"}
    assert marked == {(f"P{straight.pk}", "rejected", "1", "straight-lined every set"),
                      (f"P{clicker.pk}", "pending", "1", "random clicks")}

    options = RunOptions(measures=["jsd"], aux=["jsd"], params=Params(beta=1.7))
    scores = _web_run(dataset=study.dataset, study=study, options=options)
    assert scores.excluded_raters == left_out
    flags = ("--measures", "jsd", "--aux", "jsd", "--beta", "1.7", "--no-cache")
    code, out, err = cli("score", DATASET, "--ratings", export, *flags, "--format", "json")
    assert code == 0, err
    assert "demo-ratings.csv: left out 2 of 24 raters (96 of 1152 rows):" in err
    assert f'P{straight.pk} (48 rows; rejected, excluded on the participants page; note: "straight-lined' in err
    document = json.loads(out)
    _close(scores.scores, document["scores"])
    assert scores.hj_counts == document["hj_counts"]
    # keeping them is another analysis, the same on both sides
    everyone = _web_run(dataset=study.dataset, study=study, options=options, study_exclusions=False)
    assert everyone.excluded_raters == []
    code, out, err = cli("score", DATASET, "--ratings", export, *flags, "--format", "json", "--include-excluded")
    assert code == 0 and "kept 2 raters excluded on the participants page" in err
    _close(everyone.scores, json.loads(out)["scores"])
    assert everyone.scores != scores.scores
    # and the platform's CSV of the same table is the command's, byte for byte
    code, csv_out, _ = cli("score", DATASET, "--ratings", export, *flags)
    code, plain, _ = cli("score", DATASET, "--ratings", _strip_marked(export, tmp_path), *flags)
    assert csv_out == plain

    # the full report: every table the same
    report = _web_run(dataset=study.dataset, study=study, options=options, kind="report", seed=SEED, report=REPORT)
    folder = tmp_path / "report"
    code, _, err = cli("report", DATASET, "--ratings", export, "--measures", "jsd", "--aux", "jsd", "--no-cache",
                       "--full", "--seed", str(SEED), "--n-boot", "20", "--n-permutations", "20",
                       "--stability-samples", "2", "--out-dir", str(folder))
    assert code == 0, err
    offline = json.loads((folder / "report.json").read_text())
    web = report.report
    assert sorted(web["parameters"].pop("excluded_raters")) == sorted(offline["parameters"].pop("excluded_raters"))
    assert web["edins"]["human"].pop("ratings") == "study demo"  # where each read the ratings
    assert offline["edins"]["human"].pop("ratings") == "demo-ratings.csv"
    assert {row["rater"] for row in web["tables"]["raters"]}.isdisjoint(left_out)
    _close(web, offline)  # every section and table, the rater section included


def _strip_marked(export: str, tmp_path: Path) -> str:
    """The export without the rows marked excluded (and without the review columns)."""
    with open(export, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        columns = [name for name in reader.fieldnames or [] if name not in ("review", "excluded", "review_note")]
        rows = [{key: row[key] for key in columns} for row in reader if row["excluded"] != "1"]
    path = tmp_path / "stripped.csv"
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return str(path)


def test_a_web_report_and_pairwise_on_the_downloaded_judgments_agree(demo, tmp_path):
    study = Study.objects.get(slug="demo-ab")
    first, second = study.participants.filter(assignments__completed_at__isnull=False).distinct().order_by("pk")[:2]
    _review(demo, study, [first], "reject", note="always A")
    _review(demo, study, [second], "approve")
    export = _download(demo, f"/research/studies/{study.slug}/judgments.csv", tmp_path / "demo-ab-judgments.csv")
    with open(export, newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    reviews = {(row["judge"], row["judge_kind"], row["review"], row["excluded"]) for row in rows}
    assert (f"P{first.pk}", "human", "rejected", "1") in reviews
    assert (f"P{second.pk}", "human", "approved", "0") in reviews
    assert ("demo-llm-judge", "llm", "", "") in reviews
    dropped = sum(1 for row in rows if row["excluded"] == "1")
    assert dropped > 0

    # the platform: the study's judgments as a judgment set (excluded participants left out), in a report run
    stored = services.judgment_set_from_study(name="demo-ab-all", study=study, source="all")
    assert stored.judgments == len(rows) - dropped
    run = _web_run(dataset=study.dataset, options=RunOptions(measures=["jsd"]), kind="report", seed=SEED,
                   report={"n_boot": 50, "n_permutations": 10, "stability_samples": 2}, judgment_set=stored)
    section = run.report["pairwise"]
    # the command line on the download: the same judgments left out, the same seed and rounds
    seed, n_boot = section["parameters"]["seed"], section["parameters"]["n_boot"]
    code, out, err = cli("pairwise", export, "--seed", str(seed), "--n-boot", str(n_boot), "--format", "json")
    assert code == 0, err
    assert "demo-ab-judgments.csv: left out 1 of " in err and f"P{first.pk} ({dropped} rows; rejected," in err
    document = json.loads(out)
    assert document["judgments"]["games"] == section["judgments"]["games"]
    assert document["judgments"]["read"] == section["judgments"]["read"] == len(rows) - dropped
    assert document["judgments"]["raters_left_out"] == [f"P{first.pk}"]
    _close(section["ratings"], [{key: row[key] for key in section["ratings"][0]} for row in document["rows"]])
    code, out, _ = cli("pairwise", export, "--table", "wtl", "--format", "json")
    _close(section["wtl"], json.loads(out)["rows"])
    # keeping the rejected participant changes the board
    code, out, _ = cli("pairwise", export, "--seed", str(seed), "--n-boot", str(n_boot), "--format", "json",
                       "--include-excluded")
    assert json.loads(out)["judgments"]["games"] >= section["judgments"]["games"]
    assert [row["elo"] for row in json.loads(out)["rows"]] != [row["elo"] for row in document["rows"]]
