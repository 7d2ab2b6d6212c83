"""A full report of MODEL:STYLE systems has the prompt-probes section: its numbers equal the probes module's on
the report's own scores, its figure and tables are on the page, and the HJ flags sit beside the automatic ones."""
from __future__ import annotations

from decimal import Decimal

import pytest

from metaeval import services
from metaeval.core.icopernicus.probes import StyleScore, probe_rows, split_system
from metaeval.core.perseval.measure import Params
from metaeval.core.perseval.pipeline import RunOptions
from metaeval.models import MetaevalRun
from survey.models import Summary
from tests.conftest import build_dataset, build_study
from tests.metaeval.test_views_report import client, page_with_tables  # noqa: F401 (fixture)
from tests.metaeval.test_views_runs import isolated, rate_all  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db
SYSTEMS = ["m1:0-shot", "m1:2-shot-wo-hist", "m2:0-shot", "m2:2-shot-wo-hist", "m2:c-0-shot",
           "m2:c-0-shot-adversarial"]


@pytest.fixture
def styled_run() -> MetaevalRun:
    dataset = build_dataset(name="styled", docs=3, readers=3, systems=SYSTEMS)
    # texts made of the article's words in counts that differ by system and reader, so EGISES and e-DINS differ
    for summary in Summary.objects.filter(document__dataset=dataset).exclude(system__name="user").select_related(
            "document", "reader", "system"):
        i, r = SYSTEMS.index(summary.system.name), int(summary.reader.external_id[1:])
        summary.text = ("body " * (1 + (r * (i + 1)) % 3) + "article " * (1 + (i + r) % 2)
                        + f"{summary.document.external_id[1:]} {summary.reader.external_id}")
        summary.save()
    study = build_study(dataset, slug="styled", per_q=5)
    rate_all(study, participants=2)
    options = RunOptions(measures=["jsd"], aux=["jsd"], params=Params(), skip_unavailable=True)
    run = services.run_enqueue(dataset=study.dataset, study=study, options=options, kind="report", seed=3,
                               report={"n_boot": 50, "n_permutations": 50, "stability_samples": 2})
    services.run_launch(run)
    run.refresh_from_db()
    assert run.status == "done", run.error
    return run


def test_the_section_equals_the_probes_on_the_reports_scores(styled_run):
    section = styled_run.report["probes"]
    assert section["measure"] == "jsd" and section["models"] == ["m1", "m2"]
    egises = {row["system"]: row["egises"] for row in styled_run.report["tables"]["scores"]
              if row["measure"] == "jsd"}
    expected = probe_rows([StyleScore(*split_system(name), Decimal(repr(value)))  # type: ignore[misc]
                           for name, value in egises.items()])
    assert [(r["model"], r["probe"], r["paradox"]) for r in section["rows"]] == [
        (r.model, r.probe, r.paradox) for r in expected]
    assert {r["probe"] for r in section["rows"]} == {"PX-1", "PX-3"}  # the styles the models have
    assert section["hj_measure"] == "hj:jsd" and len(section["agreement"]) == len(expected)
    (worse,) = section["adversarial"]
    assert (worse["model"], worse["probe"], worse["style"]) == ("m2", "PX-3", "c-0-shot")
    assert worse["worsening_pp"] == pytest.approx(
        (egises["m2:c-0-shot-adversarial"] - egises["m2:c-0-shot"]) * 100, abs=1e-9)
    assert worse["worsened"] == (egises["m2:c-0-shot-adversarial"] > egises["m2:c-0-shot"])


def test_the_page_shows_the_section(client, styled_run):  # noqa: F811 (fixture)
    html = page_with_tables(client, styled_run)
    for anchor in ('id="section-probes"', 'id="fig-probes-grid"', 'id="probes-matrix"', 'id="probes-summary"',
                   'id="probes-agreement"', 'id="probes-adversarial"', 'id="probes-adversarial-summary"'):
        assert anchor in html, anchor
    for table in ("probe_grid", "probe_rows", "probe_summary", "probe_hj_agreement", "probe_adversarial",
                  "probe_adversarial_summary"):
        assert f"/research/runs/{styled_run.pk}/tables/{table}.csv" in html
    assert "Prompt probes · each model&#x27;s probes" in html or "Prompt probes · each model's probes" in html


def test_every_report_has_the_edins_section(client, styled_run):  # noqa: F811 (fixture)
    """The e-DINS section equals the e-DINS command's numbers on the same corpus (its defaults: --oov none)."""
    from metaeval.core.edins.measure import edins_scores
    from metaeval.selectors import corpus_from_dataset

    section = styled_run.report["edins"]
    assert [row["system"] for row in section["rows"]] == SYSTEMS
    command = edins_scores(corpus_from_dataset(dataset=styled_run.dataset), SYSTEMS).automatic
    assert [(row["dins"], row["pf"]) for row in section["rows"]] == [(s.dins, s.pf) for s in command]
    for row in section["rows"]:
        assert row["edins"] == row["dins"] + row["pf"]
        line = [p for p in section["curve"] if p["system"] == row["system"]]
        assert [p["gamma"] for p in line] == [i / 10 for i in range(11)]
        assert line[0]["edins"] == row["dins"] and line[-1]["edins"] == row["edins"]
    html = client.get(f"/research/runs/{styled_run.pk}/report/").content.decode()
    assert 'id="section-edins"' in html and 'id="fig-edins-gamma"' in html and 'id="edins-table"' in html


def test_the_edins_section_has_the_human_variant_of_the_study_ratings(client, styled_run, tmp_path):  # noqa: F811
    """e-DINS-HJ in the report equals ``edins --ratings`` fed with the study's ratings export, and the page shows
    the HJ columns and the correlation over the systems."""
    from django.core.management import call_command

    from metaeval.core.edins.measure import edins_scores
    from metaeval.core.io.loaders import load_ratings
    from metaeval.core.io.records import json_safe
    from metaeval.core.perseval.human import plan_human
    from metaeval.core.stats.correlation import correlate
    from metaeval.selectors import corpus_from_dataset

    export = tmp_path / "ratings.csv"
    call_command("export_ratings", "--format", "csv", "--study", styled_run.study.slug, "--out", str(export))
    corpus = corpus_from_dataset(dataset=styled_run.dataset)
    rated = plan_human(corpus, load_ratings(str(export)), compat=False, systems=SYSTEMS).pairs
    command = edins_scores(corpus, SYSTEMS, rated=rated).human
    assert command is not None
    section = styled_run.report["edins"]
    got = [(row["dins_hj"], row["pf_hj"], row["edins_hj"], row["documents_hj"]) for row in section["rows"]]
    assert got == [(s.dins, s.pf, s.edins, s.documents) for s in command]
    assert any(row["documents_hj"] > 0 for row in section["rows"])
    expected = correlate([row["edins"] for row in section["rows"]], [row["edins_hj"] for row in section["rows"]])
    assert section["human"]["correlation"] == json_safe(expected.as_dict())
    assert section["human"]["correlation"]["n"] == len(SYSTEMS) and expected.kendall == expected.kendall  # defined
    table = styled_run.report["tables"]["edins"]
    assert all("edins_hj" in row for row in table)
    html = client.get(f"/research/runs/{styled_run.pk}/report/").content.decode()
    assert "e-DINS-HJ" in html and 'id="edins-hj-agreement"' in html
