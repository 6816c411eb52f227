"""The real-model tests' marks: `real_model`, skipped cleanly without the `model` extra."""

from __future__ import annotations

import pytest

from pipeline.reference.llama_server import llama_available

REAL_MODEL_MARKS = [
    pytest.mark.real_model,
    pytest.mark.skipif(not llama_available(), reason="the `model` extra (llama-server, Gemma GGUF) is not installed"),
]
