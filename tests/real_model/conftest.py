"""`llama`: one llama-server per real-model test module (four slots, two decode threads); a module
that needs another server defines its own. Their marks: tests/support/real_engine.py.

Two decode threads: `make test` runs these tests after the rest, alone on the machine's two cores.
With one, the sweep's knee (test_real_model.py) was within run-to-run noise: level 4 decoded 55-58
tokens/s against level 1's 42-63 over four runs, and fell below it in one fresh-clone CI. With two,
101-105 against 70-72 (2026-12-02, two runs on this 2-core machine).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.reference.llama_server import LlamaServer


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    with LlamaServer(n_threads=2) as server:
        yield server
