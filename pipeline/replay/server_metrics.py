"""The candidate's own view during a replay: its Prometheus `/metrics`, scraped beside the load.

Why: when the tail moves, the client's timings cannot say why; the server's queue depth, KV-cache
use, pre-emptions and prefix-cache hits can (AIPerf, inference-perf and llm-d-benchmark scrape
them the same way). Self-hosted servers (vLLM, SGLang, TGI, llama.cpp, the reference endpoint)
expose them; a hosted API usually does not, so the scrape is optional: a first scrape that fails
turns it off with one warning, never the replay.

A background thread (its own HTTP client, never the replay's event loop, so the scrape adds no
work to the sending loop) polls at a fixed interval, bounded in count and in time, and keeps
every sample as parsed by `prometheus_client`'s text parser: the instant the scrape was sent on
the replay's monotonic clock (`time.perf_counter_ns`, the clock of raw_timings' `t_*_ns`), the
family, the sample's own name (`_bucket`, `_total`, ...), its labels as JSON and its value.
Mapping families of each server to canonical series is the analysis' business, not this one's.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Protocol

import httpx
import pyarrow as pa
from prometheus_client.parser import text_string_to_metric_families

from pipeline.contracts import RUN_ID, SERVER_METRICS, SERVER_METRICS_SCHEMA
from pipeline.pack.layout import PackLayout, write_parquet


class ReplayBounds(Protocol):
    """What the scrape reads of the spec's `workload.replay` (replay does not import the spec)."""

    @property
    def server_metrics_interval_s(self) -> float | None: ...

    @property
    def max_duration_s(self) -> float: ...


MAX_SCRAPES = 100_000  # a bound whatever the interval: 1 s for ~28 h


def metrics_url(base_url: str) -> str:
    """`/metrics` at the server's root: an OpenAI base URL's `/v1` (where it has one) dropped."""
    root = base_url.rstrip("/")
    return (root[: -len("/v1")] if root.endswith("/v1") else root) + "/metrics"


@dataclass
class ServerMetricsScraper:
    """Scrapes `url` every `interval_s` from `__enter__` to `__exit__` (at most `max_duration_s`
    and `max_scrapes`); `table()` holds every sample, `warnings` what went wrong."""

    url: str
    interval_s: float = 1.0
    max_duration_s: float = 3600.0
    max_scrapes: int = MAX_SCRAPES
    timeout_s: float = 2.0
    warnings: list[str] = field(default_factory=list)
    scrapes: int = 0
    failed_scrapes: int = 0
    _rows: dict[str, list] = field(default_factory=lambda: {name: [] for name in SERVER_METRICS_SCHEMA.names})
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> ServerMetricsScraper:
        self._thread = threading.Thread(target=self._run, name="server-metrics", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _run(self) -> None:
        deadline = time.perf_counter_ns() + int(self.max_duration_s * 1e9)
        with httpx.Client(timeout=self.timeout_s, trust_env=False) as client:
            while self.scrapes < self.max_scrapes and time.perf_counter_ns() < deadline:
                started = time.perf_counter_ns()
                if not self._scrape(client, started):
                    return
                # the next scrape on the interval's grid from this one (never a burst to catch up)
                wait_s = self.interval_s - (time.perf_counter_ns() - started) / 1e9
                if self._stop.wait(max(wait_s, 0.0)):
                    return
            if self.scrapes >= self.max_scrapes:
                self.warnings.append(f"server metrics: stopped at the bound of {self.max_scrapes} scrapes")

    def _scrape(self, client: httpx.Client, t_ns: int) -> bool:
        """One scrape; False when scraping should stop (the very first one failed)."""
        try:
            response = client.get(self.url)
            response.raise_for_status()
            families = list(text_string_to_metric_families(response.text))
        except (httpx.HTTPError, ValueError) as exc:
            self.failed_scrapes += 1
            if self.scrapes == 0:
                self.warnings.append(f"server metrics: none at {self.url} ({exc}); the replay goes on without them")
                return False
            return True
        index = self.scrapes
        self.scrapes += 1
        rows = self._rows
        for family in families:
            for sample in family.samples:
                rows["t_ns"].append(t_ns)
                rows["scrape"].append(index)
                rows["family"].append(family.name)
                rows["sample"].append(sample.name)
                rows["labels_json"].append(json.dumps(sample.labels, sort_keys=True, separators=(",", ":")))
                rows["value"].append(float(sample.value))
        return True

    def table(self) -> pa.Table:
        """Every sample kept, one row each (call after `__exit__`)."""
        return pa.table(self._rows, schema=SERVER_METRICS_SCHEMA)


@contextmanager
def server_metrics_beside(
    base_url: str, replay: ReplayBounds, shard_index: int, layout: PackLayout, run_id: str, warn: Callable[[str], None]
) -> Iterator[None]:
    """Scrape the candidate's /metrics while the body runs (the replay of one shard), then write
    data/server_metrics.parquet. One scraper per candidate: shard 0's (the other shards do
    nothing); with `workload.replay.server_metrics_interval_s: null`, shard 0 writes no rows, so
    a re-run never leaves an earlier run's samples behind."""
    if shard_index != 0:
        yield
        return
    interval_s = replay.server_metrics_interval_s
    scraper = ServerMetricsScraper(metrics_url(base_url), interval_s or 1.0, replay.max_duration_s + 60)
    if interval_s is None:
        yield
    else:
        with scraper:
            yield
    table = scraper.table()
    table = table.append_column(RUN_ID, pa.array([run_id] * table.num_rows, RUN_ID.type))
    write_parquet(table, layout.path(SERVER_METRICS))
    for warning in scraper.warnings:
        warn(warning)
