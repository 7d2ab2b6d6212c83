"""The notebook API (metaeval.api): each function's DataFrame equals its command's CSV output, cell for cell
(the CSV read back with full float precision), and in-memory inputs give what their files give."""
from __future__ import annotations

import doctest
import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import metaeval
from metaeval.core.io.fileio import ImportFileError
from metaeval.core.io.loaders import load_corpus
from tests.metaeval.cli_run import run

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo"
DATASET = str(DEMO / "consolidated.jsonl")
RATINGS = str(DEMO / "ratings.csv")
JUDGMENTS = str(DEMO / "judgments.csv")


def read(text: str) -> pd.DataFrame:
    return pd.read_csv(io.StringIO(text))  # pandas 3 reads floats round-trip


def assert_same(frame: pd.DataFrame, csv_text: str) -> None:
    """``frame`` has the CSV's columns, in order, and its values exactly (an empty cell is NaN)."""
    expected = read(csv_text)
    assert list(frame.columns) == list(expected.columns)
    assert len(frame) == len(expected) > 0
    pd.testing.assert_frame_equal(frame.reset_index(drop=True), expected, check_dtype=False, check_exact=True)


def cli(*argv: str) -> str:
    code, out, err = run(*argv)
    assert code == 0, err
    return out


def test_import_metaeval_loads_neither_django_nor_the_numeric_stack() -> None:
    code = ("import sys, metaeval; heavy = [m for m in ('django', 'numpy', 'pandas', 'torch') if m in sys.modules]; "
            "assert not heavy, heavy; metaeval.score; assert 'django' not in sys.modules; print(metaeval.__version__)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == metaeval.__version__
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        metaeval.nothing  # noqa: B018


@pytest.mark.parametrize("with_ratings", [False, True])
def test_score_equals_the_command(with_ratings: bool, tmp_path: Path) -> None:
    extra = ["--ratings", RATINGS, "--aux", "rouge_l"] if with_ratings else []
    expected = cli("score", DATASET, "--measures", "rouge_l,jsd", "--beta", "1.7", "--no-cache", *extra)
    frame = metaeval.score(DATASET, measures=["rouge_l", "jsd"], beta=1.7, no_cache=True,
                           **({"ratings": RATINGS, "aux": "rouge_l"} if with_ratings else {}))
    assert list(frame.columns[:6]) == ["system", "measure", "egises", "degress", "perseval", "accuracy"]
    assert_same(frame, expected)
    if with_ratings:  # in memory: the Corpus, the records and the ratings DataFrame give the same frame
        records = [json.loads(line) for line in Path(DATASET).read_text(encoding="utf-8").splitlines()]
        for dataset in (load_corpus(DATASET), records):
            again = metaeval.score(dataset, measures=["rouge_l", "jsd"], beta=1.7, no_cache=True,
                                   ratings=pd.read_csv(RATINGS), aux=["rouge_l"])
            pd.testing.assert_frame_equal(again, frame)


def test_correlate_equals_the_command(tmp_path: Path) -> None:
    scores_csv = tmp_path / "scores.csv"
    cli("score", DATASET, "--measures", "rouge_l,jsd", "--ratings", RATINGS, "--aux", "rouge_l,jsd", "--no-cache",
        "--out", str(scores_csv))
    expected = cli("correlate", str(scores_csv))
    assert_same(metaeval.correlate(str(scores_csv)), expected)
    in_memory = metaeval.score(DATASET, measures="rouge_l,jsd", ratings=RATINGS, aux="rouge_l,jsd", no_cache=True)
    assert_same(metaeval.correlate(in_memory), expected)
    assert_same(metaeval.correlate(in_memory, column="egises"), cli("correlate", str(scores_csv), "--column", "egises"))


@pytest.fixture(scope="module")
def cli_report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("report")
    cli("report", DATASET, "--ratings", RATINGS, "--measures", "rouge_l,jsd", "--aux", "rouge_l", "--full",
        "--seed", "7", "--n-boot", "60", "--n-permutations", "60", "--stability-samples", "6", "--no-cache",
        "--out-dir", str(folder))
    return folder


@pytest.fixture(scope="module")
def api_report() -> metaeval.Report:
    return metaeval.report(DATASET, ratings=RATINGS, measures=["rouge_l", "jsd"], aux=["rouge_l"], seed=7, n_boot=60,
                           n_permutations=60, stability_samples=6, no_cache=True)


def test_report_equals_the_command(cli_report: Path, api_report: metaeval.Report) -> None:
    files = sorted(path.stem for path in (cli_report / "tables").glob("*.csv"))
    assert sorted(api_report.tables) == files and len(files) > 10
    for name in files:
        assert_same(api_report.tables[name], (cli_report / "tables" / f"{name}.csv").read_text(encoding="utf-8"))
    assert list(api_report.files) == ["scores", "correlations", "documents", "readers"]
    for name, frame in api_report.files.items():
        assert_same(frame, (cli_report / f"{name}.csv").read_text(encoding="utf-8"))
    assert json.loads(json.dumps(api_report.json)) == json.loads((cli_report / "report.json").read_text())
    run_json = json.loads((cli_report / "run.json").read_text())
    def timeless(document: dict) -> dict:  # run-specific: the wall times
        distances = [{k: v for k, v in row.items() if "seconds" not in k} for row in document["distances"]]
        return {**document, "timings": None, "distances": distances}

    assert timeless(json.loads(json.dumps(api_report.run))) == timeless(run_json)
    assert api_report.scores is api_report.files["scores"]


def test_report_figures_are_the_pages(api_report: metaeval.Report) -> None:
    from metaeval.core.perseval.figures import figures_json, report_figures

    figures = api_report.figures
    assert {"fig-leaderboard", "fig-heatmap", "fig-beta", "fig-stability", "fig-raters"} <= set(figures)
    assert all(type(figure).__name__ == "Figure" for figure in figures.values())
    assert set(figures) == set(report_figures(api_report.json))
    page = json.loads(figures_json(api_report.json))  # what the report page embeds
    assert page["fig-leaderboard"] == json.loads(figures["fig-leaderboard"].to_json())


def test_report_in_memory_inputs_give_the_same_tables(api_report: metaeval.Report) -> None:
    again = metaeval.report(load_corpus(DATASET), ratings=pd.read_csv(RATINGS), measures="rouge_l,jsd", aux="rouge_l",
                            seed=7, n_boot=60, n_permutations=60, stability_samples=6, no_cache=True)
    for name, frame in api_report.tables.items():
        pd.testing.assert_frame_equal(again.tables[name], frame)
    assert again.json["tables"] == api_report.json["tables"]


@pytest.mark.parametrize("table", ["ratings", "wtl"])
def test_pairwise_equals_the_command(table: str) -> None:
    expected = cli("pairwise", JUDGMENTS, "--seed", "3", "--n-boot", "80", "--table", table)
    frame = metaeval.pairwise(JUDGMENTS, seed=3, n_boot=80, table=table)
    assert_same(frame, expected)
    assert frame.attrs["seed"] == 3
    in_memory = metaeval.pairwise(pd.read_csv(JUDGMENTS, dtype=str, keep_default_na=False), seed=3, n_boot=80,
                                  table=table)
    pd.testing.assert_frame_equal(in_memory, frame)


def test_edins_equals_the_command() -> None:
    assert_same(metaeval.edins(DATASET), cli("edins", DATASET))
    frame = metaeval.edins(DATASET, gamma=0.5, ratings=RATINGS)
    assert_same(frame, cli("edins", DATASET, "--gamma", "0.5", "--ratings", RATINGS))
    assert "edins_hj" in frame.columns
    pd.testing.assert_frame_equal(metaeval.edins(load_corpus(DATASET), gamma=0.5, ratings=pd.read_csv(RATINGS)), frame)


def test_probes_equals_the_command(tmp_path: Path) -> None:
    styles = ["0-shot", "2-shot-wo-hist", "2-shot-w-hist", "c-0-shot", "c-2-shot-wo-hist", "c-2-shot-w-hist",
              "c-0-shot-adversarial"]
    table = pd.DataFrame([{"model": model, "style": style, "egises": round(0.2 + 0.01 * i + 0.03 * m, 4)}
                          for m, model in enumerate(["alpha", "beta"]) for i, style in enumerate(styles)])
    path = tmp_path / "styles.csv"
    table.to_csv(path, index=False)
    blocks = cli("probes", str(path)).split("\n\n")
    assert len(blocks) == 4
    for given in (str(path), table):
        frame = metaeval.probes(given)
        assert_same(frame, blocks[0])
        assert_same(frame.attrs["summary"], blocks[1])
        assert_same(frame.attrs["adversarial"], blocks[2])
        assert_same(frame.attrs["adversarial_summary"], blocks[3])


def test_bad_arguments_raise_the_commands_message() -> None:
    with pytest.raises(ValueError, match=r"metaeval.score: argument --beta: .*11"):
        metaeval.score(DATASET, beta=11)
    with pytest.raises(ValueError, match="unrecognized arguments: --no-such-flag"):
        metaeval.edins(DATASET, no_such_flag=1)
    with pytest.raises(TypeError, match="out: not an argument"):
        metaeval.score(DATASET, out="x.csv")
    ratings = pd.read_csv(RATINGS)
    ratings.loc[3, "rating"] = 9
    with pytest.raises(ImportFileError, match=r"ratings.csv:5"):
        metaeval.score(DATASET, ratings=ratings, aux="rouge_l", no_cache=True)


def test_docstring_examples_run(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    import metaeval.api

    result = doctest.testmod(metaeval.api, extraglobs={"metaeval": metaeval},
                             optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    assert result.attempted >= 15
    assert result.failed == 0
