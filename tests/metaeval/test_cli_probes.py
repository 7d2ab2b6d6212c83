"""``python -m metaeval probes`` and ``score --pivot-styles`` (docs/conventions.md sec. 23): the CSV and JSON
contract on the paper's Table 3, bad input as one ``file:line`` line and exit 2, and the dataset path, whose
p-values are checked against a brute-force enumeration of every sign pattern."""
from __future__ import annotations

import csv
import io
import itertools
import json
import random
from decimal import Decimal
from pathlib import Path

import pytest

from metaeval.core.icopernicus.probes import ADVERSARIAL_COLUMNS, ROW_COLUMNS, SIGNIFICANCE_COLUMNS, SUMMARY_COLUMNS
from metaeval.core.io.loaders import load_corpus
from metaeval.core.perseval.pipeline import RunOptions, run_scores
from tests.metaeval.cli_run import run
from tests.metaeval.core.icopernicus_table3 import write_scores


def sections(text: str) -> tuple[list[dict[str, str]], list[dict[str, str]]]:
    """The CSV output's two tables: the rows, then (after the blank line) the summary."""
    rows, summary = text.split("\n\n")
    return list(csv.DictReader(io.StringIO(rows))), list(csv.DictReader(io.StringIO(summary)))


# ------------------------------------------------------------------------------------------------ score files
def test_probes_csv_on_table3(tmp_path):
    code, out, err = run("probes", str(write_scores(tmp_path / "t3.csv")))
    assert code == 0 and err == ""
    assert out.splitlines()[0] == ",".join(ROW_COLUMNS)
    rows, summary = sections(out)
    assert len(rows) == 17 * 6
    tie = next(row for row in rows if row["model"] == "Llama 2 7B" and row["probe"] == "PX-3")
    assert (tie["egises_a"], tie["egises_b"], tie["delta_pp"], tie["paradox"]) == ("0.408", "0.408", "0.000", "true")
    px1 = next(row for row in rows if row["model"] == "Llama 2 7B" and row["probe"] == "PX-1")
    assert (px1["delta_pp"], px1["paradox"]) == ("4.100", "false")
    assert list(summary[0]) == list(SUMMARY_COLUMNS)
    by_probe = {item["probe"]: item for item in summary}
    assert [by_probe[p]["paradox_models"] for p in ("PX-1", "PX-2", "PX-3", "PX-4", "PX-5")] == \
        ["7", "7", "8", "11", "14"]
    assert round(float(by_probe["PX-4"]["mean_boost_pp"]), 3) == 4.05
    for row in rows:  # the flag is the comparison of the printed values
        assert (row["paradox"] == "true") == (Decimal(row["egises_b"]) >= Decimal(row["egises_a"]))


def test_probes_json_defined_and_out_file(tmp_path):
    out_file = tmp_path / "out" / "probes.json"
    code, out, _ = run("probes", str(write_scores(tmp_path / "t3.csv")), "--probes", "defined", "--format", "json",
                       "--out", str(out_file))
    assert code == 0 and out == ""
    document = json.loads(out_file.read_text())
    assert set(document) == {"rows", "summary", "adversarial", "adversarial_summary", "conventions"}
    assert document["adversarial"] == [] and document["adversarial_summary"] == []
    assert document["conventions"]["probes"] == "defined" and "PX-6" not in document["conventions"]["pairs"]
    assert {item["probe"]: item["paradox_models"] for item in document["summary"]}["PX-5"] == 8
    assert all(isinstance(row["paradox"], bool) for row in document["rows"])
    assert document["rows"][0]["delta_pp"] == pytest.approx(4.1)


def test_adversarial_rows_follow_the_summary(tmp_path):
    path = tmp_path / "adv.csv"
    path.write_text("model,style,egises\nm,0-shot,0.38\nm,c-0-shot,0.40\nm,c-0-shot-adversarial,0.42\n"
                    "n,c-0-shot,0.5\n", encoding="utf-8")
    code, out, err = run("probes", str(path))
    assert code == 0 and err == ""
    rows, summary, adversarial, adversarial_summary = out.split("\n\n")
    assert [row["probe"] for row in csv.DictReader(io.StringIO(rows))] == ["PX-3"]
    worse = list(csv.DictReader(io.StringIO(adversarial)))
    assert list(worse[0]) == list(ADVERSARIAL_COLUMNS)
    assert [(w["model"], w["adversarial"], w["worsening_pp"], w["worsening_pct"], w["worsened"], w["gap_pp"],
             w["gap_adversarial_pp"]) for w in worse] == [
        ("m", "c-0-shot-adversarial", "2.00", "5", "true", "2.00", "4.00")]
    (total,) = csv.DictReader(io.StringIO(adversarial_summary))
    assert (total["probe"], total["models"], total["worsened_models"], total["mean_worsening_pp"]) == \
        ("PX-3", "1", "1", "2.00")
    code, out, _ = run("probes", str(path), "--format", "json")
    document = json.loads(out)
    assert document["adversarial"][0]["worsening_pp"] == 2.0 and document["adversarial"][0]["worsened"] is True
    assert document["adversarial_summary"][0]["mean_worsening_pct"] == 5.0


@pytest.mark.parametrize(("text", "where"), [
    ("model,style,egises\nm,0-shot,0.4\nm,1-shot,0.3\n", 's.csv:3: field "style"'),
    ("model,style,egises\nm,0-shot,0.4\nm,c-0-shot,zero\n", 's.csv:3: field "egises"'),
    ("model,style,egises\nm,0-shot,0.4\nm,0-shot,0.4\n", 's.csv:3: field "style": duplicate'),
    ("model,style\nm,0-shot\n", 's.csv:1: field "egises": missing'),
])
def test_bad_score_file_is_one_line_and_exit_2(tmp_path, text, where):
    path = tmp_path / "s.csv"
    path.write_text(text, encoding="utf-8")
    code, out, err = run("probes", str(path))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and where in err


def test_usage_errors(tmp_path):
    scores = str(write_scores(tmp_path / "t3.csv"))
    assert run("probes")[0] == 2
    assert run("probes", scores, "--dataset", scores)[0] == 2
    code, _, err = run("probes", scores, "--seed", "1")
    assert code == 2 and "--seed needs --dataset" in err
    assert run("probes", str(tmp_path / "absent.csv"))[0] == 2


# ------------------------------------------------------------------------------------------------ datasets
WORDS = ("harbor council budget river storm school vote market rail bridge vaccine court energy farm museum "
         "festival transit housing tax coach goal season league trial wildfire drought port union").split()
SYSTEMS = ("alpha:0-shot", "alpha:2-shot-wo-hist", "alpha:c-0-shot", "beta:0-shot", "beta:2-shot-w-hist",
           "baseline")
PERSONAL = "alpha:c-0-shot"


def write_dataset(path: Path, documents: int = 5, readers: int = 3, seed: int = 7) -> Path:
    """A consolidated JSON Lines dataset: per document a text, a headline, and per reader the reader's summary
    (``user``) and one per system of :data:`SYSTEMS` (random words of the document; :data:`PERSONAL` repeats the
    reader's summary)."""
    rng = random.Random(seed)
    lines = []
    for d in range(documents):
        text = [rng.choice(WORDS) for _ in range(60)]
        summaries = {}
        for r in range(readers):
            user = " ".join(rng.sample(text, 6))
            summaries[f"u{r}"] = {"user": user, **{system: " ".join(rng.sample(text, rng.randint(4, 8)))
                                                   for system in SYSTEMS}}
            summaries[f"u{r}"][PERSONAL] = user  # the reader's own summary: EGISES 0, so PX-3 passes for alpha
        lines.append(json.dumps({"doc_id": f"D{d}", "doc_summ": " ".join(text[:7]), "doc_text": " ".join(text),
                                 "m_summary_dict": summaries}))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def brute_force_p(d: list[float]) -> float:
    """Two-sided sign-flip p over all 2^n sign patterns, in plain Python."""
    observed = abs(sum(d) / len(d))
    hits = sum(abs(sum(s * x for s, x in zip(signs, d, strict=True)) / len(d)) >= observed - 1e-12
               for signs in itertools.product((1, -1), repeat=len(d)))
    return hits / 2 ** len(d)


def test_dataset_path_adds_significance_checked_by_enumeration(tmp_path):
    dataset = write_dataset(tmp_path / "data.jsonl")
    code, out, err = run("probes", "--dataset", str(dataset), "--seed", "11", "--n-boot", "300")
    assert code == 0, err
    assert "seed 11, 10000 permutations, 300 bootstrap rounds; 1 systems not named MODEL:STYLE" in err
    assert out.splitlines()[0] == ",".join((*ROW_COLUMNS, *SIGNIFICANCE_COLUMNS))
    rows, _ = sections(out)
    assert [(row["model"], row["probe"]) for row in rows] == [
        ("alpha", "PX-1"), ("alpha", "PX-3"), ("beta", "PX-2")
    ]
    assert [row["paradox"] for row in rows] == ["true", "false", "true"]
    assert float(rows[1]["p_value"]) == 2 / 32  # alpha's PX-3 gains on every document: only +-all reach it
    # per-document DEGRESS, scored directly (the rows the permutation test should see)
    result = run_scores(load_corpus(dataset), RunOptions(measures=["jsd"], workers=1))
    degress = {row.system: {doc.doc_id: doc.degress for doc in row.score.per_document} for row in result.rows}
    for row in rows:
        a, b = degress[f"{row['model']}:{row['a']}"], degress[f"{row['model']}:{row['b']}"]
        d = [b[doc] - a[doc] for doc in a]
        assert row["documents"] == "5" and row["p_exact"] == "true"  # 2^5 <= 10000: every pattern
        assert float(row["p_value"]) == pytest.approx(brute_force_p(d), abs=1e-12)
        assert float(row["mean_diff_pp"]) == pytest.approx(float(row["delta_pp"]), abs=1e-9)
        assert float(row["ci_low_pp"]) <= float(row["mean_diff_pp"]) <= float(row["ci_high_pp"])
        assert (row["paradox"] == "true") == (Decimal(row["egises_b"]) >= Decimal(row["egises_a"]))
    # the same seed gives the same table
    assert run("probes", "--dataset", str(dataset), "--seed", "11", "--n-boot", "300")[1] == out


def test_dataset_path_draws_when_enumeration_exceeds_the_permutations(tmp_path):
    dataset = write_dataset(tmp_path / "data.jsonl")
    code, out, _ = run("probes", "--dataset", str(dataset), "--seed", "1", "--permutations", "16",
                       "--n-boot", "50", "--format", "json")
    assert code == 0
    document = json.loads(out)
    assert document["conventions"]["significance"]["permutations"] == 16
    for row in document["rows"]:
        assert row["p_exact"] is False  # 2^5 = 32 > 16 drawn patterns
        assert (row["p_value"] * 17) == pytest.approx(round(row["p_value"] * 17))  # (1 + count) / 17


def test_pivot_styles_feeds_probes(tmp_path):
    dataset = write_dataset(tmp_path / "data.jsonl")
    pivot = tmp_path / "pivot.csv"
    code, _, err = run("score", str(dataset), "--measures", "jsd", "--pivot-styles", "--no-cache",
                       "--out", str(pivot))
    assert code == 0 and "1 systems not named MODEL:STYLE left out: baseline" in err
    table = list(csv.DictReader(io.StringIO(pivot.read_text())))
    assert list(table[0])[:4] == ["model", "style", "egises", "measure"]
    assert [(row["model"], row["style"], row["system"]) for row in table] == [
        (system.split(":")[0], system.split(":")[1], system) for system in SYSTEMS[:-1]
    ]
    assert all(row["measure"] == "jsd" for row in table)
    from_file = sections(run("probes", str(pivot))[1])
    from_dataset = sections(run("probes", "--dataset", str(dataset), "--seed", "0", "--n-boot", "20")[1])
    assert [{key: row[key] for key in ROW_COLUMNS} for row in from_dataset[0]] == from_file[0]
    assert from_dataset[1] == from_file[1]
    assert run("score", str(dataset), "--measures", "jsd,rouge_l", "--pivot-styles", "--no-cache")[0] == 2
