"""The pack's reading of the server's own metrics (pipeline/analysis/endpoint_view/server_view.py): histogram
percentiles estimated linearly within a bucket, the gap rule, and the attribution of scrapes to
candidates with canonical series from each server's family names."""

from __future__ import annotations

import json
import math

import pyarrow as pa

from pipeline.analysis.endpoint_view.server_view import histogram_quantile, large_gap, server_view, ttft_comparison
from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA, RUN_ID, SERVER_METRICS_SCHEMA

S = 1_000_000_000
BUCKETS = [(0.01, 0.0), (0.02, 40.0), (0.04, 90.0), (math.inf, 100.0)]


def test_a_percentile_is_linear_within_the_bucket_that_holds_its_rank():
    estimate, lower, upper = histogram_quantile(0.5, BUCKETS)  # rank 50: 10 of the 50 in (0.02, 0.04]
    assert (lower, upper) == (0.02, 0.04) and math.isclose(estimate, 0.02 + 0.02 * 10 / 50)
    estimate, lower, upper = histogram_quantile(0.2, BUCKETS)  # rank 20: half-way through (0.01, 0.02]
    assert (lower, upper) == (0.01, 0.02) and math.isclose(estimate, 0.015)
    assert histogram_quantile(0.95, BUCKETS) == (0.04, 0.04, math.inf)  # in +Inf: its lower bound
    assert histogram_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]) is None


def test_a_large_gap_is_beyond_the_bucket_and_a_quarter_of_the_estimate():
    assert not large_gap(0.035, 0.024, 0.02, 0.04)  # inside the bucket: within resolution
    assert not large_gap(0.041, 0.039, 0.02, 0.04)  # just outside, but a few per cent off
    assert large_gap(0.080, 0.024, 0.02, 0.04)


def _metrics(rows: list[tuple[int, int, str, str, dict, float, str]]) -> pa.Table:
    schema = SERVER_METRICS_SCHEMA.append(RUN_ID)
    names = ["t_ns", "scrape", "family", "sample", "labels_json", "value", "run_id"]
    records = [dict(zip(names, (t, n, f, s, json.dumps(labels), v, run))) for t, n, f, s, labels, v, run in rows]
    return pa.Table.from_pylist(records, schema=schema)


def _timings(rows: list[tuple[str, str, int, int, float]]) -> pa.Table:
    records = [
        {
            "run_id": run,
            "candidate": c,
            "request_id": f"{c}{i}",
            "status": "ok",
            "t_sent_ns": sent,
            "t_end_ns": end,
            "ttft_ms": ttft,
        }
        for i, (run, c, sent, end, ttft) in enumerate(rows)
    ]
    return pa.Table.from_pylist(records, schema=RAW_TIMING_RECORD_SCHEMA)


def test_scrapes_go_to_their_candidate_with_canonical_series_and_the_histogram_is_a_delta():
    """Two candidates in one run, one after the other: a scrape belongs to the one whose replay
    span holds it; SGLang's names map like vLLM's; the first scrape's histogram is subtracted."""
    vllm, sglang = "vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds"
    rows = []
    for n, (t, family, buckets) in enumerate(
        [(1 * S, vllm, (5, 5)), (3 * S, vllm, (9, 10)), (11 * S, sglang, (0, 0)), (13 * S, sglang, (1, 4))]
    ):
        for le, count in zip(("0.02", "+Inf"), buckets):
            rows.append((t, n % 2, family, f"{family}_bucket", {"le": le}, float(count), "r"))
    rows += [
        (3 * S, 1, "vllm:num_requests_running", "vllm:num_requests_running", {"model_name": "m"}, 3.0, "r"),
        (13 * S, 1, "sglang:num_queue_reqs", "sglang:num_queue_reqs", {}, 2.0, "r"),
        (13 * S, 1, "sglang:token_usage", "sglang:token_usage", {}, 0.5, "r"),
        (13 * S, 1, "unmapped_family", "unmapped_family", {}, 7.0, "r"),
    ]
    timings = _timings(
        [("r", "a", 1 * S, 4 * S, 10.0), ("r", "a", 2 * S, 3 * S, 30.0), ("r", "b", 11 * S, 14 * S, 5.0)]
    )
    view = server_view(_metrics(rows), timings)
    assert view.ttft_buckets == {"a": [(0.02, 4.0), (math.inf, 5.0)], "b": [(0.02, 1.0), (math.inf, 4.0)]}
    by_candidate = {(r["candidate"], r["scrape"]): r for r in view.timeline}
    assert by_candidate[("a", 1)]["running"] == 3.0 and by_candidate[("a", 1)]["second"] == 2.0
    assert (by_candidate[("b", 1)]["waiting"], by_candidate[("b", 1)]["kv_cache_use"]) == (2.0, 0.5)
    assert [(r["candidate"], r["second"]) for r in view.client_ttft] == [("a", 0.0), ("a", 1.0), ("b", 0.0)]
    a, b = ttft_comparison(view)
    assert (a["server_requests"], a["client_requests"], a["client_ttft_ms_p50"]) == (5, 2, 10.0)
    assert math.isclose(a["server_ttft_ms_p50"], 20 * 2.5 / 4)
    assert b["large_gap"]  # the client's 5 ms, where the server saw most of its requests past 20 ms


def test_the_cold_cache_note_compares_the_window_alone_with_the_whole_log():
    from pipeline.analysis.endpoint_view.server_view import cold_cache_note

    profile = {
        "span_s": 60.0,
        "prefix_block_reuse_share": 0.091,
        "log": {"span_s": 3600.0, "prefix_block_reuse_share": 0.366},
    }
    note = cold_cache_note(profile, warm_prefixes=False, warm_up_requests=12)
    assert note is not None and note["cold_cache_undercounts"] and note["warm_up_requests"] == 0
    assert cold_cache_note(profile, True, 12)["warm_up_requests"] == 12
    whole = {**profile, "span_s": 3600.0, "prefix_block_reuse_share": 0.366}
    assert not cold_cache_note(whole, False, 0)["cold_cache_undercounts"]  # the whole log replayed
    assert cold_cache_note({"log": {}}, False, 0) is None  # no prefix blocks
