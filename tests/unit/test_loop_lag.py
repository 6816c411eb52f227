"""The loop's receipt lag probe, on an injected clock: no real sleeps, no timing thresholds."""

import asyncio

from pipeline.replay.loop_lag import LoopLagProbe, quantile_ms


def test_probe_records_how_late_each_wake_was_and_stops_at_the_deadline():
    now = [0]
    late_by = iter([0, 2_000_000, 0, 30_000_000, 1_000_000, 0, 0, 0])

    async def sleep(seconds: float) -> None:
        now[0] += int(round(seconds * 1e9)) + next(late_by, 0)

    probe = LoopLagProbe(deadline_ns=100_000_000, interval_ns=5_000_000, clock=lambda: now[0], sleep=sleep)
    asyncio.run(probe.run())
    assert probe.lags_ns[:5] == [0, 2_000_000, 0, 30_000_000, 1_000_000]
    assert all(lag >= 0 for lag in probe.lags_ns)
    assert now[0] < 100_000_000  # no wake is due at or after the deadline
    assert probe.p99_ms() == 30.0


def test_probe_is_bounded_by_its_sample_cap():
    now = [0]

    async def sleep(seconds: float) -> None:
        now[0] += int(round(seconds * 1e9))

    probe = LoopLagProbe(deadline_ns=10**12, interval_ns=1_000, max_samples=7, clock=lambda: now[0], sleep=sleep)
    asyncio.run(probe.run())
    assert len(probe.lags_ns) == 7


def test_quantile_is_nearest_rank_and_none_without_samples():
    assert quantile_ms([], 0.99) is None
    assert quantile_ms([1_000_000 * i for i in range(1, 101)], 0.99) == 99.0
