"""Latency from the planned send time (issue 19, item 2): the analysis gives TTFT and E2E from the
schedule beside the usual ones, and when the client lagged (schedule lag p99 above the
client-validity threshold) the TTFT/E2E verdicts are read from them and say so; a client that
kept the schedule keeps today's figures. Hand-built timings, real DuckDB."""

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.judge import figures as claims
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.replay.client_validity.calibration import CLIENT_LIMITED_LAG_MS
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict

REQUESTS = 400


def spec() -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["candidates"] = data["candidates"][:1]
    data["candidates"][0]["name"] = "c"
    data["claim"]["figures"] = {"ttft_ms_p99": 25, "e2e_ms_p99": 60, "tpot_ms_p50": 12}
    return Spec.model_validate(data)


def figures(tmp_path: Path, late_ms: int) -> dict[str, dict]:
    """Every request: TTFT 10 ms and E2E 50 ms from its actual send, sent `late_ms` after its plan."""
    rows = [timing(f"q{i}", S + i * 20 * MS, 10 * MS, 50 * MS, tokens=5, late_ns=late_ms * MS) for i in range(REQUESTS)]
    path = write_parquet(pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA), tmp_path / "raw.parquet")
    computed = tables.analyse_all(path, spec())
    lags = claims.schedule_lags(computed["throughput"].to_pylist())
    assert lags["c"] == pytest.approx(late_ms)
    out = claims.latency_figures(spec(), computed["latency_percentiles"].to_pylist(), lags)
    return {f["metric"]: f for f in out}


def test_the_schedule_based_figures_sit_beside_the_usual_ones(tmp_path: Path):
    by_metric = figures(tmp_path, late_ms=3)
    assert by_metric["ttft_ms_p99"]["measured"] == pytest.approx(10.0)
    assert by_metric["ttft_from_schedule_ms_p99"]["measured"] == pytest.approx(13.0)
    assert by_metric["e2e_from_schedule_ms_p50"]["measured"] == pytest.approx(53.0)
    assert by_metric["ttft_from_schedule_ms_p99"]["n"] == REQUESTS


def test_a_client_that_kept_the_schedule_keeps_todays_verdicts(tmp_path: Path):
    by_metric = figures(tmp_path, late_ms=3)  # below the threshold
    assert CLIENT_LIMITED_LAG_MS > 3
    ttft = by_metric["ttft_ms_p99"]
    assert ttft["measured"] == pytest.approx(10.0) and ttft["verdict"] == "holds" and "timed_from" not in ttft


def test_a_lagging_client_has_its_latency_verdicts_read_from_the_schedule_and_says_so(tmp_path: Path):
    by_metric = figures(tmp_path, late_ms=30)  # above the threshold: the wait would be hidden
    ttft, e2e, tpot = by_metric["ttft_ms_p99"], by_metric["e2e_ms_p99"], by_metric["tpot_ms_p50"]
    assert ttft["measured"] == pytest.approx(40.0) and ttft["verdict"] == "not reproduced"
    assert e2e["measured"] == pytest.approx(80.0) and e2e["verdict"] == "not reproduced"
    assert (
        "planned send time" in ttft["timed_from"]
        and "client lagged" in ttft["timed_from"]
        and "it is 10 ms" in ttft["timed_from"]
    )
    assert "timed_from" not in tpot  # TPOT does not depend on when the request was sent
