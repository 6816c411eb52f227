"""The loop's receipt lag: how late the replay's own event loop wakes a task due at a known instant.

One event loop reads the sockets one at a time, so a reply that is ready waits for the loop to get
to it; a probe that asks to wake every `interval_ns` and records how late it woke measures that
wait. Its p99 is the client's timing error where the wire cannot be watched (DESIGN.md, "Instrument
error"). Bounded: it stops at `deadline_ns` or when cancelled, and keeps at most `max_samples`.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

INTERVAL_NS = 5_000_000  # wake every 5 ms
MAX_SAMPLES = 200_000  # 1000 s of 5 ms wakes; the replay's own time bound stops it earlier


@dataclass
class LoopLagProbe:
    deadline_ns: int
    interval_ns: int = INTERVAL_NS
    max_samples: int = MAX_SAMPLES
    clock: Callable[[], int] = time.perf_counter_ns
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    lags_ns: list[int] = field(default_factory=list)

    async def run(self) -> None:
        due = self.clock() + self.interval_ns
        while due < self.deadline_ns and len(self.lags_ns) < self.max_samples:
            await self.sleep(max(0.0, (due - self.clock()) / 1e9))
            woke = self.clock()
            self.lags_ns.append(max(0, woke - due))
            due = max(due + self.interval_ns, woke)  # a late wake does not queue a burst of catch-ups

    def p99_ms(self) -> float | None:
        return quantile_ms(self.lags_ns, 0.99)


def quantile_ms(lags_ns: list[int], q: float) -> float | None:
    """The nearest-rank quantile of the lags, in ms; None without samples."""
    if not lags_ns:
        return None
    ordered = sorted(lags_ns)
    rank = max(1, math.ceil(q * len(ordered)))
    return ordered[rank - 1] / 1e6
