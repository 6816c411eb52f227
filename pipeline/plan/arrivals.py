"""Arrival offsets, computed up front and seeded (as vLLM's load generator does).

- trace: the logged offsets, time-scaled (`time_scale` 0.5 = twice as fast);
- constant / poisson / gamma: a synthetic open-loop process at `rate_per_s`; gamma's
  `burstiness` is its shape (1 = Poisson, < 1 burstier, > 1 more regular), mean rate unchanged;
- ramp-up: the rate grows linearly from 0 to `rate_per_s` over `ramp_up_s` (time-warped so the
  expected count in [0, t] is the integral of the ramped rate).
"""

from __future__ import annotations

import math

import numpy as np


def scaled_trace(offsets_s: list[float], time_scale: float) -> list[float]:
    if time_scale <= 0:
        raise ValueError(f"time_scale must be > 0, got {time_scale}")
    return [offset * time_scale for offset in offsets_s]


def synthetic(
    count: int,
    rate_per_s: float,
    process: str,
    seed: int,
    burstiness: float = 1.0,
    ramp_up_s: float = 0.0,
) -> list[float]:
    """`count` arrival offsets (seconds, non-decreasing, the first at 0) for an open-loop process."""
    if count <= 0:
        return []
    if rate_per_s <= 0:
        raise ValueError(f"rate_per_s must be > 0, got {rate_per_s}")
    rng = np.random.default_rng(seed)
    mean_gap = 1.0 / rate_per_s
    if process == "constant":
        gaps = np.full(count - 1, mean_gap)
    elif process == "poisson":
        gaps = rng.exponential(mean_gap, count - 1)
    elif process == "gamma":
        if burstiness <= 0:
            raise ValueError(f"burstiness must be > 0, got {burstiness}")
        gaps = rng.gamma(shape=burstiness, scale=mean_gap / burstiness, size=count - 1)
    else:
        raise ValueError(f"unknown arrival process {process!r}; known: constant, poisson, gamma")
    offsets = np.concatenate([[0.0], np.cumsum(gaps)])
    return [_ramp(float(t), rate_per_s, ramp_up_s) for t in offsets]


def _ramp(t: float, rate: float, ramp_up_s: float) -> float:
    """Map a full-rate arrival time onto a linearly ramped rate.

    Under a ramp, the expected arrivals by time τ are rate·τ²/(2R) for τ ≤ R and
    rate·(τ − R/2) after it; solving rate·t = that for τ keeps every arrival's rank.
    """
    if ramp_up_s <= 0:
        return t
    if t <= ramp_up_s / 2:
        return math.sqrt(2 * ramp_up_s * t)
    return t + ramp_up_s / 2
