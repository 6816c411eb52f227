"""The analysis tables beyond the basics: exact order statistics per scope, 1-second
buckets, concurrency, SLA attainment, errors by type, cost with retries, accuracy and sweeps."""

import random
from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.analysis.statistics.stats import order_statistic_ranks
from pipeline.analysis.tabulate import tables
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.files.layout import write_parquet
from pipeline.spec import Spec
from tests.support.raw_timings import MS, S, timing
from tests.support.specs import demo_spec_dict


def spec(sla: dict | None = None, analysis_section: dict | None = None, price: dict | None = None) -> Spec:
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=0, cooldown_s=0)
    data["sla"] = sla or {}
    data["candidates"][0]["name"] = "c"
    if price:
        data["candidates"][0]["price"] = price
    if analysis_section:
        data["analysis"] = analysis_section
    return Spec.model_validate(data)


def write(tmp_path: Path, rows: list[dict], extra: dict | None = None) -> Path:
    table = pa.Table.from_pylist(rows, schema=RAW_TIMING_RECORD_SCHEMA)
    for name, values in (extra or {}).items():
        table = table.append_column(name, pa.array(values))
    return write_parquet(table, tmp_path / "raw.parquet")


def test_order_statistics_match_a_full_sort_in_every_scope(tmp_path: Path):
    rng = random.Random(7)
    rows = []
    for i in range(400):
        # a few values repeat exactly (ties), the rest spread over four decades
        ttft_ns = rng.choice([5 * MS, 5 * MS, int(rng.lognormvariate(4, 1.5) * MS) + 1])
        row = timing(f"q{i}", i * S // 10, ttft_ns, ttft_ns + 200 * MS, tokens=3)
        row["prompt_tokens"] = rng.choice([10, 300, 5000])
        rows.append(row)
    path = write(tmp_path, rows)
    # the exact method on its own (intervals: independent); the dependence-aware one only widens
    # its ends, to other order statistics of the same sorted values
    table = tables.latency_percentiles(path, spec(analysis_section={"intervals": "independent"})).to_pylist()
    aware = {(r["metric"], r["scope"], r["q"]): r for r in tables.latency_percentiles(path, spec()).to_pylist()}
    by_scope = {"all": sorted(r["ttft_ms"] for r in rows)}
    for tokens, label in ((10, "0-255"), (300, "256-1023"), (5000, "4096+")):
        by_scope[label] = sorted(r["ttft_ms"] for r in rows if r["prompt_tokens"] == tokens)
    checked = 0
    for row in table:
        if row["metric"] != "ttft_ms":
            continue
        values = by_scope[row["scope"]]
        ranks = order_statistic_ranks(len(values), row["q"], 0.95)
        assert row["n"] == len(values)
        assert row["value"] == values[ranks.point - 1]
        assert row["ci_low"] == (values[ranks.low - 1] if ranks.low else None)
        assert row["ci_high"] == (values[ranks.high - 1] if ranks.high else None)
        wider = aware[(row["metric"], row["scope"], row["q"])]
        assert wider["value"] == row["value"]
        assert wider["ci_low"] is None or (wider["ci_low"] in values and wider["ci_low"] <= row["ci_low"])
        assert wider["ci_high"] is None or (wider["ci_high"] in values and wider["ci_high"] >= row["ci_high"])
        checked += 1
    assert checked == 4 * 5  # four scopes × five percentiles


def test_one_second_buckets_and_steady_flags(tmp_path: Path):
    # sent at 0..9 s, each ends 0.5 s later: one completion in each of the buckets 0..9
    rows = [timing(f"q{i}", i * S, 10 * MS, 500 * MS) for i in range(10)]
    data = demo_spec_dict()
    data["workload"]["replay"].update(warmup_s=2, cooldown_s=2)
    buckets = tables.throughput_buckets(write(tmp_path, rows), Spec.model_validate(data)).to_pylist()
    assert [b["second"] for b in buckets] == list(range(10))
    assert all(b["requests_ok"] == 1 and b["requests_sent"] == 1 and b["output_tokens"] == 100 for b in buckets)
    # window [2 s, 7.5 s]: whole seconds 2..6 lie inside it
    assert [b["second"] for b in buckets if b["steady"]] == [2, 3, 4, 5, 6]


def test_peak_and_mean_concurrency(tmp_path: Path):
    rows = [
        timing("a", 0, 10 * MS, 1000 * MS),
        timing("b", 100 * MS, 10 * MS, 1000 * MS),
        timing("c", 200 * MS, 10 * MS, 1000 * MS),
        timing("d", 1000 * MS, 10 * MS, 1000 * MS),  # sent the instant a ends: not overlapping a
    ]
    row = tables.throughput(write(tmp_path, rows), spec()).to_pylist()[0]
    assert row["peak_concurrency"] == 3
    assert row["window_s"] == pytest.approx(2.0)
    assert row["mean_concurrency"] == pytest.approx(4 * 1.0 / 2.0)  # 4 s busy over a 2 s window


def test_sla_attainment_counts_errors_as_misses(tmp_path: Path):
    rows = [timing(f"q{i}", i * S, (i + 1) * 10 * MS, 500 * MS) for i in range(8)]
    rows += [timing("bad1", 2 * S, 0, 5 * MS, error="http_5xx"), timing("bad2", 3 * S, 0, 5 * MS, error="http_429")]
    row = tables.throughput(write(tmp_path, rows), spec(sla={"ttft_ms": 40, "e2e_ms": 1000})).to_pylist()[0]
    assert row["requests_in_window"] == 10
    assert row["requests_met_ttft"] == 4 and row["requests_met_e2e"] == 8 and row["requests_good"] == 4
    assert row["sla_attainment"] == pytest.approx(4 / 10)
    assert row["sla_attainment_ci_low"] < 0.4 < row["sla_attainment_ci_high"]


def test_errors_by_type_with_every_planned_request_in_the_denominator(tmp_path: Path):
    rows = [timing(f"q{i}", i * S, 10 * MS, 500 * MS) for i in range(7)]
    rows += [timing("e1", S, 0, 5 * MS, error="http_5xx"), timing("e2", 2 * S, 0, 5 * MS, error="http_5xx")]
    rows += [timing("e3", 3 * S, 0, 5 * MS, error="total_timeout")]
    table = {r["outcome"]: r for r in tables.error_breakdown(write(tmp_path, rows), spec()).to_pylist()}
    assert {k: v["requests"] for k, v in table.items()} == {"ok": 7, "http_5xx": 2, "total_timeout": 1}
    assert table["http_5xx"]["rate"] == pytest.approx(2 / 10)
    assert table["http_5xx"]["requests_planned"] == 10
    assert table["total_timeout"]["rate_ci_low"] < 0.1 < table["total_timeout"]["rate_ci_high"]


def test_token_cost_bills_the_prompt_once_per_attempt(tmp_path: Path):
    rows = [timing("ok", 0, 10 * MS, 500 * MS), timing("retried", 100 * MS, 10 * MS, 400 * MS)]
    rows[1]["retry_count"] = 2  # three attempts sent the 10-token prompt
    price = {"usd_per_million_input_tokens": 1.0, "usd_per_million_output_tokens": 2.0}
    row = tables.cost_per_decision(write(tmp_path, rows), spec(price=price)).to_pylist()[0]
    assert row["retries"] == 2
    assert row["input_tokens_billed"] == 10 + 3 * 10
    assert row["output_tokens_billed"] == 200
    assert row["cost_usd"] == pytest.approx((40 * 1.0 + 200 * 2.0) / 1e6)
    assert row["cost_per_decision_usd"] == pytest.approx(row["cost_usd"] / 2)


def test_cost_per_decision_counts_only_correct_decisions_when_scored(tmp_path: Path):
    rows = [timing(f"q{i}", i * S, 10 * MS, 500 * MS) for i in range(10)]
    accuracy = pa.table({"candidate": ["c"], "accuracy": [0.8], "accuracy_ci_low": [0.7], "accuracy_ci_high": [0.9]})
    row = tables.cost_per_decision(write(tmp_path, rows), spec(price={"usd_per_hour": 3.6}), accuracy).to_pylist()[0]
    cost = 3.6 * 9.5 / 3600
    assert row["decisions_within_sla"] == 10 and row["accuracy"] == pytest.approx(0.8)
    assert row["useful_decisions"] == pytest.approx(8.0)
    assert row["cost_per_decision_usd"] == pytest.approx(cost / 8)
    # 10 of 10 met the SLA: Wilson [0.722, 1]; with accuracy [0.7, 0.9] → useful in [5.05, 9]
    assert row["cost_per_decision_usd_ci_low"] == pytest.approx(cost / 9)
    assert row["cost_per_decision_usd_ci_high"] == pytest.approx(cost / (10 * 0.7224672 * 0.7), rel=1e-5)
