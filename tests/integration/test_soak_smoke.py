"""A short soak (2,000 requests at 400/s against the zero-delay endpoint): the replay's RSS does
not grow over the second half beyond a stated bound. The 100,000-request soak is bench/soak.py
(figures in docs/reliability.md); this bound is on memory, not time."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from bench.loadproof_client import constant_rate_plan
from bench.soak import rss_mib
from pipeline.reference import ReferenceServer
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table

pytestmark = pytest.mark.slow

REQUESTS, RATE = 2_000, 400.0
SECOND_HALF_GROWTH_BOUND_MIB = 16.0  # the 100,000-request soak grew +0.0 MiB over its second half
SAMPLE_EVERY_S = 0.1


def test_replay_rss_stays_flat_over_a_short_soak(tmp_path: Path) -> None:
    plan = constant_rate_plan(RATE, REQUESTS / RATE, 16)
    samples: list[float] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            samples.append(rss_mib())
            stop.wait(SAMPLE_EVERY_S)

    with ReferenceServer("zero") as server, Journal(tmp_path / "soak.jsonl") as journal:
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        try:
            stats = run_replay(
                plan,
                Target("soak", server.base_url, "reference-model"),
                ReplaySettings(mode="rate", max_duration_s=120),
                "soak",
                journal,
            )
        finally:
            stop.set()
            sampler.join()
    assert stats.sent == REQUESTS and stats.errors == 0 and stats.unsent == 0
    assert journal_to_table(tmp_path / "soak.jsonl").num_rows == REQUESTS
    assert len(samples) >= 10
    half = len(samples) // 2
    growth = max(samples[half:]) - samples[half]
    assert growth <= SECOND_HALF_GROWTH_BOUND_MIB, (
        f"RSS grew {growth:.1f} MiB over the second half: {samples[half]:.0f} → {max(samples[half:]):.0f}"
    )
