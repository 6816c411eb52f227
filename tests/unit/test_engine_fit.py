"""The serving-profile fit (pipeline/reference/engine_fit.py) recovers the step model's knobs from
measurements made by that model, and writes a profile the reference endpoint reads back."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.reference.engine_fit import Measurements, Sample, fit, profile_yaml, request_fixed_cost_ms
from pipeline.reference.serving_profile import load_profile

PREFILL_MS, OVERHEAD_MS, DECODE_MS, SLOWDOWN = 0.8, 12.0, 40.0, 0.15


def _samples() -> Measurements:
    """What an engine with the knobs above would show: TTFT = overhead + prefill × prompt; a decode
    step with c sequences = decode × (1 + slowdown × (c − 1)), 32 tokens each."""
    measured = Measurements(slots=4)
    for prompt in (40, 150, 300, 600):
        ttft = OVERHEAD_MS + PREFILL_MS * prompt
        measured.prefill.append(Sample(ttft, ttft + 1.0, prompt, 1))
    for c in (1, 2, 4):
        step = DECODE_MS * (1 + SLOWDOWN * (c - 1))
        measured.decode[c] = [Sample(50.0, 50.0 + 31 * step, 20, 32) for _ in range(c)]
    return measured


def test_the_fit_recovers_the_step_models_knobs(tmp_path: Path):
    profile = fit(_samples(), name="fitted", model="gemma")
    assert profile["prefill_ms_per_token"] == pytest.approx(PREFILL_MS)
    assert profile["step_overhead_ms"] == 0  # a request's fixed cost is no cost of every step
    assert request_fixed_cost_ms(_samples()) == pytest.approx(OVERHEAD_MS)
    assert profile["decode_ms_per_token"] == pytest.approx(DECODE_MS)
    assert profile["decode_slowdown_per_seq"] == pytest.approx(SLOWDOWN)
    assert profile["max_running_seqs"] == 4 and profile["prefix_cache"] is False
    path = tmp_path / "fitted.yaml"
    path.write_text(profile_yaml(profile, _samples(), "a test"), encoding="utf-8")
    loaded = load_profile(str(path))
    assert loaded.decode_ms_per_token == pytest.approx(DECODE_MS) and loaded.max_running_seqs == 4
    assert path.read_text().startswith("# Fitted by `loadproof fit-profile` to a test: 4 prefill samples")
