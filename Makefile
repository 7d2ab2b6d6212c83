# All set-up happens through these targets; see README.md.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: install browser migrate demo run test test-postgres clean

install: $(STAMP)

$(STAMP): requirements.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

# Debian's chromium drives the browser test (Playwright uses /usr/bin/chromium, never its own download).
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq chromium fonts-dejavu-core; }

migrate: install
	DEBUG=1 $(PY) manage.py migrate --noinput

demo: migrate
	DEBUG=1 $(PY) manage.py load_demo

run: demo
	@echo ""
	@echo "  Participant:  http://$(HOST):$(PORT)/s/demo/"
	@echo "  Researcher:   http://$(HOST):$(PORT)/research/"
	@echo "  Admin:        http://$(HOST):$(PORT)/admin/"
	@echo ""
	DEBUG=1 $(PY) manage.py runserver $(HOST):$(PORT)

test: install browser
	$(PY) -m pytest

test-postgres: install browser
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres} $(PY) -m pytest

clean:
	rm -rf $(VENV) db.sqlite3 .test-db-*.sqlite3 artifacts
