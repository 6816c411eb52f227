"""`llama`: one llama-server per real-model test module (four slots, one decode thread); a module
that needs another server defines its own. Their marks: tests/support/real_engine.py."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from pipeline.reference.llama_server import LlamaServer


@pytest.fixture(scope="module")
def llama() -> Iterator[LlamaServer]:
    with LlamaServer() as server:
        yield server
