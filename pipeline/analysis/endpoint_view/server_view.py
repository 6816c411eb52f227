"""The server's own view of the production replay, from data/server_metrics.parquet (issue 18 item 2).

Why: when the tail moves, the client's timings cannot say why; the server's queue (requests
running and waiting) and KV-cache use over the replay, beside the client's TTFT at each send,
can. And the server's own TTFT histogram is a second witness of the client's figures: a large
gap between its percentiles and the client's says the client measured itself (its event loop,
its connection pool, the network) rather than the server, a client-validity note.

Families of vLLM, SGLang, TGI and llama.cpp map to canonical series here (`SERIES`); the queries
(sql/server_metrics_*.sql, sql/server_ttft_buckets.sql, sql/client_ttft_replay.sql) read it as a
bound view. A percentile of a Prometheus histogram is estimated as Prometheus'
`histogram_quantile` does: linear within the bucket that holds the rank (the lowest bucket
starts at 0; a rank in the +Inf bucket gives that bucket's lower bound).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.analysis.tabulate.repeats import first_run
from pipeline.contracts import RAW_TIMINGS, SERVER_METRICS, SWEEP_TIMINGS
from pipeline.duck.session import QuerySession
from pipeline.files.layout import PackLayout

# family (as prometheus_client's parser names it: a counter without `_total`) → canonical series.
# Gauges: running, waiting, kv_cache_use (a share 0-1), prefix_cache_hit_rate (a share, where the
# server exports one); counters: preemptions (requests pre-empted or retracted, cumulative),
# prefix_cache_hits and prefix_cache_queries (tokens, cumulative: the hit rate over an interval is
# their differences' ratio); histograms: ttft_histogram, e2e_histogram (seconds). Each server's
# names, with their source, are in tests/fixtures/server_metrics/<server>.prom.
SERIES: dict[str, str] = {
    # vLLM (V1's vllm/v1/metrics/loggers.py; the reference endpoint uses the same names)
    "vllm:num_requests_running": "running",
    "vllm:num_requests_waiting": "waiting",
    "vllm:kv_cache_usage_perc": "kv_cache_use",
    "vllm:gpu_cache_usage_perc": "kv_cache_use",  # before vLLM 0.10: the same share, older name
    "vllm:num_preemptions": "preemptions",
    "vllm:prefix_cache_hits": "prefix_cache_hits",
    "vllm:prefix_cache_queries": "prefix_cache_queries",
    "vllm:gpu_prefix_cache_hit_rate": "prefix_cache_hit_rate",  # V0's gauge
    "vllm:time_to_first_token_seconds": "ttft_histogram",
    "vllm:e2e_request_latency_seconds": "e2e_histogram",
    # SGLang (python/sglang/srt/metrics/collector.py)
    "sglang:num_running_reqs": "running",
    "sglang:num_queue_reqs": "waiting",
    "sglang:token_usage": "kv_cache_use",
    "sglang:num_retracted_requests": "preemptions",  # a retraction is SGLang's pre-emption
    "sglang:cache_hit_rate": "prefix_cache_hit_rate",
    "sglang:time_to_first_token_seconds": "ttft_histogram",
    "sglang:e2e_request_latency_seconds": "e2e_histogram",
    # TGI (docs: reference/metrics; no KV-cache, pre-emption, prefix-cache or TTFT metric)
    "tgi_batch_current_size": "running",
    "tgi_queue_size": "waiting",
    "tgi_request_duration": "e2e_histogram",
    # llama.cpp's server (tools/server: `--metrics`; no histograms)
    "llamacpp:requests_processing": "running",
    "llamacpp:requests_deferred": "waiting",
    "llamacpp:kv_cache_usage_ratio": "kv_cache_use",
}
SERIES_SCHEMA = pa.schema([("family", pa.string()), ("series", pa.string())])

# a client percentile differing from the server's estimate by more than this share of it *and*
# lying outside the histogram bucket that holds the estimate (the estimate can be anywhere in
# that bucket) is a large gap: the client's figure is not the server's
GAP_SHARE = 0.25


@dataclass
class ServerView:
    """Per candidate: the server's series per scrape, the client's TTFT per request, and the
    server's TTFT histogram over the replay (cumulative counts by upper bound, +Inf last)."""

    timeline: list[dict]
    client_ttft: list[dict]
    ttft_buckets: dict[str, list[tuple[float, float]]]
    e2e_buckets: dict[str, list[tuple[float, float]]] = field(default_factory=dict)


def read_server_view(layout: PackLayout) -> ServerView | None:
    """The server's view of the production replay; None without server metrics (none scraped,
    or a pack written before they were)."""
    metrics = layout.path(SERVER_METRICS)
    if not metrics.is_file():
        return None
    return server_view(metrics, first_run(layout.path(RAW_TIMINGS)))


def server_view(server_metrics: Path | pa.Table, raw_timings: Path | pa.Table) -> ServerView:
    views = {SERVER_METRICS.name: server_metrics, RAW_TIMINGS.name: raw_timings}
    with QuerySession(views) as session:
        session.bind("server_metric_series", _series_table())
        session.stage("server_metrics_by_candidate")
        timeline = session.run("server_metrics_timeline").to_pylist()
        buckets = session.run("server_ttft_buckets").to_pylist()
        client = session.run("client_ttft_replay").to_pylist()
    by_series: dict[str, dict[str, list[tuple[float, float]]]] = {"ttft_histogram": {}, "e2e_histogram": {}}
    for row in buckets:
        by_series[row["series"]].setdefault(row["candidate"], []).append((row["le"], row["cumulative"]))
    return ServerView(timeline, client, by_series["ttft_histogram"], by_series["e2e_histogram"])


def server_levels(layout: PackLayout) -> list[dict]:
    """Per candidate and load level (the production replay's, then each sweep level's): the
    server's requests running and waiting and its KV-cache use over that level's replay, mean and
    maximum over its scrapes (sql/server_metrics_levels.sql); none without server metrics."""
    metrics, sweep = layout.path(SERVER_METRICS), layout.path(SWEEP_TIMINGS)
    if not metrics.is_file():
        return []
    views: dict[str, Path | pa.Table] = {
        SERVER_METRICS.name: metrics,
        RAW_TIMINGS.name: first_run(layout.path(RAW_TIMINGS)),
    }
    views[SWEEP_TIMINGS.name] = sweep if sweep.is_file() else _no_sweep()
    with QuerySession(views) as session:
        session.bind("server_metric_series", _series_table())
        return session.run("server_metrics_levels").to_pylist()


def _no_sweep() -> pa.Table:
    schema = SWEEP_TIMINGS.file_schema
    assert schema is not None
    return schema.empty_table()


def _series_table() -> pa.Table:
    rows = [{"family": family, "series": series} for family, series in SERIES.items()]
    return pa.Table.from_pylist(rows, schema=SERIES_SCHEMA)


def histogram_quantile(q: float, buckets: list[tuple[float, float]]) -> tuple[float, float, float] | None:
    """The q-quantile of a cumulative histogram [(upper bound, count ≤ it)] sorted by bound, with
    the bounds of the bucket holding it: (estimate, lower, upper); None when it counted nothing."""
    if not buckets or buckets[-1][1] <= 0:
        return None
    rank = q * buckets[-1][1]
    lower, below = 0.0, 0.0
    for upper, cumulative in buckets:
        if cumulative >= rank and cumulative > below:
            if math.isinf(upper):
                return lower, lower, upper
            return lower + (upper - lower) * (rank - below) / (cumulative - below), lower, upper
        lower, below = upper, cumulative
    return None


def ttft_comparison(view: ServerView) -> list[dict]:
    """Per candidate with a server TTFT histogram: the server's p50/p95 estimates (ms) beside the
    client's over the same replay, and whether any of them differs by a large gap."""
    client: dict[str, list[float]] = {}
    client_e2e: dict[str, list[float]] = {}
    for request in view.client_ttft:
        client.setdefault(request["candidate"], []).append(request["ttft_ms"])
        if request.get("e2e_ms") is not None:
            client_e2e.setdefault(request["candidate"], []).append(request["e2e_ms"])
    rows = []
    for candidate, buckets in sorted(view.ttft_buckets.items()):
        values = client.get(candidate, [])
        row: dict = {
            "candidate": candidate,
            "server_requests": int(buckets[-1][1]) if buckets else 0,
            "client_requests": len(values),
            "large_gap": False,
        }
        for q, name in ((0.5, "p50"), (0.95, "p95")):
            server = histogram_quantile(q, buckets)
            mine = _percentile(values, q) if values else None
            row[f"server_ttft_ms_{name}"] = server[0] * 1000 if server else None
            row[f"client_ttft_ms_{name}"] = mine
            if server and mine is not None:
                row["large_gap"] = row["large_gap"] or large_gap(mine / 1000, *server)
            # the server's E2E histogram beside the client's E2E, where it exports one (no gap rule)
            server_e2e = histogram_quantile(q, view.e2e_buckets.get(candidate, []))
            e2e = client_e2e.get(candidate, [])
            row[f"server_e2e_ms_{name}"] = server_e2e[0] * 1000 if server_e2e else None
            row[f"client_e2e_ms_{name}"] = _percentile(e2e, q) if e2e else None
        rows.append(row)
    return rows


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q * 100, method="inverted_cdf"))


def large_gap(client_s: float, server_s: float, lower_s: float, upper_s: float) -> bool:
    """A gap beyond the histogram's resolution and beyond `GAP_SHARE` of the server's figure."""
    outside = client_s < lower_s or client_s > upper_s
    return outside and abs(client_s - server_s) > GAP_SHARE * max(server_s, 1e-9)


def cold_cache_note(profile: dict, warm_prefixes: bool, warm_up_requests: int) -> dict | None:
    """Whether a replay of the window alone undercounts the prefix-cache hits production gets
    (issue 18 item 5): the window is shorter than the log and its prefix blocks, seen alone, are
    reused less than the whole log's (the profile's prefix_block_reuse_share of each: the blocks an
    earlier request also sent); with the warm-up the replay sent first. None without prefix blocks."""
    log = profile.get("log") or {}
    window_share, log_share = profile.get("prefix_block_reuse_share"), log.get("prefix_block_reuse_share")
    if window_share is None or log_share is None:
        return None
    window_s, log_s = profile.get("span_s"), log.get("span_s")
    shorter = window_s is not None and log_s is not None and window_s < log_s
    return {
        "window_span_s": window_s,
        "log_span_s": log_s,
        "window_reuse_share": window_share,
        "log_reuse_share": log_share,
        "cold_cache_undercounts": shorter and window_share < log_share,
        "warm_prefixes": warm_prefixes,
        "warm_up_requests": warm_up_requests if warm_prefixes else 0,
    }
