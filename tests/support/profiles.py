"""Serving profiles the tests write for the reference endpoint."""

from __future__ import annotations

from pathlib import Path

import yaml

# a fixed 5 ms a token, no prefill, no batching slowdown: a closed loop's sends spread over real
# time, so a stall of a loaded machine cannot empty a send-time batch
STEADY_PROFILE = {
    "name": "steady",
    "model": "reference-model",
    "version": "2026-11-01",
    "prefill_ms_per_token": 0,
    "decode_ms_per_token": 5,
    "decode_slowdown_per_seq": 0,
    "max_running_seqs": 100000,
    "default_max_tokens": 128,
    "seed": 0,
}


def steady_profile(folder: Path) -> Path:
    """STEADY_PROFILE written as `folder`/steady.yaml, for `ReferenceServer(str(path))`."""
    path = folder / "steady.yaml"
    path.write_text(yaml.safe_dump(STEADY_PROFILE))
    return path


# one sequence at a time, 10 ms a token, no prefill: 10 tokens make a 100 ms request, and a second
# request in flight waits for the first (a closed loop's TTFT grows with its concurrency)
ONE_AT_A_TIME_PROFILE = {
    "name": "one-at-a-time",
    "prefill_ms_per_token": 0.0,
    "decode_ms_per_token": 10.0,
    "decode_slowdown_per_seq": 0.0,
    "max_running_seqs": 1,
    "seed": 0,
}


def one_at_a_time_profile(folder: Path) -> Path:
    """ONE_AT_A_TIME_PROFILE written as `folder`/one-at-a-time.yaml, for `ReferenceServer(str(path))`."""
    path = folder / "one-at-a-time.yaml"
    path.write_text(yaml.safe_dump(ONE_AT_A_TIME_PROFILE))
    return path
