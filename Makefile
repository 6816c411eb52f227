# The README's two set-up commands: `make demo` and `make test`. Each creates .venv if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast dev clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/loadproof demo --out out/demo

test: $(STAMP)
	$(BIN)/python -m pytest

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow"

dev: $(STAMP)
	mkdir -p out/dagster_home && cp dagster.yaml out/dagster_home/dagster.yaml
	DAGSTER_HOME=$(CURDIR)/out/dagster_home $(BIN)/dagster dev -h 127.0.0.1 -p 3000

clean:
	rm -rf out .pytest_cache
