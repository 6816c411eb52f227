"""DuckDB analysis over hand-built raw timings: percentiles, intervals, throughput, goodput, cost."""

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.duck.session import run_query
from pipeline.files.layout import write_parquet
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict


def spec(intervals: str = "dependence_aware", **sla) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["sla"] = sla
    data.setdefault("analysis", {})["intervals"] = intervals
    return Spec.model_validate(data)


@pytest.fixture()
def ten_requests(tmp_path: Path) -> Path:
    """Sent at 0..9 s; TTFT 10..100 ms (i+1)·10; E2E 500 ms; 100 output tokens each."""
    rows = [timing(f"q{i}", i * S, (i + 1) * 10 * MS, 500 * MS) for i in range(10)]
    return write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")


def _latency(path: Path, metric: str, scope: str = "all", intervals: str = "dependence_aware") -> dict:
    rows = tables.latency_percentiles(path, spec(intervals)).to_pylist()
    return {row["percentile"]: row for row in rows if row["metric"] == metric and row["scope"] == scope}


def test_ttft_percentiles_are_nearest_rank_with_order_statistic_intervals(ten_requests: Path):
    ttft = _latency(ten_requests, "ttft_ms", intervals="independent")
    assert ttft["p50"]["value"] == 50.0 and ttft["p50"]["n"] == 10
    assert ttft["p90"]["value"] == 90.0
    assert ttft["p99"]["value"] == 100.0
    assert ttft["p999"]["value"] == 100.0  # nearest rank ceil(9.99) = 10
    # p50, n=10, Binom(10, 0.5): P(≤1) = 11/1024 ≤ 0.025 < P(≤2) = 56/1024 → low rank 2;
    # P(≤7) = 968/1024 < 0.975 ≤ P(≤8) = 1013/1024 → high rank 9: [X(2), X(9)] = [20, 90].
    assert (ttft["p50"]["ci_low"], ttft["p50"]["ci_high"]) == (20.0, 90.0)
    # p99, n=10: P(Binom(10, .99) ≤ 8) = 0.0043 ≤ 0.025 → low rank 9; no rank reaches 0.975
    # above, so the interval is open above: too short to bound.
    assert ttft["p99"]["ci_low"] == 90.0 and ttft["p99"]["ci_high"] is None
    assert ttft["p50"]["interval_method"] == "order statistic"


def test_dependence_aware_intervals_are_never_narrower_than_the_exact_ones(ten_requests: Path):
    exact, aware = _latency(ten_requests, "ttft_ms", intervals="independent"), _latency(ten_requests, "ttft_ms")
    for name, row in aware.items():
        assert row["value"] == exact[name]["value"]
        assert row["ci_low"] is None or row["ci_low"] <= exact[name]["ci_low"]
        assert row["ci_high"] is None or (
            exact[name]["ci_high"] is not None and row["ci_high"] >= exact[name]["ci_high"]
        )
    # TTFT rises steadily with send time, so the five 2-second batches disagree far more than
    # independent draws would: the batch-means interval is wider, and says so
    assert aware["p50"]["interval_method"] == "batch means (5 send-time batches, t)"
    assert aware["p50"]["design_effect"] > 1


def test_tpot_and_itl_come_from_the_same_requests(ten_requests: Path):
    tpot = _latency(ten_requests, "tpot_ms")
    # TPOT = (500 − TTFT) / 99 falls as TTFT rises: rank 5 of 10 is TTFT 60 ms.
    assert tpot["p50"]["value"] == pytest.approx((500 - 60) / 99)
    itl = _latency(ten_requests, "itl_ms")
    assert itl["p50"]["n"] == 10 * 99


def test_throughput_goodput_and_error_rate(tmp_path: Path):
    rows = [timing(f"q{i}", i * S, (i + 1) * 10 * MS, 500 * MS) for i in range(10)]
    rows += [timing("bad1", 2 * S, 0, 5 * MS, error="http_5xx"), timing("bad2", 3 * S, 0, 5 * MS, error="http_5xx")]
    path = write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")
    row = tables.throughput(path, spec(ttft_ms=50)).to_pylist()[0]
    assert row["window_s"] == pytest.approx(9.5)  # first send at 0 s, last end at 9.5 s
    assert row["output_tokens_per_s"] == pytest.approx(1000 / 9.5)
    assert row["total_tokens_per_s"] == pytest.approx(1100 / 9.5)
    assert row["requests_per_s"] == pytest.approx(10 / 9.5)
    assert row["goodput_requests_per_s"] == pytest.approx(5 / 9.5)  # TTFT ≤ 50 ms: q0..q4
    # goodput in output tokens: the 100 tokens each of q0..q4 only
    assert row["goodput_output_tokens_per_s"] == pytest.approx(500 / 9.5)
    low, high = row["goodput_output_tokens_per_s_ci_low"], row["goodput_output_tokens_per_s_ci_high"]
    assert 0 <= low <= row["goodput_output_tokens_per_s"] <= high
    assert row["error_rate"] == pytest.approx(2 / 12)
    assert row["output_tokens_per_s_ci_low"] <= row["output_tokens_per_s"] <= row["output_tokens_per_s_ci_high"]


def test_warmup_and_cooldown_are_excluded(ten_requests: Path):
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=2, cooldown_s=2)
    row = tables.throughput(ten_requests, Spec.model_validate(data)).to_pylist()[0]
    # window [2 s, 7.5 s]: requests sent at 2..7 s end by 7.5 s → 6 requests
    assert row["window_s"] == pytest.approx(5.5)
    assert row["requests_in_window"] == 6


def test_hourly_cost_per_decision(ten_requests: Path):
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["candidates"][0].update(name="c", price={"usd_per_hour": 3.6, "replicas": 2})
    data["sla"] = {"ttft_ms": 50}
    row = tables.cost_per_decision(ten_requests, Spec.model_validate(data)).to_pylist()[0]
    cost = 3.6 * 2 * 9.5 / 3600
    assert row["pricing"] == "hourly"
    assert row["cost_usd"] == pytest.approx(cost)
    assert row["useful_decisions"] == 5
    assert row["cost_per_decision_usd"] == pytest.approx(cost / 5)
    assert row["cost_per_million_output_tokens_usd"] == pytest.approx(cost / 1000 * 1e6)


def test_token_cost_counts_failed_attempts_too(tmp_path: Path):
    rows = [timing("ok", 0, 10 * MS, 500 * MS), timing("bad", 100 * MS, 0, 5 * MS, error="http_5xx")]
    path = write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["candidates"][0].update(
        name="c", price={"usd_per_million_input_tokens": 1.0, "usd_per_million_output_tokens": 2.0}
    )
    row = tables.cost_per_decision(path, Spec.model_validate(data)).to_pylist()[0]
    assert row["input_tokens_billed"] == 20  # the failed attempt's prompt was sent too
    assert row["cost_usd"] == pytest.approx((20 * 1.0 + 100 * 2.0) / 1e6)


def test_token_agreement_counts_disagreements(tmp_path: Path):
    rows = [timing("a", 0, 10 * MS, 500 * MS), timing("b", S, 10 * MS, 500 * MS)]
    rows[1]["output_tokens_client"] = 97  # the client counted 3 fewer than the server reported
    path = write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")
    row = run_query("token_agreement", {"raw_timings": path}).to_pylist()[0]
    assert row["requests_compared"] == 2 and row["output_disagreeing"] == 1 and row["output_abs_diff_max"] == 3
    assert row["prompt_disagreeing"] == 0
