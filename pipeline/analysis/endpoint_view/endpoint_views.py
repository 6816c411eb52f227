"""What the endpoint itself says beside the client's figures, made by analysis as tables of the
partition (the pack only reads them; `loadproof verify` re-makes them and names a row that differs):

- `token_agreement`: where the server's usage and the client's own token count disagree
  (sql/token_agreement.sql);
- `prefix_cache_hits`: the prefix-cache hit rate the server reported over the steady window
  (sql/prefix_cache_hits.sql);
- `server_timings`: per request kind, the client's TTFT and TPOT beside the server's own
  per-request timings (llama.cpp's `timings`) and the client − server gap (sql/server_timings.sql);
- `server_ttft`: the server's TTFT and E2E histogram percentiles beside the client's, with the gap
  rule (`server_view.py`);
- `server_levels`: the server's queue and KV-cache use per load level (sql/server_metrics_levels.sql);
- `gpu_energy`: a DCGM exporter's utilisation, power and joules per output token (`gpu_view.py`).

`server_timings` has no rows for a server that sends no per-request timings; the last three none
without server metrics (none scraped, or no GPU exporter). A repeated
replay's are the first run's, like every analysis table.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.analysis.endpoint_view.gpu_view import read_gpu_energy
from pipeline.analysis.endpoint_view.server_view import read_server_view, server_levels, ttft_comparison
from pipeline.analysis.tabulate.repeats import first_run
from pipeline.analysis.tabulate.tables import prefix_cache_hits, steady_session
from pipeline.contracts import (
    GPU_ENERGY,
    PREFIX_CACHE_HITS,
    RAW_TIMINGS,
    SERVER_LEVELS,
    SERVER_TIMINGS,
    SERVER_TTFT,
    THROUGHPUT,
    TOKEN_AGREEMENT,
)
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.duck.session import run_query
from pipeline.files.layout import PackLayout
from pipeline.spec import Spec

ENDPOINT_VIEWS = (TOKEN_AGREEMENT, PREFIX_CACHE_HITS, SERVER_TIMINGS, SERVER_TTFT, SERVER_LEVELS, GPU_ENERGY)
# each view's rows are told apart by these columns (verify pairs the written rows with the re-made ones)
KEYS = {
    TOKEN_AGREEMENT.name: ("candidate",),
    PREFIX_CACHE_HITS.name: ("candidate",),
    SERVER_TIMINGS.name: ("candidate", "request_kind"),
    SERVER_TTFT.name: ("candidate",),
    SERVER_LEVELS.name: ("candidate", "load_level"),
    GPU_ENERGY.name: ("candidate",),
}


def endpoint_views(
    root: Path, spec: Spec, throughput_rows: list[dict] | None = None, queries: QueryCatalog = REPO_QUERIES
) -> dict[str, list[dict]]:
    """Every view's rows for the partition (or gathered) folder `root`; `throughput_rows` is the
    throughput table's (GPU energy divides by its output tokens/s), read from the folder if not given."""
    layout = PackLayout(root)
    raw = layout.path(RAW_TIMINGS)
    if throughput_rows is None:
        throughput_rows = pq.read_table(layout.path(THROUGHPUT)).to_pylist()
    view = read_server_view(layout)
    replay = spec.workload.replay
    return {
        TOKEN_AGREEMENT.name: run_query("token_agreement", {"raw_timings": raw}, queries=queries).to_pylist(),
        PREFIX_CACHE_HITS.name: prefix_cache_hits(first_run(raw), spec, queries).to_pylist(),
        SERVER_TIMINGS.name: server_timings(first_run(raw), spec, queries).to_pylist(),
        SERVER_TTFT.name: ttft_comparison(view) if view is not None else [],
        SERVER_LEVELS.name: server_levels(layout),
        GPU_ENERGY.name: read_gpu_energy(layout, replay.warmup_s, replay.cooldown_s, throughput_rows),
    }


def server_timings(raw_timings: Path | pa.Table, spec: Spec, queries: QueryCatalog = REPO_QUERIES) -> pa.Table:
    """Per candidate and request kind, the client's TTFT and TPOT beside the server's own
    per-request timings and the gap (sql/server_timings.sql; no rows where the server sent none)."""
    with steady_session(raw_timings, spec, queries) as session:
        session.stage("steady_windows")
        return session.run("server_timings")


def read_views(layout: PackLayout) -> dict[str, list[dict]]:
    """The views as written in the folder (none where a pack was written before them)."""
    return {file.name: _rows(layout.path(file)) for file in ENDPOINT_VIEWS}


def _rows(path: Path) -> list[dict]:
    if not path.is_file():
        return []
    return [{k: v for k, v in row.items() if k != "run_id"} for row in pq.read_table(path).to_pylist()]
