#!/usr/bin/env bash
# The core package alone (issue 30): in a fresh virtual environment in a temporary folder, `pip install .` without
# extras, then check that Django and torch are absent, that `metaeval` (the console command) and
# `python -m metaeval` agree, and that the notebook API's metaeval.score, metaeval.report and metaeval.edins on the
# demo data equal the command line's CSVs, the command line being run from the platform's .venv (`make install`);
# then adds Django (the html extra) and checks that Report.to_html from the installed package's templates is the
# page the checkout renders.
# `make check-core` runs it; CI runs it after the tests. PYTHON picks the interpreter (default python3.11).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3.11}
main_py=$root/.venv/bin/python
test -x "$main_py" || { echo "check-core needs the platform's .venv (make install)"; exit 2; }
started=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/metaeval-core-XXXXXX")
trap 'rm -rf "$work"' EXIT

# a copy of what the package is built from, so the build leaves nothing in the checkout
mkdir -p "$work/src"
cp -r pyproject.toml README.md metaeval "$work/src/"
find "$work/src" -name __pycache__ -prune -exec rm -rf {} +
"$python" -m venv "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$work/src"
core_py=$work/venv/bin/python
installed=$(date +%s)

for module in django torch transformers; do
  if "$core_py" -c "import $module" 2>/dev/null; then
    echo "check-core: $module is importable after 'pip install .' (the core must not need it)"; exit 1
  fi
done

demo=$root/fixtures/demo
# the command line's CSVs, from the platform's environment
"$main_py" -m metaeval score "$demo/consolidated.jsonl" --measures rouge_l,jsd --ratings "$demo/ratings.csv" \
  --aux rouge_l --no-cache --out "$work/cli-scores.csv"
"$main_py" -m metaeval report "$demo/consolidated.jsonl" --ratings "$demo/ratings.csv" --measures rouge_l,jsd \
  --aux rouge_l --full --seed 7 --n-boot 100 --n-permutations 100 --stability-samples 5 --no-cache \
  --out-dir "$work/cli-report" >/dev/null
"$main_py" -m metaeval edins "$demo/consolidated.jsonl" --out "$work/cli-edins.csv"

cd "$work"  # away from the checkout: the installed package is the one imported
"$work/venv/bin/metaeval" --version
"$work/venv/bin/metaeval" score "$demo/consolidated.jsonl" --measures rouge_l --no-cache > console.csv
"$core_py" -m metaeval score "$demo/consolidated.jsonl" --measures rouge_l --no-cache > module.csv
cmp console.csv module.csv
"$core_py" - "$demo" "$work" <<'PY'
import sys
from pathlib import Path

import pandas as pd

import metaeval

demo, work = Path(sys.argv[1]), Path(sys.argv[2])
assert str(Path(metaeval.__file__).resolve()).startswith(str(work / "venv")), metaeval.__file__


def same(frame: pd.DataFrame, path: Path) -> None:
    expected = pd.read_csv(path)
    assert list(frame.columns) == list(expected.columns), (path, list(frame.columns))
    pd.testing.assert_frame_equal(frame, expected, check_dtype=False, check_exact=True, obj=str(path))


dataset, ratings = demo / "consolidated.jsonl", demo / "ratings.csv"
same(metaeval.score(dataset, measures=["rouge_l", "jsd"], ratings=ratings, aux="rouge_l", no_cache=True),
     work / "cli-scores.csv")
report = metaeval.report(dataset, ratings=ratings, measures=["rouge_l", "jsd"], aux="rouge_l", seed=7, n_boot=100,
                         n_permutations=100, stability_samples=5, no_cache=True)
tables = sorted((work / "cli-report" / "tables").glob("*.csv"))
assert sorted(report.tables) == [path.stem for path in tables] and tables
for path in tables:
    same(report.tables[path.stem], path)
for name, frame in report.files.items():
    same(frame, work / "cli-report" / f"{name}.csv")
same(metaeval.edins(dataset), work / "cli-edins.csv")
assert "fig-leaderboard" in report.figures  # plotly figures, from the core alone
try:
    report.to_html(work / "nothing.html")
    raise SystemExit("check-core: Report.to_html ran without Django")
except ImportError as exc:
    assert "metaeval[html]" in str(exc), exc
import json  # noqa: E402

(work / "report.json").write_text(json.dumps(report.json), encoding="utf-8")
(work / "run.json").write_text(json.dumps(report.run), encoding="utf-8")
assert "django" not in sys.modules and "torch" not in sys.modules
print(f"check-core: metaeval.score, metaeval.report ({len(tables)} tables) and metaeval.edins equal the command "
      "line's CSVs, without Django or torch")
PY
# the html extra: Django (requirements.txt's pins) beside the core; Report.to_html from the installed package's
# templates equals the page the checkout renders for the same report (apart from the time it was written)
grep -E '^(Django|asgiref|sqlparse)==' "$root/requirements.txt" > django.txt
"$core_py" -m pip install --quiet --disable-pip-version-check -r django.txt
"$core_py" - "$work" <<'PY'
import json
import sys
from pathlib import Path

from metaeval.api import Report

work = Path(sys.argv[1])
document, run = (json.loads((work / name).read_text()) for name in ("report.json", "run.json"))
Report(tables={}, json=document, run=run, dataset="consolidated.jsonl").to_html(work / "installed.html")
PY
(cd "$root" && env -u DJANGO_SETTINGS_MODULE "$main_py" - "$work") <<'PY'
import json
import re
import sys
from pathlib import Path

from metaeval.report_page import standalone_report_html

work = Path(sys.argv[1])
document, run = (json.loads((work / name).read_text()) for name in ("report.json", "run.json"))
checkout = standalone_report_html(document, run, "consolidated.jsonl")
installed = (work / "installed.html").read_text(encoding="utf-8")
when = re.compile(r"finished \d{4}-\d\d-\d\d \d\d:\d\d")
assert len(installed) > 1_000_000 and when.search(installed), "the installed package's page is not a report"
assert when.sub("finished", installed) == when.sub("finished", checkout), "Report.to_html differs from the checkout's"
print(f"check-core: Report.to_html from the installed package ({len(installed)} characters) equals the checkout's")
PY
finished=$(date +%s)
echo "check-core: install $((installed - started)) s, checks $((finished - installed)) s"
