"""`workload.replay.shards: auto`: as many client processes as the replay's streams in flight need,
so that no event loop holds more streams than it can stamp in time (issue 45 item 1).

One process's event loop reads every stream it holds, one socket at a time: a reply that is ready
waits until the loop polls its socket again, and its stamp is that much late (the instrument
error, docs/statistics.md). Measured against the loopback wire on 2 cores
(`bench/client_vs_wire.py --pin --processes N`, every request joined; docs/bench.md): TTFT error
p99 ≤ 1 ms with 64–128 streams in one process, but 0.5–12 ms with 256 in one; 256 split over two
processes 0.7–4.3 ms, over four 1.0–3.2 ms. So `auto` gives each process at most
STREAMS_PER_PROCESS streams: ⌈peak streams in flight ÷ 128⌉ shards.

The peak streams in flight, before the replay: a closed loop's concurrency; an open loop's most
sends inside any span as long as a request lasts (the log's mean latency, from the profile; 1 s
where the log has none), capped by `max_concurrency` (`engine.peak_in_flight_of`).
`until: resolved` reads every request after each run, so it keeps one shard.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.replay.pacing.engine import IN_FLIGHT_WINDOW_S, ReplaySettings, peak_in_flight_of

AUTO = "auto"
STREAMS_PER_PROCESS = 128
MAX_SHARDS = 64  # workload.replay.shards' own bound (pipeline/spec/workload.py: replay may not import spec)


def shards_for_streams(peak_streams: int) -> int:
    """⌈peak ÷ STREAMS_PER_PROCESS⌉, at least 1, at most MAX_SHARDS."""
    return max(1, min(MAX_SHARDS, math.ceil(peak_streams / STREAMS_PER_PROCESS)))


def resolved_shards(
    shards: int | str,
    offsets: list[float | None],
    settings: ReplaySettings,
    latency_mean_ms: float | None,
    until: bool = False,
) -> tuple[int, str]:
    """(the shard count, why): the spec's number as it is; `auto` sized by the peak streams in
    flight (the module's rule) of the plan's `offsets` (its `scheduled_offset_s`, None in a closed loop)."""
    if shards != AUTO:
        return int(shards), f"{shards} (workload.replay.shards)"
    if until:
        return 1, "auto → 1: until: resolved reads every request of each run in one process"
    window_s = max(IN_FLIGHT_WINDOW_S, (latency_mean_ms or 0.0) / 1e3)
    peak = peak_in_flight_of(offsets, settings, window_s)
    count = shards_for_streams(peak)
    return count, (
        f"auto → {count}: about {peak} streams in flight at the peak, at most {STREAMS_PER_PROCESS} a process "
        f"(the streams one event loop stamps within 1–5 ms of the wire: bench/client_vs_wire.py)"
    )


def one_process_enough(shards: int | str, mode: str, concurrency: int | None, max_concurrency: int | None) -> bool:
    """Whether the replay surely runs in one process, before anything is known of its plan: one
    shard asked for, or `auto` with a bound on streams in flight (the closed loop's concurrency, an
    open loop's cap) no greater than STREAMS_PER_PROCESS. The runner then runs the partition in
    this process; otherwise on Dagster's multiprocess executor, where `auto` may fan out."""
    if shards != AUTO:
        return shards == 1
    bound = concurrency if mode == "concurrency" else max_concurrency
    return bound is not None and bound <= STREAMS_PER_PROCESS


def shards_from_files(
    shards: int | str, plan: Path, profile: Path, settings: ReplaySettings, until: bool = False
) -> tuple[int, str]:
    """`resolved_shards` from the written plan's offsets (`replay_plan.parquet`) and the profile's
    logged mean latency (`prompt_profile.parquet`, where it was written): as the replay's own
    `plan_replay_shards` sizes it, and as the CLI sizes it once the shared inputs exist."""
    if shards != AUTO:
        return resolved_shards(shards, [], settings, None, until)
    offsets = pq.read_table(plan, columns=["scheduled_offset_s"]).column(0).to_pylist()
    rows = pq.read_table(profile, columns=["latency_mean_ms"]).to_pylist() if profile.is_file() else []
    return resolved_shards(AUTO, offsets, settings, rows[0]["latency_mean_ms"] if rows else None, until)
