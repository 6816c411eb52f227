"""Intervals that allow for dependence (pipeline/analysis/statistics/dependence.py): the batch-means
arithmetic on hand-checked numbers, and the analysis widening an interval where the values of a
run move together (gaps within one request, latencies of requests sent close together)."""

import math
import random
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.statistics import dependence
from pipeline.analysis.statistics.stats import OrderStatisticRanks
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, record, timing
from tests.support.specs import demo_spec_dict


def spec(intervals: str = "dependence_aware") -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["sla"] = {"ttft_ms": 100}
    data["candidates"][0]["name"] = "c"
    data.setdefault("analysis", {})["intervals"] = intervals
    return Spec.model_validate(data)


def test_ratio_standard_error_by_hand():
    # batches (below, total): (8, 10), (2, 10): share 0.5; deviations 3 and −3;
    # se = sqrt(2/1 · 18) / 20 = 6 / 20
    share, se = dependence.ratio_standard_error([8, 2], [10, 10], batches=2)
    assert share == 0.5 and se == pytest.approx(0.3)
    # a missing batch held nothing: it still counts as a batch
    share, se = dependence.ratio_standard_error([8, 2], [10, 10], batches=3)
    assert se == pytest.approx(math.sqrt(3 / 2 * 18) / 20)
    assert dependence.ratio_standard_error([5], [10], batches=1) is None
    assert dependence.design_effect(0.5, 0.3, 20) == pytest.approx(0.09 / (0.25 / 20))


def test_woodruff_ranks_and_the_wider_end():
    # q 0.5 ± 2 · 0.1 over 100 values: shares 0.3 and 0.7 → ranks 30 and 70
    assert dependence.woodruff_ranks(100, 0.5, 0.1, 2.0) == (30, 70)
    assert dependence.woodruff_ranks(100, 0.99, 0.01, 2.0) == (97, None)  # past the sample: open
    exact = OrderStatisticRanks(point=50, low=40, high=61)
    assert dependence.wider_ranks(exact, 30, 70) == (30, 70, True)
    assert dependence.wider_ranks(exact, 45, 55) == (40, 61, False)
    assert dependence.wider_ranks(exact, 45, None) == (40, None, True)
    assert dependence.wider_interval((0.8, 0.9), (0.7, 0.95)) == (0.7, 0.95, True)
    assert dependence.wider_interval((0.8, 0.9), (None, None)) == (0.8, 0.9, False)
    low, high = dependence.mean_interval([1.0, 3.0], dependence.t_quantile(2, 0.95))
    assert (low, high) == pytest.approx((2 - 12.706 * 1 / 1, 2 + 12.706 * 1 / 1), rel=1e-3)


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    return write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")


def test_gaps_of_one_request_are_a_cluster_not_independent_draws(tmp_path: Path):
    """100 requests, each streaming 60 tokens at its own steady pace (a slow one is slow for
    every gap): 5,900 gaps but only 100 independent paces. The exact interval of ITL p50 treats
    the gaps as 5,900 draws; the batch-means one sees the requests."""
    rng = random.Random(3)
    rows = []
    for i in range(100):
        sent, pace_ns = i * S // 5, int(rng.lognormvariate(math.log(20), 0.4) * MS)
        chunks = [sent + 50 * MS + k * pace_ns for k in range(60)]
        rows.append(record(f"q{i}", sent, chunks, chunks[-1] + MS))
    path = _write(tmp_path, rows)

    def itl_p50(intervals: str) -> dict:
        rows = tables.latency_percentiles(path, spec(intervals)).to_pylist()
        return next(r for r in rows if r["metric"] == "itl_ms" and r["scope"] == "all" and r["percentile"] == "p50")

    exact, aware = itl_p50("independent"), itl_p50("dependence_aware")
    assert exact["n"] == aware["n"] == 100 * 59
    assert aware["value"] == exact["value"]
    assert aware["design_effect"] > 10  # about the 59 gaps a request holds, less the batches' luck
    assert aware["interval_method"].startswith("batch means (5 send-time batches, t")
    assert aware["ci_high"] - aware["ci_low"] > 3 * (exact["ci_high"] - exact["ci_low"])


def test_the_inverted_low_end_by_hand():
    # q 0.99, se at the low end 0.01, t 2: share 0.97 of 500 values → rank 485; too wide: open
    assert dependence.inverted_low_rank(500, 0.99, 0.01, 2.0) == 485
    assert dependence.inverted_low_rank(500, 0.99, 0.5, 2.0) is None


def test_one_queueing_episode_cannot_set_a_p99_low_end_by_itself(tmp_path: Path):
    """500 requests, one every 0.1 s; the 30 sent in one 3-second stretch (all in one send-time
    batch) queue behind each other, TTFT 1.0-1.3 s, the rest 20-40 ms. TTFT p99 lies in the
    episode, and so do the exact and Woodruff low ends (the spread at the point is small); with
    the standard error at the low end itself, the episode's batch shows how little one episode
    says about the p99, and the low end reaches below it (a run without the episode is as likely)."""
    rng = random.Random(5)
    episode = range(300, 330)
    ttft = [(1000 + 10 * (i - 300) if i in episode else rng.uniform(20, 40)) for i in range(500)]
    path = _write(tmp_path, [timing(f"q{i}", i * S // 10, round(t * MS), 2000 * MS) for i, t in enumerate(ttft)])
    rows = tables.latency_percentiles(path, spec()).to_pylist()
    p99 = next(r for r in rows if r["metric"] == "ttft_ms" and r["scope"] == "all" and r["percentile"] == "p99")
    exact = next(
        r
        for r in tables.latency_percentiles(path, spec("independent")).to_pylist()
        if r["metric"] == "ttft_ms" and r["scope"] == "all" and r["percentile"] == "p99"
    )
    assert p99["value"] == exact["value"] >= 1000
    assert exact["ci_low"] >= 1000  # the exact interval lies in the episode
    assert p99["ci_low"] is None or p99["ci_low"] < 1000
    assert p99["interval_method"] == "batch means (5 send-time batches, t; low end by test inversion)"


def test_attainment_widens_when_misses_come_in_a_run(tmp_path: Path):
    """300 requests, one every 0.1 s; the 60 sent in one 6-second stretch all miss the 100 ms
    TTFT bound (a queueing episode), the rest meet it: Wilson treats the 60 misses as scattered."""
    rows = [timing(f"q{i}", i * S // 10, (300 if 120 <= i < 180 else 20) * MS, 500 * MS) for i in range(300)]
    path = _write(tmp_path, rows)
    exact = tables.throughput(path, spec("independent")).to_pylist()[0]
    aware = tables.throughput(path, spec()).to_pylist()[0]
    assert exact["sla_attainment"] == aware["sla_attainment"] == pytest.approx(0.8)
    assert aware["sla_attainment_ci_low"] < exact["sla_attainment_ci_low"]
    assert aware["sla_attainment_interval_method"] == "batch means (5 send-time batches, t)"
    assert exact["sla_attainment_interval_method"] == "Wilson"
    # rates always come from the batches (there is no exact method for a rate)
    assert aware["rate_interval_method"] == "batch means (5 send-time batches, t)"
    assert aware["output_tokens_per_s_ci_low"] < aware["output_tokens_per_s"] < aware["output_tokens_per_s_ci_high"]


def test_the_figures_do_not_depend_on_how_far_ahead_the_values_are_gathered(tmp_path: Path, monkeypatch):
    """TTFT and E2E that drift with a slow queue (neighbours move together) widen intervals past
    their exact ones; the bins an order statistic is read from are gathered with room for that
    (intervals.RANK_SPAN_MARGIN) and gathered again past it. None, the default or all room: the
    same table, and with none the widened intervals had their bins gathered a second time."""
    rng = random.Random(5)
    rows, queue_ms = [], 40.0
    for i in range(600):
        queue_ms = max(5.0, 0.97 * queue_ms + 0.03 * 40.0 + rng.gauss(0, 6))
        ttft = queue_ms + rng.expovariate(1 / 5)
        rows.append(timing(f"q{i}", i * S // 20, int(ttft * MS), int((ttft + 200 + rng.gauss(0, 20)) * MS), tokens=20))
    path = _write(tmp_path, rows)
    gathered_again = []
    stage = tables._stage_bin_values

    def counted(session, spans, replace=False):
        gathered_again.append(replace)
        stage(session, spans, replace)

    monkeypatch.setattr(tables, "_stage_bin_values", counted)
    by_margin, default = {}, tables.RANK_SPAN_MARGIN
    for margin in (0, default, 10**9):
        monkeypatch.setattr(tables, "RANK_SPAN_MARGIN", margin)
        gathered_again.clear()
        by_margin[margin] = tables.latency_percentiles(path, spec())
        if margin == 0:
            assert any(gathered_again)
        if margin == 10**9:
            assert not any(gathered_again)
    widened = [r for r in by_margin[0].to_pylist() if r["interval_method"].startswith("batch means")]
    assert any(r["metric"] in ("ttft_ms", "e2e_ms") for r in widened)
    assert by_margin[0] == by_margin[default] == by_margin[10**9]
