# socialpub — `make run` and `make test` each set up .venv themselves.
SHELL := /bin/bash
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export SOCIALPUB_DATA_DIR ?= $(CURDIR)/.socialpub
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run serve test test-sqlite test-postgres bench lint setup clean fuzz bytecode

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	@$(PY) -m pip install -q --upgrade pip
	@$(PY) -m pip install -q -e '.[dev]'
	@touch $(STAMP)

## make run: set up, initialise a sandbox workspace in ./.socialpub if there is none, open the TUI on it
## (the embedded backend: SQLite, sandbox networks, the worker in the same process).
run: $(STAMP)
	@$(PY) -m backend.operator.devrun --prepare-only
	@$(VENV)/bin/socialpub tui --data-dir "$(SOCIALPUB_DATA_DIR)"

## make serve: the same data dir, served as the /v1 API on http://$(HOST):$(PORT) with the worker.
serve: $(STAMP)
	@$(PY) -m backend.operator.devrun --host $(HOST) --port $(PORT)

## make test: set up; ruff and the layer rules; the API fuzz; the whole suite on SQLite, then on PostgreSQL
## (the pytest runs come last so that the run's closing lines are their summaries).
test: $(STAMP) lint bytecode fuzz test-sqlite test-postgres

## make bytecode: the project's modules compiled once, so that the suite's many subprocesses (CLI, serve, worker,
## tui) read .pyc files even where PYTHONDONTWRITEBYTECODE=1 (as on the CI machines) stops Python writing them.
bytecode: $(STAMP)
	@$(PY) -m compileall -q -j 0 backend socialpub_tui recipes tests bench > /dev/null

## make lint: ruff (lint, and `ruff format` as the house style), the layer rules of pyproject.toml [tool.importlinter]
## (docs/architecture.md), and mypy, strict on every module of backend/ (pyproject.toml [tool.mypy]).
lint: $(STAMP)
	@$(VENV)/bin/ruff check .
	@$(VENV)/bin/ruff format --check .
	@$(VENV)/bin/lint-imports --no-cache
	@$(VENV)/bin/mypy --cache-dir $(VENV)/.mypy_cache

## Both pytest passes run in parallel (pytest-xdist): PYTEST_WORKERS processes (-n; `logical`: one per CPU), each
## test handed to whichever worker is free (--dist worksteal). Each worker has its own temporary dirs and, on
## PostgreSQL, its own throwaway server (tests/conftest.py, pg_url). On the 2-core CI machine 3 or 4 workers were no
## faster than 2: the passes are CPU-bound once in parallel. PYTEST_WORKERS=0: one process, test after test.
PYTEST_WORKERS ?= logical
## --durations=15: each pass lists its 15 slowest tests (setup, call, teardown) above its summary, for CI's 20 minutes.
PYTEST := $(VENV)/bin/pytest -q -p no:cacheprovider --durations=15 -n $(PYTEST_WORKERS) $(if $(filter 0,$(PYTEST_WORKERS)),,--dist worksteal)

## test-sqlite installs the tools the suite drives when missing (.ci/ensure-tools.sh: tmux, for the TUI's
## end-to-end test; .ci/ensure-pds.sh: Bluesky's reference PDS in .cache/pds, pinned, once — in CI its failure
## fails the run, elsewhere the PDS half of tests/networks/bluesky is then skipped); test-postgres adds the
## PostgreSQL server binaries.
test-sqlite: $(STAMP)
	@bash .ci/ensure-tools.sh
	@bash .ci/ensure-pds.sh || test "$${CI:-}" != true
	@$(PYTEST)

## On PostgreSQL: everything but the TUI's pilot, snapshot and tmux tests, which reach the store only through
## the /v1 API the rest of the suite already runs there (TUI_PG=1 adds them, and they pass there),
## and the files that never open a database (pure functions, rendering: a second pass would test nothing new).
## Also left out there, for CI's 20 minutes: tests/networks and tests/generation, whose store use is the emulators'
## and the renderers' own (the API, services and CLI suites run the sandbox on PostgreSQL); `make test-postgres
## NO_DB_TESTS=` runs them too.
NO_DB_TESTS = tests/networks tests/generation tests/recipes/test_load.py tests/recipes/test_schema.py \
	tests/recipes/test_series.py tests/recipes/test_source.py tests/recipes/test_template.py tests/webhooks \
	tests/test_ids.py tests/test_logs.py
test-postgres: $(STAMP)
	@$(if $(TUI_PG),bash .ci/ensure-tools.sh,true)
	@bash .ci/ensure-postgres.sh
	@$(PYTEST) --db=postgres $(if $(TUI_PG),,--ignore=tests/tui --ignore=tests/e2e) \
		$(foreach t,$(NO_DB_TESTS),--ignore=$(t))

## make fuzz: schemathesis (every operation, --checks all, bounded examples) against a server on a fresh sandbox
## data dir on loopback; 0 failures and 0 server errors or it fails. FUZZ_ARGS='--max-examples 50' for more.
fuzz: $(STAMP)
	@$(PY) tests/api/fuzz_run.py $(FUZZ_ARGS)

bench: $(STAMP)
	@mkdir -p bench/results
	@for b in bench/*.py; do echo "== $$b"; $(PY) $$b || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache
