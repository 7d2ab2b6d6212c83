"""``python -m metaeval``: the output contract, full precision, the report folder and clear errors."""
from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from metaeval.cli import main
from metaeval.core.io.records import number
from tests.metaeval.cli_run import run

ROOT = Path(__file__).resolve().parents[2]
DATASET = str(ROOT / "fixtures" / "demo" / "consolidated.jsonl")
RATINGS = str(ROOT / "fixtures" / "demo" / "ratings.csv")


def test_score_csv_contract_and_full_precision(tmp_path):
    code, out, _ = run("score", DATASET, "--measures", "rouge_l,jsd", "--ratings", RATINGS, "--aux", "rouge_l",
                       "--beta", "1.7", "--cache-dir", str(tmp_path))
    assert code == 0
    lines = out.splitlines()
    assert lines[0].startswith("system,measure,egises,degress,perseval,accuracy,")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert {row["measure"] for row in rows} == {"rouge_l", "jsd", "hj:rouge_l"}
    assert len([row for row in rows if row["measure"] == "rouge_l"]) == 10
    for row in rows:
        # repr() round-trips: the printed text is the float itself
        assert repr(float(row["perseval"])) == row["perseval"]
        assert float(row["egises"]) == pytest.approx(1 - float(row["degress"]), abs=1e-15)
    hj = [row for row in rows if row["measure"] == "hj:rouge_l"]
    assert all(int(row["rated_pairs"]) > 0 for row in hj)


def test_second_run_is_served_from_the_cache(tmp_path):
    first = run("score", DATASET, "--measures", "jsd", "--format", "json", "--cache-dir", str(tmp_path))
    second = run("score", DATASET, "--measures", "jsd", "--format", "json", "--cache-dir", str(tmp_path))
    a, b = json.loads(first[1]), json.loads(second[1])
    assert a["distances"][0]["computed"] > 0 and b["distances"][0]["computed"] == 0
    assert b["distances"][0]["cached"] == a["distances"][0]["pairs"]
    assert a["scores"] == b["scores"]
    assert b["parameters"]["measures"] == ["jsd"] and "numpy" in b["versions"]


def test_correlate_reads_the_score_file(tmp_path):
    scores = tmp_path / "scores.csv"
    code, _, _ = run("score", DATASET, "--measures", "rouge_l", "--ratings", RATINGS, "--aux", "rouge_l,jsd",
                     "--out", str(scores), "--no-cache")
    assert code == 0
    code, out, _ = run("correlate", str(scores))
    assert code == 0
    grid = list(csv.DictReader(io.StringIO(out)))
    assert [(cell["auto_measure"], cell["hj_measure"]) for cell in grid] == [
        ("rouge_l", "hj:rouge_l"), ("rouge_l", "hj:jsd")
    ]
    assert all(int(cell["n"]) == 10 and -1 <= float(cell["kendall"]) <= 1 for cell in grid)


def test_report_writes_every_table(tmp_path):
    code, out, _ = run("report", DATASET, "--ratings", RATINGS, "--measures", "rouge_l,jsd", "--aux", "rouge_l",
                       "--out-dir", str(tmp_path / "r"), "--no-cache")
    assert code == 0
    assert "PerSEval beta=1.7" in out and "Human-judgment correlation" in out
    for name in ("scores.csv", "correlations.csv", "documents.csv", "readers.csv", "run.json"):
        assert (tmp_path / "r" / name).stat().st_size > 0
    document = json.loads((tmp_path / "r" / "run.json").read_text())
    assert document["parameters"]["beta"] == 1.7 and len(document["correlations"]) == 2


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", DATASET, "--measures", "nope"], "unknown measure 'nope'"),
        (["score", DATASET, "--aux", "rouge_l"], "--aux needs ratings"),
        (["score", "/no/such/file.jsonl"], "error: /no/such/file.jsonl: no such file or folder\n"),
        (["correlate", DATASET], "not a scores file"),
    ],
)
def test_errors_are_one_clear_line(argv, message):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert message in err and err.startswith("error: ")


def test_bad_ratings_file_names_the_line(tmp_path):
    bad = tmp_path / "r.csv"
    bad.write_text("doc_id,system,uid1,uid2,rating\nD01,user,U01,U02,9\n")
    code, _, err = run("score", DATASET, "--ratings", str(bad), "--no-cache")
    assert code == 2 and "r.csv:2" in err and "rating" in err


def test_module_entry_point_runs():
    result = subprocess.run(
        [sys.executable, "-m", "metaeval", "score", DATASET, "--measures", "bleu4", "--systems", "TextRankHead",
         "--no-cache", "--compat", "authors"],
        capture_output=True, text=True, cwd=ROOT, check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[1].startswith("TextRankHead,bleu4,")


FULL = ("--measures", "rouge_l,jsd", "--full", "--seed", "4", "--n-boot", "100", "--n-permutations", "50",
        "--stability-samples", "2", "--no-cache")


def test_report_full_writes_the_report_document_and_tables(tmp_path):
    plain, full, again = tmp_path / "plain", tmp_path / "full", tmp_path / "again"
    code, _, _ = run("report", DATASET, "--ratings", RATINGS, "--measures", "rouge_l,jsd", "--aux", "rouge_l",
                     "--no-cache", "--out-dir", str(plain))
    assert code == 0
    code, out, _ = run("report", DATASET, "--ratings", RATINGS, "--aux", "rouge_l", *FULL, "--out-dir", str(full))
    assert code == 0
    assert "PerSEval beta=1.7" in out and "Human-judgment correlation" in out
    assert f"{full}/report.json" in out and f"{full / 'tables'}/" in out and "(seed 4)" in out
    # the study path scores exactly like the plain run
    for name in ("scores.csv", "correlations.csv", "documents.csv", "readers.csv"):
        assert (full / name).read_bytes() == (plain / name).read_bytes(), name
    text = (full / "report.json").read_text()
    document = json.loads(text, parse_constant=lambda name: pytest.fail(f"non-strict JSON: {name}"))
    for key in ("parameters", "leaderboard", "correlations", "beta_ablation", "stability", "raters", "tables"):
        assert key in document, key
    parameters = document["parameters"]
    assert parameters["seed"] == 4 and parameters["n_boot"] == 100 and parameters["n_permutations"] == 50
    assert parameters["stability_samples"] == 2 and parameters["resample"] == "both"
    assert parameters["measures"] == ["rouge_l", "jsd"] and parameters["hj_measures"] == ["hj:rouge_l"]
    assert document["raters"]["per_rater"] and document["tables"]["raters"]
    assert {"raters", "rater_agreement", "permutation_tests", "scores"} <= set(document["tables"])
    assert sorted(path.stem for path in (full / "tables").glob("*.csv")) == sorted(document["tables"])
    for name, rows in document["tables"].items():
        with open(full / "tables" / f"{name}.csv", newline="", encoding="utf-8") as handle:
            written = list(csv.DictReader(handle))
        assert len(written) == len(rows), name
        if rows:
            columns = list(dict.fromkeys(key for row in rows for key in row))
            assert list(written[0]) == columns, name
            # every cell as written by the scores CSV: full precision, None (and a missing key) as empty
            assert [list(row.values()) for row in written] == [
                [number(row.get(key)) for key in columns] for row in rows
            ], name
    # the rater table uses the export's timing columns
    assert any(row["median_seconds"] is not None for row in document["tables"]["raters"])
    # same seed, same document
    code, _, _ = run("report", DATASET, "--ratings", RATINGS, "--aux", "rouge_l", *FULL, "--out-dir", str(again))
    assert code == 0
    assert (again / "report.json").read_text() == text


def test_report_full_without_ratings_and_a_fresh_seed(tmp_path):
    folder = tmp_path / "r"
    argv = [arg for arg in FULL if arg not in ("--seed", "4")]
    code, out, _ = run("report", DATASET, *argv, "--out-dir", str(folder))
    assert code == 0
    document = json.loads((folder / "report.json").read_text())
    seed = document["parameters"]["seed"]
    assert isinstance(seed, int) and 0 <= seed < 2**31 and f"(seed {seed})" in out
    assert document["parameters"]["hj_measures"] == [] and "raters" not in document
    assert "correlations" not in document and document["leaderboard"] and document["stability"]
    assert (folder / "tables" / "scores.csv").exists() and not (folder / "tables" / "raters.csv").exists()
    assert not (folder / "correlations.csv").exists()


def test_report_full_bootstrap_and_permutation_options(tmp_path):
    folder = tmp_path / "r"
    code, _, err = run("report", DATASET, "--ratings", RATINGS, "--aux", "rouge_l", *FULL, "--out-dir", str(folder),
                       "--bootstrap-missing", "drop-system", "--permutation-alternative", "two-sided")
    assert code == 0, err
    document = json.loads((folder / "report.json").read_text())
    assert document["parameters"]["missing_system"] == "drop-system"
    assert document["parameters"]["permutation_alternative"] == "two-sided"
    assert {row["alternative"] for row in document["tables"]["permutation_tests"]} == {"two-sided"}
    assert document["bootstrap_discarded"]["rule"] == "drop-system"
    # the three alphas of the rater section, and the one to quote
    assert [(row["texts"], row["quote"]) for row in document["raters"]["alphas"]] == [
        ("all", False), ("different", True), ("identical", False)]


def test_report_full_options_need_full(tmp_path):
    code, out, err = run("report", DATASET, "--measures", "rouge_l", "--seed", "3", "--no-cache",
                         "--out-dir", str(tmp_path))
    assert code == 2 and out == "" and "--seed needs --full" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["score", DATASET, "--beta", "11"], "argument --beta: beta must be a finite number from -10 to 10; got '11'"),
        (["score", DATASET, "--pacc-alpha", "nan"],
         "argument --pacc-alpha: pacc_alpha must be a finite number; got 'nan'"),
        (["report", DATASET, "--full", "--n-boot", "0"],
         "argument --n-boot: n_boot must be an integer from 1 to 1000000; got '0'"),
        (["report", DATASET, "--full", "--betas", "1,x"],
         "argument --betas: betas must be a finite number from -10 to 10; got 'x'"),
        (["report", DATASET, "--full", "--bootstrap-missing", "keep"],
         "argument --bootstrap-missing: missing_system must be one of discard-sample, drop-system; got 'keep'"),
    ],
)
def test_parameters_are_checked_by_their_one_definition(argv, message, capsys):
    """The flags come from metaeval.core.perseval.measure.PARAMETERS and report.REPORT_OPTIONS, whose check also runs in
    Params, the run form and the API (the same words there, tested with them)."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2 and message in capsys.readouterr().err


# -- progress on stderr, and the terminal's correlation grid --------------------------------------------------------

REPORT = ("report", DATASET, "--ratings", RATINGS, "--aux", "rouge_l", *FULL)


def _module(*argv: str, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "metaeval", *argv], capture_output=True, text=True, cwd=ROOT,
                          check=False, **kwargs)


def test_progress_is_silent_when_stderr_is_piped(tmp_path):
    quiet = _module(*REPORT, "--out-dir", str(tmp_path / "quiet"))
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""  # no bar, no carriage returns in a log file
    # -v in process (stderr a StringIO, not a terminal, as a pipe is not): the same code path, no second start-up
    code, _, verbose = run(*REPORT, "-v", "--out-dir", str(tmp_path / "verbose"))
    assert code == 0, verbose
    lines = verbose.splitlines()
    assert "\r" not in verbose and not any(line.startswith("[") for line in lines)
    for step in ("rouge_l: distances", "hj with rouge_l", "report: correlation grid with bootstrap intervals",
                 "report: permutation tests", "report: beta ablation", "report: rater agreement"):
        assert any(line.startswith(step) for line in lines), step
    assert (tmp_path / "quiet" / "report.json").read_bytes() == (tmp_path / "verbose" / "report.json").read_bytes()


def _on_a_terminal(argv: list[str], out: Path) -> tuple[int, str]:
    """Run ``python -m metaeval argv`` with stderr on a pseudo-terminal (120 columns); its exit code and what the
    terminal received."""
    import fcntl
    import os
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    with open(out, "wb") as stdout:
        process = subprocess.Popen([sys.executable, "-m", "metaeval", *argv], cwd=ROOT, stdin=subprocess.DEVNULL,
                                   stdout=stdout, stderr=slave, env={**os.environ, "TERM": "xterm"})
        os.close(slave)
        received = bytearray()
        try:
            while True:
                ready, _, _ = select.select([master], [], [], 120)
                if not ready:
                    break
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: the child closed the terminal
                    break
                if not chunk:
                    break
                received += chunk
        finally:
            os.close(master)
            code = process.wait(timeout=120)
    return code, received.decode("utf-8", "replace")


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_progress_bar_on_a_terminal(tmp_path):
    code, screen = _on_a_terminal([*REPORT, "--out-dir", str(tmp_path / "tty")], tmp_path / "stdout.txt")
    assert code == 0, screen
    frames = [frame for frame in screen.replace("\r\n", "\n").split("\r") if frame.strip()]
    bars = [frame for frame in frames if frame.startswith("[")]
    assert len(bars) >= 5  # redrawn in place as the run goes
    assert bars[0].startswith("[------------------------]   0%  0/5")
    assert any("report: permutation tests" in frame for frame in bars)
    assert "[########################] 100%  5/5" in bars[-1] and bars[-1].rstrip().endswith("done")
    percents = [int(frame[27:30]) for frame in bars]
    assert percents == sorted(percents)  # only forward
    assert "Human-judgment correlation" not in screen  # the summary stays on stdout
    assert "Human-judgment correlation" in (tmp_path / "stdout.txt").read_text()
    # drawing the bar changes no number (the run without a terminal: in process, stderr not a terminal)
    piped, _, err = run(*REPORT, "--out-dir", str(tmp_path / "piped"))
    assert piped == 0, err
    assert (tmp_path / "tty" / "report.json").read_bytes() == (tmp_path / "piped" / "report.json").read_bytes()
    quiet, _ = _on_a_terminal([*REPORT, "--no-progress", "--out-dir", str(tmp_path / "off")], tmp_path / "o.txt")
    assert quiet == 0


def test_the_grid_prints_p_values_and_n_beside_each_coefficient(tmp_path):
    from metaeval.core.display import fmt_number, fmt_p

    folder = tmp_path / "r"
    code, out, _ = run("report", DATASET, "--ratings", RATINGS, "--measures", "rouge_l,jsd", "--aux", "rouge_l",
                       "--out-dir", str(folder), "--no-cache")
    assert code == 0
    grid = out[out.index("Human-judgment correlation"):].split("\n\nWrote")[0].splitlines()
    assert grid[0] == "Human-judgment correlation of PerSEval (two-sided p-value in brackets; n = systems correlated)"
    assert grid[1].split() == ["automatic", "human", "judgment", "Pearson", "r", "Spearman", "rho", "Kendall", "tau",
                               "n"]
    with open(folder / "correlations.csv", newline="", encoding="utf-8") as handle:
        cells = list(csv.DictReader(handle))
    for line, cell in zip(grid[2:4], cells, strict=True):
        expected = [cell["auto_measure"], cell["hj_measure"]]
        for method in ("pearson", "spearman", "kendall"):
            p = fmt_p(float(cell[f"{method}_p"]))
            expected.append(f"{fmt_number(float(cell[method]))} (p {p if p.startswith('<') else '= ' + p})")
        expected.append(cell["n"])
        assert line.split() == " ".join(expected).split(), line
    # on the demo, ROUGE-L against its own HJ variant is about 1 over 10 systems (JSD is not): the grid says so
    assert [cell["pearson"][:4] for cell in cells] == ["0.99", "0.86"]
    assert any(line.startswith("  warning: 1 of 2 Pearson r values are +-1 (|r| >= 0.99)") for line in grid)
    assert all(ord(char) < 128 for char in "\n".join(grid))  # plain ASCII for any terminal


def test_grid_text_warns_about_few_systems_and_undefined_cells():
    from metaeval.cli.correlate import grid_text

    nan = float("nan")
    grid = [
        {"auto_measure": "rouge_l", "hj_measure": "hj:rouge_l", "n": 5, "pearson": 0.61, "pearson_p": 0.27,
         "spearman": 0.5, "spearman_p": 0.39, "kendall": 0.4, "kendall_p": 0.48, "note": ""},
        {"auto_measure": "jsd", "hj_measure": "hj:rouge_l", "n": 5, "pearson": nan, "pearson_p": nan,
         "spearman": nan, "spearman_p": nan, "kendall": nan, "kendall_p": nan,
         "note": "undefined: x is constant over the 5 pairs"},
    ]
    text = "\n".join(grid_text(grid))
    assert "0.6100 (p = 0.270)" in text and "n/a" in text
    assert "warning: Few systems: every correlation rests on fewer than 8 systems (n = 5)" in text
    assert "warning: Undefined: 1 of 2 correlations could not be computed (undefined: x is constant" in text


def test_compat_icopernicus_is_authors_compat_with_four_decimals():
    code, rounded, err = run("score", DATASET, "--measures", "jsd", "--compat", "icopernicus", "--format", "json")
    assert code == 0, err
    code, spelled, err = run("score", DATASET, "--measures", "jsd", "--compat", "authors", "--egises-decimals", "4",
                             "--format", "json")
    assert code == 0, err
    code, plain, err = run("score", DATASET, "--measures", "jsd", "--compat", "authors", "--format", "json")
    assert code == 0, err
    rows, same, unrounded = (json.loads(text)["scores"] for text in (rounded, spelled, plain))
    assert rows == same
    assert all(row["egises"] == round(row["egises"], 4) for row in rows)
    assert any(row["egises"] != other["egises"] for row, other in zip(rows, unrounded, strict=True))
