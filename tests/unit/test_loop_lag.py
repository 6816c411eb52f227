"""The loop's receipt lag probe, on an injected clock: no real sleeps, no timing thresholds."""

import asyncio

from pipeline.replay.pacing.loop_lag import LoopLagProbe, quantile_ms


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


def test_an_instrument_error_over_a_quarter_of_the_tolerance_keeps_a_latency_from_holding():
    from pipeline.analysis.statistics.stats import (
        HOLDS,
        HOLDS_WITHIN_TOLERANCE,
        INCONCLUSIVE,
        INSTRUMENT_ERROR_RULE,
        NOT_REPRODUCED,
        instrument_verdict,
    )

    latency = "latency percentile"
    # the demo: a 250 ms TTFT p95 claim, tolerance 10 % (25 ms): a quarter is 6.25 ms
    assert instrument_verdict(HOLDS, 250.0, 0.1, 6.25, latency) == (HOLDS, None)
    assert instrument_verdict(HOLDS, 250.0, 0.1, 12.0, latency) == (INCONCLUSIVE, INSTRUMENT_ERROR_RULE)
    assert instrument_verdict(HOLDS_WITHIN_TOLERANCE, 250.0, 0.1, 7.0, latency)[0] == INCONCLUSIVE
    assert instrument_verdict(NOT_REPRODUCED, 250.0, 0.1, 40.0, latency) == (NOT_REPRODUCED, None)
    assert instrument_verdict(HOLDS, 250.0, 0.1, None, latency) == (HOLDS, None)  # not measured: unchanged
    assert instrument_verdict(HOLDS, 100.0, 0.1, 40.0, "rate") == (HOLDS, None)  # only latency figures
    assert "workload.replay.shards" in INSTRUMENT_ERROR_RULE
