"""prompt_profile figures against values computed independently here (numpy / pure Python)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from pipeline.spec.workload import ProfileSettings
from pipeline.workload.logs import ingest_log
from pipeline.workload.profile import profile_requests
from tests.support.canonical_logs import write_canonical
from tests.support.shared_data import shared_data

AZURE_DIR = shared_data("azure_llm_2023_conv")


@pytest.fixture()
def requests(tmp_path: Path):
    rng = np.random.default_rng(5)
    n = 500
    offsets = np.cumsum(rng.exponential(0.2, size=n))
    offsets[200:260] = offsets[200] + np.linspace(0, 1.0, 60)  # a burst: 60 requests in one second
    offsets = np.sort(offsets)
    prompts = rng.integers(1, 20_000, size=n)
    outputs = rng.integers(1, 600, size=n)
    latency = rng.uniform(100, 3000, size=n)
    system = {"role": "system", "content": "s"}
    user, assistant = {"role": "user", "content": "u"}, {"role": "assistant", "content": "a"}
    shapes = [[user], [system, user], [user, assistant, user], [system, user, assistant, user]]
    messages = [json.dumps(shapes[i % 4]) for i in range(n)]
    structured = [i % 5 == 0 for i in range(n)]
    prefixes = [[i % 3, 100 + i] for i in range(n)]
    path = write_canonical(
        tmp_path / "requests.parquet",
        offsets.tolist(),
        prompt_tokens=prompts.tolist(),
        output_tokens=outputs.tolist(),
        logged_latency_ms=latency.tolist(),
        messages_json=messages,
        structured_output=structured,
        prefix_hashes=prefixes,
    )
    return path, offsets, prompts, outputs, latency, structured


def test_length_quantiles_and_histograms_match_numpy(requests):
    path, _, prompts, outputs, *_ = requests
    profile = profile_requests(path)
    for name, values in (("prompt_tokens", prompts), ("output_tokens", outputs)):
        for q in (25, 50, 75, 90, 95, 99):
            assert profile[f"{name}_p{q}"] == pytest.approx(np.percentile(values, q))
        assert profile[f"{name}_max"] == values.max() and profile[f"{name}_mean"] == pytest.approx(values.mean())
        bins = [row for row in profile["histograms"] if row["kind"] == name]
        powers, counts = np.unique(np.floor(np.log2(values)).astype(int), return_counts=True)
        assert [(row["bin_low"], row["requests"]) for row in bins] == [(2**p, c) for p, c in zip(powers, counts)]
        assert sum(row["share"] for row in bins) == pytest.approx(1.0)


def test_structure_shares_and_prefix_reuse(requests):
    path, *_, structured = requests
    profile = profile_requests(path, ProfileSettings(long_context_tokens=10_000))
    assert profile["share_system_prompted"] == pytest.approx(0.5)
    assert profile["share_multi_turn"] == pytest.approx(0.5)
    assert profile["share_structured_output"] == pytest.approx(sum(structured) / len(structured))
    prompts = pq.read_table(path).column("prompt_tokens").to_numpy()
    assert profile["share_long_context"] == pytest.approx(np.mean(prompts >= 10_000))
    # blocks: [i % 3, 100 + i]: the first block repeats after the first three requests
    n = len(prompts)
    assert profile["prefix_block_reuse_share"] == pytest.approx((n - 3) / (2 * n))
    assert profile["prefix_share_requests_hit"] == pytest.approx((n - 3) / n)


def test_burstiness_matches_numpy(requests):
    path, offsets, *_ = requests
    profile = profile_requests(path, ProfileSettings(dispersion_bins_s=[1.0, 5.0], rate_bin_s=5.0))
    gaps = np.diff(offsets)
    assert profile["interarrival_cv"] == pytest.approx(gaps.std(ddof=1) / gaps.mean(), rel=1e-6)
    span = offsets[-1] - offsets[0]
    assert profile["arrival_rate_per_s"] == pytest.approx((len(offsets) - 1) / span, rel=1e-6)
    for row in profile["dispersion"]:
        width = row["bin_s"]
        whole = int(math.floor(span / width))
        relative = offsets - offsets[0]
        counts = np.bincount(np.floor(relative[relative < whole * width] / width).astype(int), minlength=whole)
        assert row["bins"] == whole
        assert row["index_of_dispersion"] == pytest.approx(counts.var(ddof=1) / counts.mean(), rel=1e-6)
        assert row["peak_to_mean"] == pytest.approx(counts.max() / counts.mean(), rel=1e-6)
    five = next(r for r in profile["dispersion"] if r["bin_s"] == 5.0)
    assert profile["peak_to_mean_ratio"] == pytest.approx(five["peak_to_mean"])
    timeline = profile["arrival_rate"]
    assert sum(row["requests"] for row in timeline) == len(offsets)
    assert timeline[1]["bin_start_s"] == 5.0


def test_concurrency_from_logged_latencies(requests):
    path, offsets, _, _, latency, _ = requests
    profile = profile_requests(path)
    rate = (len(offsets) - 1) / (offsets[-1] - offsets[0])
    assert profile["concurrency_littles_law"] == pytest.approx(rate * latency.mean() / 1000, rel=1e-4)
    starts = np.round(offsets * 1e6).astype(np.int64)
    events = sorted(
        [(s, 1) for s in starts] + [(s + int(round(ms * 1000)), -1) for s, ms in zip(starts, latency)],
        key=lambda e: (e[0], e[1]),
    )
    in_flight, peak = 0, 0
    for _, delta in events:
        in_flight += delta
        peak = max(peak, in_flight)
    assert profile["concurrency_peak_logged"] == peak


def test_shares_of_tools_json_schemas_and_reasoning_settings_read_the_request_fields(tmp_path: Path):
    tools = '{"tools": [{"type": "function", "function": {"name": "f"}}], "tool_choice": "auto"}'
    schema = '{"response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {}}}}'
    fields = [tools, schema, '{"reasoning_effort": "high", "temperature": 0}', None]
    path = write_canonical(tmp_path / "r.parquet", [0.0, 1.0, 2.0, 3.0], request_fields=fields)
    profile = profile_requests(path)
    assert profile["share_with_tools"] == pytest.approx(1 / 4)
    assert profile["share_json_schema"] == pytest.approx(1 / 4)
    assert profile["share_reasoning_setting"] == pytest.approx(1 / 4)


def test_length_only_logs_leave_structure_unknown(tmp_path: Path):
    path = write_canonical(tmp_path / "r.parquet", [0.0, 1.0, 3.0])
    profile = profile_requests(path)
    assert profile["share_multi_turn"] is None and profile["share_structured_output"] is None
    assert profile["share_with_tools"] is None and profile["share_reasoning_setting"] is None
    assert profile["concurrency_littles_law"] is None and profile["prefix_block_reuse_share"] is None
    assert profile["share_with_text"] == 0


@pytest.mark.skipif(not AZURE_DIR.is_dir(), reason="../shared/data/azure_llm_2023_conv is absent")
def test_real_azure_hour_profile_matches_numpy(tmp_path: Path):
    rows, _ = ingest_log(AZURE_DIR / "*.csv", "azure_csv").tables()
    path = tmp_path / "azure.parquet"
    pq.write_table(rows, path)
    profile = profile_requests(path)
    prompts, outputs = rows.column("prompt_tokens").to_numpy(), rows.column("output_tokens").to_numpy()
    assert profile["requests"] == 19_366
    assert profile["prompt_tokens_p50"] == pytest.approx(np.percentile(prompts, 50))
    assert profile["output_tokens_p99"] == pytest.approx(np.percentile(outputs, 99))
    arrivals = np.sort(np.array([t.timestamp() for t in rows.column("arrival_at").to_pylist()]))
    gaps = np.diff(arrivals)
    assert profile["interarrival_cv"] == pytest.approx(gaps.std(ddof=1) / gaps.mean(), rel=1e-4)
    assert 0.8 < profile["interarrival_cv"] < 1.3  # near-Poisson, as the trace's paper describes
