"""Every check rule fails on crafted bad data and passes on good."""

import json
from pathlib import Path

import pyarrow as pa

from pipeline import checks
from pipeline.hashing import sha256_file


def test_reject_rate():
    assert checks.reject_rate_within_budget(99, 1, 0.05).passed
    assert not checks.reject_rate_within_budget(90, 10, 0.05).passed
    assert not checks.reject_rate_within_budget(0, 0, 0.05).passed


def test_sample_within_window():
    assert checks.sample_within_window(pa.table({"window_offset_s": [0.0, 59.9]}), 60).passed
    assert not checks.sample_within_window(pa.table({"window_offset_s": [0.0, 60.0]}), 60).passed
    assert not checks.sample_within_window(pa.table({"window_offset_s": pa.array([], pa.float64())}), 60).passed


def _profile(**overrides) -> dict:
    base = {f"{k}_{q}": v for k in ("prompt_tokens", "output_tokens") for q, v in (("p50", 10), ("p90", 20), ("p99", 30), ("max", 40))}
    return {**base, "arrival_rate_per_s": 2.0, "requests": 10, **overrides}


def test_quantiles_ordered():
    assert checks.quantiles_ordered(_profile()).passed
    assert not checks.quantiles_ordered(_profile(output_tokens_p90=5)).passed
    assert not checks.quantiles_ordered(_profile(arrival_rate_per_s=0)).passed


def _plan(ids, offsets, max_tokens=None) -> pa.Table:
    return pa.table({"request_id": ids, "scheduled_offset_s": offsets, "max_tokens": max_tokens or [4] * len(ids)})


def test_plan_well_formed():
    assert checks.plan_well_formed(_plan(["a", "b"], [0.0, 1.0])).passed
    assert not checks.plan_well_formed(_plan(["a", "a"], [0.0, 1.0])).passed
    assert not checks.plan_well_formed(_plan(["a", "b"], [1.0, 0.5])).passed
    assert not checks.plan_well_formed(_plan(["a", "b"], [0.0, 1.0], [4, 0])).passed


def test_one_row_per_planned_request():
    plan = _plan(["a", "b"], [0.0, 1.0])
    good = pa.table({"request_id": ["a", "b"], "candidate": ["x", "x"]})
    assert checks.one_row_per_planned_request(plan, good, ["x"]).passed
    missing = pa.table({"request_id": ["a"], "candidate": ["x"]})
    assert not checks.one_row_per_planned_request(plan, missing, ["x"]).passed
    doubled = pa.table({"request_id": ["a", "b", "b"], "candidate": ["x", "x", "x"]})
    assert not checks.one_row_per_planned_request(plan, doubled, ["x"]).passed


def _lifecycle(**overrides) -> pa.Table:
    row = {"t_sent_ns": 0, "t_first_byte_ns": 1, "t_first_token_ns": 2, "t_last_token_ns": 3, "t_end_ns": 4, "ttft_ms": 2e-6, "e2e_ms": 4e-6, "tpot_ms": 1e-6}
    row.update(overrides)
    return pa.Table.from_pylist([row])


def test_lifecycle_ordered():
    assert checks.lifecycle_ordered(_lifecycle()).passed
    assert not checks.lifecycle_ordered(_lifecycle(t_first_token_ns=9)).passed
    assert not checks.lifecycle_ordered(_lifecycle(ttft_ms=5.0, e2e_ms=4.0)).passed
    assert not checks.lifecycle_ordered(_lifecycle(tpot_ms=-1.0)).passed


def _latency(values, ci=(None, None)) -> pa.Table:
    rows = [
        {"candidate": "x", "metric": "ttft_ms", "q": q, "value": v, "ci_low": ci[0], "ci_high": ci[1]}
        for q, v in zip((0.5, 0.9, 0.95, 0.99), values)
    ]
    return pa.Table.from_pylist(rows)


def test_percentiles_ordered():
    assert checks.percentiles_ordered(_latency([1, 2, 3, 4])).passed
    assert not checks.percentiles_ordered(_latency([1, 3, 2, 4])).passed
    assert not checks.percentiles_ordered(_latency([1, 2, 3, 4], ci=(5, 9))).passed


def _throughput(**overrides) -> pa.Table:
    row = {"candidate": "x", "output_tokens_per_s": 10.0, "total_tokens_per_s": 12.0, "requests_per_s": 1.0, "goodput_requests_per_s": 0.5, "window_s": 10.0, "output_tokens": 100}
    row.update(overrides)
    return pa.Table.from_pylist([row])


def test_throughput_consistent():
    assert checks.throughput_consistent(_throughput()).passed
    assert not checks.throughput_consistent(_throughput(goodput_requests_per_s=2.0)).passed
    assert not checks.throughput_consistent(_throughput(output_tokens=90)).passed
    assert not checks.throughput_consistent(_throughput(requests_per_s=float("nan"))).passed


def test_cost_non_negative():
    assert checks.cost_non_negative(pa.Table.from_pylist([{"candidate": "x", "cost_usd": 0.1}])).passed
    assert not checks.cost_non_negative(pa.Table.from_pylist([{"candidate": "x", "cost_usd": -0.1}])).passed


def test_lineage_hashes_match(tmp_path: Path):
    (tmp_path / "data").mkdir()
    raw = tmp_path / "data" / "raw.parquet"
    raw.write_bytes(b"rows")
    sql = tmp_path / "q.sql"
    sql.write_text("SELECT 1")
    lineage = {"sql": "q.sql", "sql_sha256": sha256_file(sql), "staged_sql": [], "inputs": [{"path": "data/raw.parquet", "sha256": sha256_file(raw), "rows": 1}]}
    pack = {"figures": [{"lineage": lineage}]}
    assert checks.lineage_hashes_match(pack, tmp_path).passed
    raw.write_bytes(b"tampered")
    assert not checks.lineage_hashes_match(json.loads(json.dumps(pack)), tmp_path).passed


def test_claims_accounted_for():
    figure = {"candidate": "x", "metric": "accuracy", "measured": 0.9}
    pack = {"claim": {"figures": {"accuracy": 0.92}}, "figures": [figure]}
    assert checks.claims_accounted_for(pack).passed
    assert not checks.claims_accounted_for({**pack, "figures": [{**figure, "measured": None}]}).passed
    assert checks.claims_accounted_for({**pack, "figures": [{**figure, "measured": None, "reason": "no slice"}]}).passed
    other = {"candidate": "y", "metric": "ttft_ms_p95", "measured": 1.0}
    assert not checks.claims_accounted_for({**pack, "figures": [figure, other]}).passed  # y has no accuracy
