"""What the reference engine counts about itself, for its `/metrics` (vLLM's families).

Pure bookkeeping, filled by `EngineCore` as it steps (so the simulation and the HTTP server count
the same): cumulative counters and two latency histograms on the engine's virtual clock, with
vLLM's bucket bounds, so a scrape of the reference endpoint reads like a scrape of vLLM.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field

# vLLM's bucket bounds (seconds) for vllm:time_to_first_token_seconds and
# vllm:e2e_request_latency_seconds.
TTFT_BUCKETS_S = (
    0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0,
    2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0,
)  # fmt: skip
E2E_BUCKETS_S = (
    0.3, 0.5, 0.8, 1.0, 1.5, 2.0, 2.5, 5.0, 10.0, 15.0, 20.0, 30.0,
    40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0,
)  # fmt: skip


@dataclass
class Histogram:
    """Prometheus-style: a value falls in the first bucket whose upper bound is ≥ it."""

    bounds: tuple[float, ...]
    counts: list[int] = field(default_factory=list)  # per bucket (not cumulative), then +Inf
    total: float = 0.0

    def __post_init__(self) -> None:
        if not self.counts:
            self.counts = [0] * (len(self.bounds) + 1)

    def observe(self, value: float) -> None:
        self.counts[bisect_left(self.bounds, value)] += 1
        self.total += value

    @property
    def count(self) -> int:
        return sum(self.counts)

    def cumulative(self) -> list[tuple[str, int]]:
        """(le, cumulative count) pairs ending with +Inf, as Prometheus exposes them."""
        out, running = [], 0
        for bound, n in zip([*map(str, self.bounds), "+Inf"], self.counts):
            running += n
            out.append((bound, running))
        return out


@dataclass
class EngineStats:
    """Cumulative counts since the engine started."""

    preemptions: int = 0
    prompt_tokens: int = 0  # of requests whose prefill completed (vLLM counts them then)
    generation_tokens: int = 0
    finished_requests: int = 0
    ttft_s: Histogram = field(default_factory=lambda: Histogram(TTFT_BUCKETS_S))
    e2e_s: Histogram = field(default_factory=lambda: Histogram(E2E_BUCKETS_S))
