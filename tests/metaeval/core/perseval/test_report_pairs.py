"""Table 2's pairwise-accuracy view in the report (issue 33): its numbers are the ``meta-accuracy`` command's on the
report folder's files with the same seed; it adds tables and keys and changes none the report had; its settings,
views and figures."""
from __future__ import annotations

import csv
import json
import math
import shlex
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from metaeval.core import display
from metaeval.core.display.figures.pairs import close_pairs_figure, pair_accuracy_figure
from metaeval.core.options import OptionError
from metaeval.core.perseval import report_pairs
from metaeval.core.perseval.figures import report_figures
from metaeval.core.perseval.report import check_settings
from metaeval.core.stats.meta_accuracy import COLUMNS
from tests.data.make_demo_report_golden import ARGS, canonical, fingerprints, sha
from tests.metaeval.cli_run import run
from tests.metaeval.test_cli_errors import refused

ROOT = Path(__file__).resolve().parents[4]
GOLDEN = json.loads((ROOT / "tests" / "data" / "demo_report_golden.json").read_text(encoding="utf-8"))
ADDED_TABLES = {"pair_accuracy", "close_pairs"}
ADDED_KEYS = {"pair_accuracy"}
ADDED_PARAMETERS = {"close_pairs"}


def _report(folder: Path, cache: Path, *extra: str) -> dict:
    args = [str(ROOT / arg) if arg.startswith("fixtures/") else arg for arg in ARGS]
    code, _, err = run("report", *args, *extra, "--out-dir", str(folder), "--cache-dir", str(cache))
    assert code == 0, err
    return json.loads((folder / "report.json").read_text(encoding="utf-8"))


#: tables compared value by value (floats to 1e-12, relative) instead of byte for byte: the stability table's last
#: digits differ between processors (AMD EPYC without AVX-512 here against the machine that made the digests;
#: numpy's SIMD loops round differently), the same on one machine from run to run
NUMERIC_GOLDEN = {"stability": ROOT / "tests" / "data" / "demo_report_stability.csv"}
#: the golden report's tables and keys whose last bits depend on the processor (OpenBLAS's and numpy's kernels for
#: AVX-512 round otherwise than the AVX2 ones the golden file was made with), in full: their sha256 are the golden
#: file's (checked below), and they are compared value by value
PROCESSOR_DEPENDENT = json.loads((ROOT / "tests" / "data" / "demo_report_numeric.json").read_text(encoding="utf-8"))


def _same_cell(a: str, b: str, where: str) -> None:
    if a == b:
        return
    parts_a, parts_b = a.split(";"), b.split(";")
    assert len(parts_a) == len(parts_b), f"{where}: {a} != {b}"
    for x, y in zip(parts_a, parts_b, strict=True):
        assert math.isclose(float(x), float(y), rel_tol=1e-12, abs_tol=1e-15), f"{where}: {a} != {b}"


def assert_same_rows(name: str, now_rows: list[list[str]], old_rows: list[list[str]]) -> None:
    assert now_rows[0] == old_rows[0] and len(now_rows) == len(old_rows), name
    for row, (new, old) in enumerate(zip(now_rows[1:], old_rows[1:], strict=True), start=2):
        for column, a, b in zip(now_rows[0], new, old, strict=True):
            _same_cell(a, b, f"{name}:{row} {column}")


def assert_same_table(path: Path, golden: Path) -> None:
    with path.open(encoding="utf-8", newline="") as now_file, golden.open(encoding="utf-8", newline="") as old_file:
        assert_same_rows(path.name, list(csv.reader(now_file)), list(csv.reader(old_file)))


def assert_same_value(now: object, old: object, where: str) -> None:
    """Equal JSON values, floats to 1e-12 (relative); every key, length and other value exactly."""
    if isinstance(old, float) and isinstance(now, float | int) and not isinstance(now, bool):
        assert math.isclose(now, old, rel_tol=1e-12, abs_tol=1e-15), f"{where}: {now} != {old}"
    elif isinstance(old, dict):
        assert isinstance(now, dict) and sorted(now) == sorted(old), where
        for key, value in old.items():
            assert_same_value(now[key], value, f"{where}.{key}")
    elif isinstance(old, list):
        assert isinstance(now, list) and len(now) == len(old), where
        for index, (a, b) in enumerate(zip(now, old, strict=True)):
            assert_same_value(a, b, f"{where}[{index}]")
    else:
        assert now == old and type(now) is type(old), f"{where}: {now!r} != {old!r}"


def test_the_processor_dependent_parts_are_the_golden_reports() -> None:
    """What is compared value by value is what the golden digests were made from, to every byte."""
    assert set(PROCESSOR_DEPENDENT["tables"]) <= set(GOLDEN["tables"])
    assert set(PROCESSOR_DEPENDENT["keys"]) <= set(GOLDEN["keys"])
    for name, text in PROCESSOR_DEPENDENT["tables"].items():
        assert sha(text.encode("utf-8")) == GOLDEN["tables"][name], name
    for key, value in PROCESSOR_DEPENDENT["keys"].items():
        assert sha(canonical(value)) == GOLDEN["keys"][key], key


def test_a_last_bit_apart_passes_and_a_real_change_does_not() -> None:
    table = list(csv.reader(PROCESSOR_DEPENDENT["tables"]["correlations"].splitlines()))
    column = table[0].index("pearson")
    nudged = [row[:] for row in table]
    value = float(nudged[1][column])
    nudged[1][column] = repr(math.nextafter(value, math.inf))
    assert_same_rows("correlations", nudged, table)
    nudged[1][column] = repr(value * (1 + 1e-9))
    with pytest.raises(AssertionError, match="correlations:2"):
        assert_same_rows("correlations", nudged, table)
    key = PROCESSOR_DEPENDENT["keys"]["raters"]
    assert_same_value(json.loads(json.dumps(key)), key, "raters")
    with pytest.raises(AssertionError):
        assert_same_value({**key, "extra": 1} if isinstance(key, dict) else [*key, 1], key, "raters")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> tuple[Path, dict]:
    """The demo's full report with the golden file's settings (the view at its default buckets)."""
    folder = tmp_path_factory.mktemp("demo-report")
    return folder, _report(folder, folder.parent / "cache")


def test_every_table_and_key_the_report_had_is_byte_identical(demo) -> None:
    """The view adds two tables, one key and one setting; every table the report had before it (main at the
    golden's commit) is the same file byte for byte, and every other key and parameter the same value."""
    folder, document = demo
    now = fingerprints(folder)
    assert set(now["tables"]) == set(GOLDEN["tables"]) | ADDED_TABLES
    by_value = set(NUMERIC_GOLDEN) | set(PROCESSOR_DEPENDENT["tables"])
    changed = [name for name, digest in GOLDEN["tables"].items()
               if name not in by_value and now["tables"][name] != digest]
    assert changed == [], f"tables changed: {changed}"
    for name, path in NUMERIC_GOLDEN.items():
        assert_same_table(folder / "tables" / f"{name}.csv", path)
    for name, text in PROCESSOR_DEPENDENT["tables"].items():
        with (folder / "tables" / f"{name}.csv").open(encoding="utf-8", newline="") as handle:
            assert_same_rows(name, list(csv.reader(handle)), list(csv.reader(text.splitlines())))
    assert set(now["keys"]) == set(GOLDEN["keys"]) | ADDED_KEYS
    assert [key for key, digest in GOLDEN["keys"].items()
            if key not in PROCESSOR_DEPENDENT["keys"] and now["keys"][key] != digest] == []
    for key, value in PROCESSOR_DEPENDENT["keys"].items():
        assert_same_value(document[key], value, key)
    assert set(now["parameters"]) == set(GOLDEN["parameters"]) | ADDED_PARAMETERS
    assert [key for key, digest in GOLDEN["parameters"].items() if now["parameters"][key] != digest] == []
    assert set(document["tables"]) == set(now["tables"])


def _command_rows(folder: Path, command: str) -> list[dict]:
    """The rows of the report's own ``meta-accuracy`` line, run on its folder's files (JSON output)."""
    argv = shlex.split(command)
    assert argv[:4] == ["python", "-m", "metaeval", "meta-accuracy"]
    argv = [str(folder / arg) if arg in ("scores.csv", "documents.csv") else arg for arg in argv[3:]]
    out = folder / "command.json"
    code, _, err = run(*argv, "--format", "json", "--out", str(out))
    assert code == 0, err
    return json.loads(out.read_text(encoding="utf-8"))["rows"]


def _equal_to_the_command(folder: Path, document: dict) -> int:
    section, tables = document["pair_accuracy"], document["tables"]
    compared = 0
    for human in document["parameters"]["hj_measures"]:
        rows = _command_rows(folder, section["commands"][human])
        mine = report_pairs.rows_of(tables, human)
        assert [(r["metric"], r["level"], r["bucket_low"]) for r in rows] == [
            (r["metric"], r.get("level", "system"), r.get("bucket_low")) for r in mine]
        for theirs, ours in zip(rows, mine, strict=True):
            assert {key: theirs[key] for key in ours} == ours  # exactly, every column of the table
            compared += len(ours)
    return compared


def test_the_view_equals_the_meta_accuracy_command_with_the_same_seed(demo) -> None:
    folder, document = demo
    section = document["pair_accuracy"]
    assert section["seed"] == document["parameters"]["seed"] == 2026
    assert section["close_pairs"] == [0.0, 0.05, 0.1, None] and section["tie_calibration"] is True
    assert (section["n_boot"], section["n_permutations"]) == (200, 200)
    assert _equal_to_the_command(folder, document) > 200
    tables = document["tables"]
    assert list(tables["pair_accuracy"][0]) == list(report_pairs.PAIR_COLUMNS)
    assert list(tables["close_pairs"][0]) == list(report_pairs.BUCKET_COLUMNS)
    assert list(report_pairs.PAIR_COLUMNS[:6]) == list(COLUMNS[:6]) == [
        "metric", "human", "pairs", "accuracy", "acc_eq", "epsilon"]
    # 2 automatic x 2 human measures: a system and a document row each, three buckets each
    assert [(r["metric"], r["human"], r["level"]) for r in tables["pair_accuracy"]] == [
        (a, h, level) for h in ("hj:rouge_l", "hj:jsd") for a in ("rouge_l", "jsd") for level in ("system", "document")]
    assert len(tables["close_pairs"]) == 12
    system = tables["pair_accuracy"][0]
    assert system["accuracy_low"] <= system["accuracy"] <= system["accuracy_high"]
    assert 0 <= system["spa_low"] <= system["spa"] <= system["spa_high"] <= 1
    with open(folder / "tables" / "pair_accuracy.csv", encoding="utf-8") as handle:  # the CSV keeps every digit
        first = next(csv.DictReader(handle))
    assert float(first["spa"]) == system["spa"] and first["metric"] == "rouge_l"


def test_close_pairs_setting_reaches_the_view_and_the_command(tmp_path) -> None:
    folder = tmp_path / "report"
    document = _report(folder, tmp_path / "cache", "--close-pairs", "0,0.02,0.08")
    assert document["parameters"]["close_pairs"] == [0.0, 0.02, 0.08]
    assert "--buckets 0.0,0.02,0.08,inf" in document["pair_accuracy"]["commands"]["hj:rouge_l"]
    edges = {(r["bucket_low"], r["bucket_high"]) for r in document["tables"]["close_pairs"]}
    assert edges == {(0.0, 0.02), (0.02, 0.08), (0.08, None)}
    assert _equal_to_the_command(folder, document) > 100


@pytest.mark.parametrize("edges", ["0.1,0.05", "0,0", "-0.1,0.2", "0,x"])
def test_bad_close_pairs_are_refused_where_settings_are_checked(edges, tmp_path) -> None:
    with pytest.raises(OptionError) as caught:
        check_settings({"close_pairs": edges})
    assert caught.value.name == "close_pairs"
    code, lines = refused("report", str(ROOT / "fixtures/demo/consolidated.jsonl"), "--full", f"--close-pairs={edges}",
                          "--out-dir", str(tmp_path / "out"))
    assert code == 2 and "argument --close-pairs: close_pairs must" in lines[-1], lines
    assert not (tmp_path / "out").exists()


def test_a_cell_whose_documents_do_not_average_keeps_its_system_rows_with_a_note() -> None:
    """Where the per-document values do not average to the system values (say a compatibility mode that rounds
    the system value), the view keeps the system-level and bucket rows and says why it has no document level."""

    def score(perseval: float, values: np.ndarray) -> SimpleNamespace:
        return SimpleNamespace(perseval=perseval, per_document=[SimpleNamespace(doc_id=f"d{j}", perseval=float(v))
                                                               for j, v in enumerate(values)])

    rng = np.random.default_rng(3)
    scores: dict[str, dict[str, SimpleNamespace]] = {}
    for label in ("rouge_l", "hj:rouge_l"):  # rouge_l's system values 0.01 above its documents' mean
        values = rng.random((5, 4))
        scores[label] = {f"S{k}": score(float(values[k].mean()) + (0.01 if label == "rouge_l" else 0.0), values[k])
                         for k in range(5)}
    _, tables = report_pairs.pairs_section(
        scores, ["rouge_l"], ["hj:rouge_l"], close_pairs=(0.0, 0.2),  # type: ignore[arg-type]
        n_boot=20, n_permutations=20, confidence=0.9, seed=1)
    assert [r["level"] for r in tables["pair_accuracy"]] == ["system"]
    assert "no document level" in tables["pair_accuracy"][0]["note"]
    assert "do not average" in tables["pair_accuracy"][0]["note"] and len(tables["close_pairs"]) == 2
    assert tables["pair_accuracy"][0]["spa"] is None and tables["pair_accuracy"][0]["pairs"] == 10


def test_the_page_view_formats_every_number_once(demo) -> None:
    _, document = demo
    view = display.pair_accuracy_view(document)
    assert view is not None
    rows = [r for r in document["tables"]["pair_accuracy"] if r["level"] == "system"]
    assert [(v["auto"], v["hj"]) for v in view["systems"]] == [
        (display.measure_name(r["metric"]), display.measure_name(r["human"])) for r in rows]
    for shown, row in zip(view["systems"], rows, strict=True):
        assert shown["accuracy"] == display.fmt_number(row["accuracy"])
        assert shown["spa_interval"] == f"{display.fmt_number(row['spa_low'])} to {display.fmt_number(row['spa_high'])}"
        assert shown["epsilon"] == display.fmt_number(row["epsilon"])
    assert [v["bucket"] for v in view["buckets"][:3]] == ["below 0.05", "0.05 to 0.1", "0.1 and more"]
    assert view["edges"] == "0, 0.05, 0.1" and view["seed"] == "2026"
    assert display.pair_accuracy_view({"tables": {}}) is None
    assert display.bucket_name(0.02, 0.08) == "0.02 to 0.08" and display.bucket_name(0.1, math.inf) == "0.1 and more"


def test_the_figures_draw_the_tables_values_and_escape_names(demo) -> None:
    _, document = demo
    figure = pair_accuracy_figure(document)
    assert figure is not None
    rows = [r for r in document["tables"]["pair_accuracy"] if r["level"] == "system"]
    accuracy, acc_eq, spa = figure.data
    assert list(accuracy.x) == [r["accuracy"] for r in rows] and list(spa.x) == [r["spa"] for r in rows]
    assert list(acc_eq.error_x.arrayminus) == pytest.approx([r["acc_eq"] - r["acc_eq_low"] for r in rows])
    assert figure.layout.xaxis.title.text and figure.layout.yaxis.title.text
    buckets = close_pairs_figure(document)
    assert buckets is not None and len(buckets.data) == 4
    assert list(buckets.data[0].x) == ["below 0.05", "0.05 to 0.1", "0.1 and more"]
    assert list(buckets.data[0].y) == [r["accuracy"] for r in document["tables"]["close_pairs"][:3]]
    hostile = {"parameters": {"measures": ["<b>x</b>"]}, "tables": {
        "pair_accuracy": [{**rows[0], "metric": "<b>x</b>", "human": "hj:a&b"}],
        "close_pairs": [{**document["tables"]["close_pairs"][0], "metric": "<b>x</b>"}]}}
    pair_ids = {"fig-pair-accuracy", "fig-close-pairs"}
    drawn = {key: json.loads(built.to_json()) for key, built in report_figures(hostile).items() if key in pair_ids}
    assert set(drawn) == pair_ids
    text = json.dumps(drawn)
    assert "<b>x</b>" not in text and "&lt;b&gt;x&lt;/b&gt;" in text and "HJ (a&amp;b)" in text
    assert all("%{customdata" in t["hovertemplate"] and "&lt;b" not in t["hovertemplate"]
               for figure in drawn.values() for t in figure["data"])
    assert not pair_ids & set(report_figures({"tables": {}}))
