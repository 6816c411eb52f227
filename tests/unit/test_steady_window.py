"""The steady-state window is a span of *send* times: every production request sent inside it
counts, however long it then takes. Ending inside it is not required: the slowest requests sent
just before the cool-down cut are the ones a window by end time would drop, which biases tail
latency down (issue 16, item 5)."""

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

SLOW_E2E_NS = 3 * S


def spec() -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=2, cooldown_s=5)
    data["sla"] = {"e2e_ms": 1000}
    data["candidates"][0]["name"] = "c"
    return Spec.model_validate(data)


@pytest.fixture()
def slow_at_the_end(tmp_path: Path) -> Path:
    """One fast request a second for 30 s (200 ms each); the three sent at 24.0, 24.1 and 24.2 s,
    just before the cool-down cut (last end 30.2 s − 5 s = 25.2 s), take 3 s and end after it."""
    rows = [timing(f"fast{i}", i * S, 20 * MS, 200 * MS) for i in range(31)]
    rows += [timing(f"slow{i}", 24 * S + i * 100 * MS, 50 * MS, SLOW_E2E_NS) for i in range(3)]
    table = pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA)
    return write_parquet(table, tmp_path / "raw.parquet")


def test_slow_requests_sent_before_the_cooldown_cut_are_kept(slow_at_the_end: Path):
    figures = tables.analyse_all(slow_at_the_end, spec())
    throughput = figures["throughput"].to_pylist()[0]
    # window [2 s, 25.2 s] by send time: fast2..fast25 (24) and the three slow ones
    assert throughput["window_s"] == pytest.approx(23.2)
    assert throughput["requests_in_window"] == 27
    assert throughput["requests_good"] == 24  # the slow ones miss the 1 s E2E bound: counted as misses
    assert throughput["output_tokens"] == 27 * 100
    e2e = {
        row["percentile"]: row
        for row in figures["latency_percentiles"].to_pylist()
        if row["metric"] == "e2e_ms" and row["scope"] == "all"
    }
    assert e2e["p99"]["n"] == 27
    assert e2e["p99"]["value"] == pytest.approx(SLOW_E2E_NS / MS)  # the tail is the slow requests
    # their inter-chunk gaps are in the steady window too (ITL is read from the histogram)
    steady_gaps = sum(r["gaps"] for r in figures["itl_histogram"].to_pylist() if r["in_steady_window"])
    assert steady_gaps == 27 * 99
    cost = figures["cost_per_decision"].to_pylist()[0]
    assert cost["requests_in_window"] == 27 and cost["decisions_within_sla"] == 24


def test_throughput_buckets_attribute_each_request_to_its_send_second(slow_at_the_end: Path):
    """The batch-means interval of a rate is built from the steady buckets: they must hold the
    same requests as the rate's numerator (those sent in the window), else the interval would be
    centred elsewhere than the figure."""
    buckets = tables.throughput_buckets(slow_at_the_end, spec()).to_pylist()
    second_24 = next(b for b in buckets if b["second"] == 24)
    assert second_24["requests_sent"] == 4 and second_24["requests_ok"] == 4
    assert second_24["output_tokens"] == 400
    assert all(b["requests_ok"] == 0 for b in buckets if b["second"] > 30)
