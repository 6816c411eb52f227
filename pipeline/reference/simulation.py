"""Drive the serving model on a virtual clock: no sleeping, no HTTP, exactly reproducible.

`simulate(profile, arrivals)` is what the HTTP server does in real time (engine_loop.py),
minus the wall clock: at each step boundary T the engine admits every arrival with
`arrival_ns <= T`; when it has nothing to do, the clock jumps to the next arrival.
The load generators here (Poisson, bursty mixed-length) are seeded; tests and `bench/` use them.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterable
from dataclasses import dataclass, field

from pipeline.reference.serving_model import EngineCore, Sequence
from pipeline.reference.serving_profile import ServingProfile

NS_PER_S = 1_000_000_000


@dataclass(frozen=True)
class Arrival:
    """One request offered to the engine: when (virtual ns), how many tokens in and out, and
    its prompt's block hashes (prefix_cache.py; empty: nothing to share)."""

    arrival_ns: int
    prompt_tokens: int
    output_tokens: int
    block_hashes: tuple[int, ...] = ()


@dataclass
class Simulation:
    """The timeline of one simulated load: every sequence plus every step."""

    requests: list[Sequence]  # in the order of the arrivals given
    step_ends_ns: list[int] = field(default_factory=list)
    step_tokens: list[int] = field(default_factory=list)
    # each sequence's token times (virtual ns), in order; filled only when asked (record_tokens)
    token_ns: dict[int, list[int]] = field(default_factory=dict)

    def output_tokens_per_s(self, window_s: float) -> float:
        """Output tokens produced in [0, window_s] of virtual time, per second."""
        limit = int(window_s * NS_PER_S)
        return sum(n for end, n in zip(self.step_ends_ns, self.step_tokens) if end <= limit) / window_s

    def ttft_ms(self) -> list[float]:
        return [(s.first_token_ns - s.arrival_ns) / 1e6 for s in self.requests if s.first_token_ns is not None]

    def e2e_ms(self) -> list[float]:
        return [(s.end_ns - s.arrival_ns) / 1e6 for s in self.requests if s.end_ns is not None]

    @property
    def preemptions(self) -> int:
        return sum(s.preemptions for s in self.requests)


def simulate(
    profile: ServingProfile, arrivals: Iterable[Arrival], until_s: float | None = None, *, record_tokens: bool = False
) -> Simulation:
    """Run `arrivals` through the engine on a virtual clock (until idle, or until `until_s`);
    with `record_tokens`, every token's time too (what a client's inter-token gaps are made of)."""
    seqs = [
        Sequence(i, a.prompt_tokens, a.output_tokens, a.arrival_ns, block_hashes=a.block_hashes)
        for i, a in enumerate(arrivals)
    ]
    order = sorted(seqs, key=lambda s: (s.arrival_ns, s.seq_id))
    core = EngineCore(profile)
    result = Simulation(requests=seqs)
    limit = None if until_s is None else int(until_s * NS_PER_S)
    now, k = 0, 0
    while True:
        while k < len(order) and order[k].arrival_ns <= now:
            core.add(order[k])
            k += 1
        if core.idle:
            if k == len(order):
                return result
            now = max(now, order[k].arrival_ns)
            continue
        if limit is not None and now >= limit:
            return result
        step = core.step(now)
        now = step.end_ns
        result.step_ends_ns.append(now)
        result.step_tokens.append(len(step.tokens))
        if record_tokens:
            for seq_id in step.tokens:
                result.token_ns.setdefault(seq_id, []).append(now)


# --- seeded load generators -------------------------------------------------------------------


def poisson_arrivals(
    rate_per_s: float, duration_s: float, prompt_tokens: int, output_tokens: int, seed: int
) -> list[Arrival]:
    """Poisson arrivals at `rate_per_s` for `duration_s`, all with the same lengths."""
    rng = random.Random(seed)
    out, t = [], rng.expovariate(rate_per_s)
    while t < duration_s:
        out.append(Arrival(int(t * NS_PER_S), prompt_tokens, output_tokens))
        t += rng.expovariate(rate_per_s)
    return out


def bursty_mixed_arrivals(
    rate_per_s: float,
    duration_s: float,
    seed: int,
    *,
    burst_factor: float = 6.0,
    burst_share: float = 0.5,
    prompt_median: int = 600,
    prompt_sigma: float = 1.2,
    output_median: int = 96,
    output_sigma: float = 0.8,
    max_tokens: int = 8000,
) -> list[Arrival]:
    """On/off bursty arrivals with log-normal prompt and output lengths, mean rate `rate_per_s`.

    Time is cut into 10-second periods; `burst_share` of each period runs at `burst_factor`
    times the quiet rate, chosen so that the mean rate stays `rate_per_s`.
    """
    rng = random.Random(seed)
    period = 10.0
    quiet = rate_per_s / (burst_share * burst_factor + (1 - burst_share))
    out: list[Arrival] = []
    t = 0.0
    while True:
        rate = quiet * burst_factor if (t % period) < burst_share * period else quiet
        t += rng.expovariate(rate)
        if t >= duration_s:
            return out
        prompt = min(max_tokens, max(1, int(prompt_median * math.exp(rng.gauss(0, prompt_sigma)))))
        output = min(max_tokens, max(1, int(output_median * math.exp(rng.gauss(0, output_sigma)))))
        out.append(Arrival(int(t * NS_PER_S), prompt, output))


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]
