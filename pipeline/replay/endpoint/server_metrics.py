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

One file holds the samples of every replay of a candidate, each row saying which endpoint it came
from (`server`: the candidate's /metrics; `gpu`: its DCGM exporter, `gpu_metrics_url`) and which
replay it was scraped beside (the scope columns, `SCOPE_COLUMNS`: all NULL for the production
replay, `load_level` for a sweep level, `arm` for an arm: the claim's own benchmark or a ladder
step). Each writer replaces only its own scope's rows, so the production replay, the sweep and
the arms (three assets) never drop each other's samples. Another kind of replay joins the same
way: a column in the contract's SERVER_METRICS_SCHEMA (and its `optional`) and in `SCOPE_COLUMNS`
below, each of its replays inside `ScrapesBeside(..., scope_column=NAME).around(value)`, and one
`write` after the last.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Protocol

import httpx
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from prometheus_client.parser import text_string_to_metric_families

from pipeline.contracts import RUN_ID, SERVER_METRICS, SERVER_METRICS_SCHEMA, PackFile
from pipeline.files.layout import write_parquet
from pipeline.http_retry import retrying_client


class ReplayBounds(Protocol):
    """What the scrape reads of the spec's `workload.replay` (replay does not import the spec)."""

    @property
    def server_metrics_interval_s(self) -> float | None: ...

    @property
    def max_duration_s(self) -> float: ...


class PackFolder(Protocol):
    """Where the samples are written (pipeline/files/layout.py `PackLayout`)."""

    def path(self, file: PackFile) -> Path: ...


class ScrapeTarget(Protocol):
    """What the scrape reads of a replay's target (pipeline/replay/pacing/engine.py `Target`)."""

    @property
    def base_url(self) -> str: ...

    @property
    def gpu_metrics_url(self) -> str | None: ...


MAX_SCRAPES = 100_000  # a bound whatever the interval: 1 s for ~28 h
# the columns saying which replay a sample was scraped beside (all NULL: the production replay)
SCOPE_COLUMNS: tuple[str, ...] = ("load_level", "arm")
# what one scrape yields: the contract's columns before the endpoint and the scope
SAMPLE_SCHEMA = pa.schema([f for f in SERVER_METRICS_SCHEMA if f.name not in ("endpoint", *SCOPE_COLUMNS)])


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
    _rows: dict[str, list] = field(default_factory=lambda: {name: [] for name in SAMPLE_SCHEMA.names})
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
        # a 429, a 5xx or a reset is retried (pipeline/http_retry.py) within one interval; a stop ends the wait
        retry = {"attempts": 3, "max_delay_s": self.interval_s / 2, "sleep": self._stop.wait}
        with retrying_client(self.timeout_s, retry) as client:
            while self.scrapes < self.max_scrapes and time.perf_counter_ns() < deadline:
                started = time.perf_counter_ns()
                if not self.scrape(client, started):
                    return
                # the next scrape on the interval's grid from this one (never a burst to catch up)
                wait_s = self.interval_s - (time.perf_counter_ns() - started) / 1e9
                if self._stop.wait(max(wait_s, 0.0)):
                    return
            if self.scrapes >= self.max_scrapes:
                self.warnings.append(f"server metrics: stopped at the bound of {self.max_scrapes} scrapes")

    def scrape(self, client: httpx.Client, t_ns: int) -> bool:
        """One scrape sent at `t_ns` (the background thread's, or a test's at chosen instants); False
        when scraping should stop (the very first one failed)."""
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
        return pa.table(self._rows, schema=SAMPLE_SCHEMA)


def stamped(samples: pa.Table, endpoint: str, run_id: str, scope: dict[str, object]) -> pa.Table:
    """One scraper's samples as the file has them: with its endpoint, its scope and the run id."""
    rows = samples.num_rows
    columns = {name: samples.column(name) for name in SAMPLE_SCHEMA.names}
    columns["endpoint"] = pa.array([endpoint] * rows, pa.string())
    for name in SCOPE_COLUMNS:
        columns[name] = pa.array([scope.get(name)] * rows, SERVER_METRICS_SCHEMA.field(name).type)
    columns[RUN_ID.name] = pa.array([run_id] * rows, RUN_ID.type)
    return pa.table(columns, schema=SERVER_METRICS.file_schema)


def _conformed(table: pa.Table) -> pa.Table:
    """A file written before the endpoint and scope columns: those columns as NULL (its rows
    were all scraped from the server beside the production replay)."""
    schema = SERVER_METRICS.file_schema
    assert schema is not None
    return pa.table(
        {
            f.name: table.column(f.name) if f.name in table.schema.names else pa.nulls(table.num_rows, f.type)
            for f in schema
        },
        schema=schema,
    )


def write_scope(layout: PackFolder, samples: list[pa.Table], scope_column: str | None) -> pa.Table:
    """Replace one scope's rows of data/server_metrics.parquet with `samples` (stamped), keeping
    every other scope's: `scope_column` None is the production replay's scope (every scope
    column NULL), else the rows where that column is set (e.g. every sweep level's)."""
    path = layout.path(SERVER_METRICS)
    kept = []
    if path.is_file():
        old = _conformed(pq.read_table(path))
        if scope_column is None:
            mine = pc.is_null(old.column(SCOPE_COLUMNS[0]))
            for name in SCOPE_COLUMNS[1:]:
                mine = pc.and_(mine, pc.is_null(old.column(name)))
        else:
            mine = pc.is_valid(old.column(scope_column))
        kept.append(old.filter(pc.invert(mine)))
    table = pa.concat_tables([*kept, *samples]) if kept or samples else _conformed(SAMPLE_SCHEMA.empty_table())
    write_parquet(table, path)
    return table


@dataclass
class ScrapesBeside:
    """The scrapes beside one kind of replay of one candidate (its production replay, its sweep
    levels, ...): `around(value)` scrapes its /metrics (and its GPU exporter, where given) while
    one replay of that scope runs; `write` replaces that scope's rows in the file. A first scrape
    that fails turns that endpoint off for the later replays too, with one warning."""

    target: ScrapeTarget
    replay: ReplayBounds
    run_id: str
    scope_column: str | None = None  # None: the production replay
    samples: list[pa.Table] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    _off: set[str] = field(default_factory=set)

    def endpoints(self) -> list[tuple[str, str]]:
        urls = [("server", metrics_url(self.target.base_url))]
        if self.target.gpu_metrics_url:
            urls.append(("gpu", self.target.gpu_metrics_url))
        return [(name, url) for name, url in urls if name not in self._off]

    @contextmanager
    def around(self, value: object = None) -> Iterator[None]:
        interval_s = self.replay.server_metrics_interval_s
        if interval_s is None:
            yield
            return
        scrapers = {
            name: ServerMetricsScraper(url, interval_s, self.replay.max_duration_s + 60)
            for name, url in self.endpoints()
        }
        with scrapers.get("server", nullcontext()), scrapers.get("gpu", nullcontext()):
            yield
        scope = {} if self.scope_column is None else {self.scope_column: value}
        for name, scraper in scrapers.items():
            self.samples.append(stamped(scraper.table(), name, self.run_id, scope))
            self.warnings.extend(scraper.warnings)
            if scraper.scrapes == 0:
                self._off.add(name)

    def write(self, layout: PackFolder, warn: Callable[[str], None]) -> pa.Table:
        table = write_scope(layout, self.samples, self.scope_column)
        for warning in self.warnings:
            warn(warning)
        return table


@contextmanager
def server_metrics_beside(
    target: ScrapeTarget,
    replay: ReplayBounds,
    shard_index: int,
    layout: PackFolder,
    run_id: str,
    warn: Callable[[str], None],
) -> Iterator[None]:
    """Scrape the candidate's /metrics (and its GPU exporter) while the body runs (the production
    replay of one shard), then write its rows of data/server_metrics.parquet. One scraper per
    candidate: shard 0's (the other shards do nothing); with `workload.replay.
    server_metrics_interval_s: null`, shard 0 writes no rows of its own, so a re-run never
    leaves an earlier run's production samples behind."""
    if shard_index != 0:
        yield
        return
    scrapes = ScrapesBeside(target, replay, run_id)
    with scrapes.around():
        yield
    scrapes.write(layout, warn)
