# All set-up happens through these targets; see README.md and docs/reference/commands.md.
PYTHON ?= python3
# Python caches compiled modules (__pycache__, git-ignored) even where the environment says not to: without the
# cache every test process and every command a test starts compiles the project again, and pytest rewrites the
# asserts of all 217 test modules in each xdist worker (13 s of a worker's collection instead of 4.5 s)
unexport PYTHONDONTWRITEBYTECODE
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install browser migrate demo run serve worker loadtest test test-postgres lint docs report-demo bench bench-neural clean check-core

install: $(STAMP)

$(STAMP): requirements.txt requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements-dev.txt
	touch $(STAMP)

# Debian's chromium drives the browser test (Playwright uses /usr/bin/chromium, never its own download).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-dejavu-core; }

migrate: install
	DEBUG=1 $(PY) manage.py migrate --noinput

demo: migrate wordnet-optional
	DEBUG=1 $(PY) manage.py load_demo
	DEBUG=1 $(PY) manage.py metaeval_report --dataset demo --study demo --seed 2026 --unless-exists --judgments demo \
	  --measures rouge_l,rouge_su4,bleu4,jsd,bertscore --aux rouge_l,jsd

# The dev server and, beside it, a Celery worker on a folder-on-disk broker (no Redis needed); both stop together
# (Ctrl-C). No beat (-B): the worker reclaims stale runs itself (docs/guide/workers.md), and a kill -9 of the
# worker would leave an embedded beat running. CELERY_BROKER_URL=redis://... uses Redis instead.
run: export CELERY_BROKER_URL ?= filesystem://
run: demo
	@echo ""
	@echo "  Participant:  http://$(HOST):$(PORT)/s/demo/"
	@echo "  Researcher:   http://$(HOST):$(PORT)/research/"
	@echo "  Admin:        http://$(HOST):$(PORT)/admin/"
	@echo ""
	@mkdir -p $${CELERY_QUEUE_DIR:-.celery-queue}
	DEBUG=1 $(VENV)/bin/celery -A config worker --loglevel=WARNING --concurrency 1 & worker=$$!; \
	trap 'kill $$worker 2>/dev/null; wait $$worker 2>/dev/null' EXIT INT TERM; \
	DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

# A Celery worker for production (docs/guide/workers.md): CELERY_BROKER_URL must name the broker.
worker: install wordnet-optional
	DEBUG=0 $(VENV)/bin/celery -A config worker --loglevel=INFO

# The production configuration (docs/guide/deploy.md): DEBUG off, migrations, collectstatic (hashed, compressed files
# served by whitenoise), gunicorn. Needs SECRET_KEY; DATABASE_URL selects the database (default: the SQLite file).
WEB_WORKERS ?= 4
serve: install wordnet-optional
	@test -n "$$SECRET_KEY" || { echo "make serve needs SECRET_KEY (and see docs/guide/deploy.md)"; exit 2; }
	DEBUG=0 $(PY) manage.py migrate --noinput
	DEBUG=0 $(PY) manage.py collectstatic --noinput -v0
	DEBUG=0 $(PY) manage.py check --deploy
	DEBUG=0 $(VENV)/bin/gunicorn config.wsgi --bind $(HOST):$(PORT) --workers $(WEB_WORKERS) \
	  --access-logfile - --graceful-timeout 30

# The participant flow under load (127.0.0.1 only, bounded): benchmarks/loadtest/run.sh; locust in .venv-load/.
.venv-load/.installed: benchmarks/loadtest/requirements.txt
	test -x .venv-load/bin/python || $(PYTHON) -m venv .venv-load
	.venv-load/bin/python -m pip install --quiet -r benchmarks/loadtest/requirements.txt
	touch $@
loadtest: install .venv-load/.installed
	bash benchmarks/loadtest/run.sh

# The suite on every core (pytest-xdist): each worker has its own test database (SQLite file or PostgreSQL
# database, suffixed _gw0, _gw1 ...), a file's tests stay on one worker (--dist loadfile: module fixtures such as the
# demo load run once), heavy files first (tests/conftest.py). One worker more than there are cores: the suite waits
# about a third of its time (browsers, live servers, Celery leases), which a third worker on 2 cores fills (4 min 42 s
# against 5 min 16 s with two, docs/guide/performance.md); each worker on one BLAS/OpenMP thread, since more threads
# per worker fight the other workers for the cores (and spin while they wait). TEST_WORKERS=N sets the number of
# workers; TEST_WORKERS=0 runs it in one process, with the libraries' own thread counts.
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 1 )))
PYTEST_XDIST = $(if $(filter 0,$(TEST_WORKERS)),,-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder)
PYTEST_THREADS = $(if $(filter 0,$(TEST_WORKERS)),,OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1)
test: install browser wordnet
	$(PYTEST_THREADS) $(PY) -m pytest $(PYTEST_XDIST)

# the core package alone (issue 30): `pip install .` into a fresh venv in a temporary folder, no Django nor torch,
# metaeval.score/report/edins equal to the command line's CSVs (scripts/check_core_install.sh; CI runs it)
check-core: install
	bash scripts/check_core_install.sh

# style (ruff, pyproject.toml) and types (mypy with django-stubs); CI runs this before the tests
lint: install
	$(VENV)/bin/ruff check .
	DEBUG=1 $(VENV)/bin/mypy

# the documentation site (mkdocs.yml) into site/, warnings as errors; offline. `.venv/bin/mkdocs serve` serves it.
docs: install
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

test-postgres: install browser wordnet
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} $(PYTEST_THREADS) $(PY) -m pytest \
	  $(PYTEST_XDIST)

# WordNet 3.0 for METEOR and the authors' preprocessing, from Debian's packages (no NLTK downloader needed).
# Installs into NLTK_DATA (env) if set, else $(VENV)/nltk_data; fast when already done. `wordnet` (the tests) stops
# when it cannot; `wordnet-optional` (run, demo, serve, worker) says what METEOR needs and goes on without it
# (METEOR and --preprocess authors are then listed as unavailable).
.PHONY: wordnet wordnet-optional
wordnet:
	NLTK_DATA="$${NLTK_DATA:-$(abspath $(VENV))/nltk_data}" bash scripts/install_wordnet.sh
wordnet-optional:
	@NLTK_DATA="$${NLTK_DATA:-$(abspath $(VENV))/nltk_data}" bash scripts/install_wordnet.sh --optional

# The demo dataset and its ratings through every lexical measure, HJ variants and correlations (no database).
report-demo: install wordnet-optional
	$(PY) -m metaeval report fixtures/demo/consolidated.jsonl --ratings fixtures/demo/ratings.csv \
	  --aux rouge_l,rouge_su4,bleu4,jsd,meteor --out-dir artifacts/demo-report

# PENS-scale metaeval benchmark (prints figures; not part of the tests). BENCH_ARGS="--docs 400" for a quick run.
bench: install
	$(PY) benchmarks/metaeval_bench.py $(BENCH_ARGS)

# InfoLM and BERTScore: texts/s, end to end, and torchmetrics one pair at a time vs ours (random-weight BERT models).
# BENCH_NEURAL_ARGS="--config base --device cuda --dtype bfloat16" on a GPU machine.
bench-neural: install
	$(PY) benchmarks/neural_bench.py $(BENCH_NEURAL_ARGS)

clean:
	rm -rf $(VENV) db.sqlite3 .test-db-*.sqlite3 artifacts static/vendor site
