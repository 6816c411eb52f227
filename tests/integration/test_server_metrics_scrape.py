"""The replay's /metrics scraper against the reference endpoint over loopback: every sample
kept on the monotonic clock; a server without /metrics is one warning and no rows."""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import pyarrow.parquet as pq

from pipeline.contracts import SERVER_METRICS
from pipeline.files.layout import PackLayout
from pipeline.reference import ReferenceServer
from pipeline.replay.endpoint.server_metrics import (
    SAMPLE_SCHEMA,
    ScrapesBeside,
    ServerMetricsScraper,
    metrics_url,
    server_metrics_beside,
)
from pipeline.replay.pacing.engine import Target
from tests.support.prometheus_fixtures import fixture, serving

MODEL = "reference-model"


def pytest_fail_on_warning(message: str) -> None:
    raise AssertionError(message)


def test_metrics_url_is_at_the_server_root() -> None:
    assert metrics_url("http://127.0.0.1:8100/v1") == "http://127.0.0.1:8100/metrics"
    assert metrics_url("http://host/v1/") == "http://host/metrics"
    assert metrics_url("http://host/api") == "http://host/api/metrics"


def test_scraper_keeps_every_sample_beside_the_load() -> None:
    with ReferenceServer("demo") as server, httpx.Client(base_url=server.base_url) as client:
        begun = time.perf_counter_ns()
        with ServerMetricsScraper(metrics_url(server.base_url), interval_s=0.01) as scraper:
            sent = 0
            while scraper.scrapes < 3 and not scraper.warnings:  # load until three scrapes are in (no sleeping)
                body = {"model": MODEL, "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 2}
                client.post("/chat/completions", json=body)
                sent += 1
        ended = time.perf_counter_ns()
    table = scraper.table()
    assert table.schema == SAMPLE_SCHEMA and not scraper.warnings
    rows = table.to_pylist()
    assert {r["scrape"] for r in rows} == set(range(scraper.scrapes))
    times = [r["t_ns"] for r in rows]
    assert times == sorted(times) and begun <= times[0] and times[-1] <= ended
    families = {r["family"] for r in rows}
    assert {"vllm:num_requests_running", "vllm:kv_cache_usage_perc", "vllm:time_to_first_token_seconds"} <= families
    success = [r for r in rows if r["sample"] == "vllm:request_success_total"]
    assert json.loads(success[-1]["labels_json"]) == {"model_name": MODEL}
    assert 0 <= success[-1]["value"] <= sent
    assert any(r["sample"] == "vllm:time_to_first_token_seconds_bucket" and "le" in r["labels_json"] for r in rows)


def test_a_server_without_metrics_is_a_warning_and_no_rows() -> None:
    with ReferenceServer("zero") as server:
        with ServerMetricsScraper(f"{server.root_url}/no-metrics-here", interval_s=0.01) as scraper:
            pass
    assert scraper.table().num_rows == 0 and scraper.scrapes == 0
    assert len(scraper.warnings) == 1 and "404" in scraper.warnings[0]


@dataclass
class _Replay:
    server_metrics_interval_s: float | None
    max_duration_s: float = 60.0


def test_shard_zero_writes_the_samples_with_the_run_id_and_other_shards_nothing(tmp_path: Path) -> None:
    warnings: list[str] = []
    with ReferenceServer("zero") as server:
        layout = PackLayout(tmp_path / "on")
        # the first scrape is sent as the scraper starts, however soon the body ends
        with server_metrics_beside(
            Target("c", server.base_url, MODEL), _Replay(0.01), 0, layout, "run-1", warnings.append
        ):
            pass
        other = PackLayout(tmp_path / "shard1")
        with server_metrics_beside(
            Target("c", server.base_url, MODEL), _Replay(0.01), 1, other, "run-1", warnings.append
        ):
            pass
    table = pq.read_table(layout.path(SERVER_METRICS))
    assert table.num_rows > 0 and set(table.column("run_id").to_pylist()) == {"run-1"} and not warnings
    assert not other.path(SERVER_METRICS).exists()
    off = PackLayout(tmp_path / "off")
    with server_metrics_beside(
        Target("c", "http://127.0.0.1:9/v1", MODEL), _Replay(None), 0, off, "run-2", warnings.append
    ):
        pass
    assert pq.read_table(off.path(SERVER_METRICS)).num_rows == 0 and not warnings


def test_a_sweep_level_scrapes_the_server_and_its_gpu_exporter_into_its_own_scope(tmp_path: Path) -> None:
    layout = PackLayout(tmp_path)
    with ReferenceServer("zero") as server, serving([fixture("dcgm")]) as gpu_url:
        target = Target("c", server.base_url, MODEL, gpu_metrics_url=gpu_url)
        scrapes = ScrapesBeside(target, _Replay(0.01), "run-1", "load_level")
        with scrapes.around(2.0):  # the first scrape of each endpoint is sent as the level starts
            pass
        scrapes.write(layout, pytest_fail_on_warning)
    rows = pq.read_table(layout.path(SERVER_METRICS)).to_pylist()
    assert {(r["endpoint"], r["load_level"]) for r in rows} == {("server", 2.0), ("gpu", 2.0)}
    assert {r["family"] for r in rows if r["endpoint"] == "gpu"} >= {"DCGM_FI_DEV_POWER_USAGE", "DCGM_FI_DEV_GPU_UTIL"}
