"""A warm prefix cache, as production has (issue 18 item 5): the log's earlier requests whose
prefixes the sampled window reuses, sent before the measured replay.

Why: a window replayed against a cold cache undercounts the prefix-cache hits production gets.
In production, the requests just before the window have filled the cache with blocks the window
then reuses; replayed alone, the window's first use of each such block is a miss. With
`workload.replay.warm_prefixes: true`, the sampling step picks those earlier requests
(sql/warm_prefixes.sql: sent within `warm_prefixes_lookback_s` before the window, carrying a block
the window carries, the latest `warm_prefixes_max_requests`) and keeps them in
data/production_sample.json (`warm_prefixes`: the shared inputs every partition copies); shard 0
sends them to its candidate just before the production replay, outside the measured window: never
in raw_timings, no figure counts them (their journal is journal/<run>-<candidate>.warm-prefixes.jsonl).

Each warm-up request carries the prompt the plan would give it (the same synthetic block text for
the same block id, or its logged messages) and asks for one reply token: only its prefill fills
the cache. They go in log order, WARM_UP_CONCURRENCY at a time, within `warm_prefixes_max_s`.
The server-metrics scrape starts after the warm-up, so the server's own view (its TTFT histogram,
its queue) is the replay's alone.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from types import SimpleNamespace
from typing import Protocol

import pyarrow as pa

from pipeline.contracts import CANONICAL_LOG_SCHEMA, PRODUCTION_SAMPLE_WINDOW, PackFile
from pipeline.duck import connect as duck
from pipeline.plan.replay_plan import build_plan, planned_requests
from pipeline.replay.endpoint.server_metrics import server_metrics_beside
from pipeline.replay.pacing.engine import ReplaySettings, ReplayStats, Target
from pipeline.replay.pacing.runs import ReplayRun, execute
from pipeline.replay.recording.records import PlannedRequest
from pipeline.spec.workload import Prompts, Replay, Workload


class PackFolder(Protocol):
    """A partition's pack folder (pipeline/files/layout.py `PackLayout`: plan sits below pack)."""

    def path(self, file: PackFile) -> Path: ...

    def journal(self, run_id: str, candidate: str) -> Path: ...


WARM_UP_CONCURRENCY = 8
KEPT = (
    "request_id",
    "source_line",
    "prompt_tokens",
    "output_tokens",
    "messages_json",
    "prefix_hashes",
    "window_blocks",
)


def warm_prefix_rows(logs: Path, sample: pa.Table, replay: Replay) -> list[dict]:
    """The earlier requests to send first (sql/warm_prefixes.sql), as JSON-ready rows; none
    unless `warm_prefixes` is on, or where the log has no prefix blocks."""
    if not replay.warm_prefixes or "prefix_hashes" not in sample.schema.names:
        return []
    params = {"lookback_s": replay.warm_prefixes_lookback_s, "max_requests": replay.warm_prefixes_max_requests}
    with duck.connection() as con:
        con.read_parquet(str(logs)).create_view("production_logs")
        con.from_arrow(sample).create_view("production_sample")
        rows = duck.run(con, "warm_prefixes", params).to_arrow_table().to_pylist()
    return [{**{key: row[key] for key in KEPT}, "arrival_at": _iso(row["arrival_at"])} for row in rows]


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def warm_up_plan(rows: list[dict], prompts: Prompts) -> list[PlannedRequest]:
    """The rows as requests: each with its plan prompt (build_plan, one request each, no
    session chaining, no schedule) and one reply token."""
    if not rows:
        return []
    # typed as the log's columns: a block id is a uint64, past int64's range for hashed ids
    schema = pa.schema([CANONICAL_LOG_SCHEMA.field(key) for key in KEPT if key != "window_blocks"])
    sample = pa.Table.from_pylist([{key: row[key] for key in schema.names} for row in rows], schema=schema)
    unscheduled = SimpleNamespace(mode="concurrency", sessions="off", time_scale=1.0)
    plan = planned_requests(build_plan(sample, unscheduled, prompts.model_copy(update={"min_tokens": False})))
    return [dataclasses.replace(request, max_tokens=1, min_tokens=None) for request in plan]


def send_warm_up(requests: list[PlannedRequest], target: Target, replay: Replay, journal: Path) -> ReplayStats:
    """Send the warm-up requests (log order, WARM_UP_CONCURRENCY in flight, within
    `warm_prefixes_max_s`), journalled apart from the replay."""
    settings = ReplaySettings(
        mode="concurrency",
        concurrency=WARM_UP_CONCURRENCY,
        request_timeout_s=replay.request_timeout_s,
        max_duration_s=replay.warm_prefixes_max_s,
        transport=replay.transport,
    )
    return execute(ReplayRun(requests, target, settings, "warm-prefixes", journal)).stats


def planned_warm_up(layout: PackFolder) -> list[dict]:
    """The warm-up rows the sampling step kept (data/production_sample.json); none before it did."""
    path = layout.path(PRODUCTION_SAMPLE_WINDOW)
    if not path.is_file():
        return []
    return list(json.loads(path.read_text(encoding="utf-8")).get("warm_prefixes") or [])


@contextmanager
def beside_production_replay(
    target: Target,
    workload: Workload,
    shard_index: int,
    layout: PackFolder,
    run_id: str,
    warn: Callable[[str], None],
    warm_rows: PackFolder | None = None,
) -> Iterator[None]:
    """What one shard's production replay runs inside: on shard 0, the prefix-cache warm-up first
    (when `warm_prefixes` is on), then the server-metrics scrape around the replay. `warm_rows`:
    the folder whose production_sample.json has the warm-up rows' text (privacy.text hash, drop:
    the private copy; default `layout`)."""
    replay = workload.replay
    if shard_index == 0 and replay.warm_prefixes:
        requests = warm_up_plan(planned_warm_up(warm_rows or layout), workload.prompts)
        if not requests:
            warn("warm_prefixes: the window reuses no earlier request's prefix blocks: nothing to send first")
        else:
            journal = layout.journal(run_id, f"{target.candidate}.warm-prefixes")
            stats = send_warm_up(requests, target, replay, journal)
            if stats.errors or stats.unsent:
                warn(f"warm_prefixes: {stats.errors} of {len(requests)} warm-up requests failed, {stats.unsent} unsent")
    with server_metrics_beside(target, replay, shard_index, layout, run_id, warn):
        yield
