"""Recorded Prometheus scrapes (tests/fixtures/server_metrics/*.prom: one per server family and
the DCGM exporter, each citing where its names come from) served over loopback, one snapshot per
request, so a test scrapes them with the replay's own scraper at instants it chooses."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pyarrow as pa

from pipeline.replay.endpoint.server_metrics import ServerMetricsScraper, stamped

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "server_metrics"
SAMPLE = re.compile(r"^(?P<name>[^#\s{]+)(?P<labels>\{[^}]*\})? (?P<value>\S+)$")


def fixture(name: str) -> str:
    return (FIXTURES / f"{name}.prom").read_text(encoding="utf-8")


def scaled_counters(text: str, factor: float, only: str | None = None) -> str:
    """The snapshot with every cumulative sample (a counter's `_total`, a histogram's `_bucket`,
    `_count`, `_sum`; with `only`, those of that family alone) times `factor`: a later scrape."""
    lines = []
    for line in text.splitlines():
        match = SAMPLE.match(line)
        name = match["name"] if match else ""
        cumulative = name.endswith(("_total", "_bucket", "_count", "_sum")) or name.startswith("DCGM_FI_DEV_TOTAL")
        if match and cumulative and (only is None or name.startswith(only)):
            line = f"{name}{match['labels'] or ''} {float(match['value']) * factor!r}"
        lines.append(line)
    return "\n".join(lines) + "\n"


@contextmanager
def serving(snapshots: list[str]) -> Iterator[str]:
    """A loopback server answering GET /metrics with the next snapshot (the last one repeated);
    yields its /metrics URL."""
    served = iter(snapshots)
    last = [snapshots[-1]]

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (the stdlib's name)
            body = next(served, last[0]).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; version=0.0.4")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/metrics"
    finally:
        server.shutdown()
        server.server_close()


def scraped(
    snapshots: list[str], at_ns: list[int], endpoint: str = "server", run_id: str = "run-1", scope: dict | None = None
) -> pa.Table:
    """The snapshots scraped with the replay's scraper at the instants `at_ns` (one each), as
    data/server_metrics.parquet holds them."""
    with serving(snapshots) as url, httpx.Client(trust_env=False) as client:
        scraper = ServerMetricsScraper(url)
        for t_ns in at_ns:
            assert scraper.scrape(client, t_ns), scraper.warnings
    return stamped(scraper.table(), endpoint, run_id, scope or {})
