"""One plan across N worker processes with one common start time.

Shard i sends every N-th chain of the plan (a request, or a whole session's turns) at its own
planned offsets, so the merged shards keep the plan's arrival pattern. The common start comes from a file barrier
in the pack folder: each shard writes when it is ready, waits (bounded) until all N are, then
all start at the same instant — the latest ready time plus a lead. On one host the instant is
on CLOCK_MONOTONIC (shared by every process, which is what time.perf_counter_ns reads on
Linux); shards on several hosts without a coordinator fall back to the wall clock, which is
then only as good as the hosts' clock sync (recorded as `clock`).

On a Dask cluster (`workload.replay.executor: dask`, `Shard.engine == "dask"`) the barrier and
the clock go through the scheduler instead (`cluster_clock.py`): no shared disk, no shared clock;
each shard records its worker, its clock offset to the scheduler and that sample's round trip,
and `merge_shards` places every row on the scheduler's timeline with its shard's offset.
`merge_shards` turns the shards' journals and stats into one raw-timings table and the replay
summary.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import interrupts
from pipeline.contracts import SERVER_METRICS
from pipeline.files.layout import PackLayout, write_parquet, write_text
from pipeline.replay.conditions.sweep import production_level, with_load_level
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.production.cluster_clock import DaskBarrier
from pipeline.replay.recording.journal import journal_to_table
from pipeline.replay.recording.records import PlannedRequest

START_LEAD_NS = 200_000_000  # every shard is past its barrier well before the first send
BARRIER_POLL_S = 0.01
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
SUMMED_STATS = ("planned", "sent", "errors", "unsent", "retries", "peak_in_flight")
# the raw-timing columns that are clock readings (chunk_offsets_ns are durations from the send)
CLOCK_READINGS = (
    "t_scheduled_ns",
    "t_sent_ns",
    "t_send_call_ns",
    "t_first_byte_ns",
    "t_first_token_ns",
    "t_last_token_ns",
    "t_end_ns",
)
FILE_ENGINE, DASK_ENGINE = "file", "dask"
# the raw-timing columns of shards that met on a Dask scheduler: the worker that sent the request,
# and the offset added to its own perf_counter_ns readings to put them on the scheduler's
# timeline. Not in RAW_TIMINGS' schema (a single-host replay does not write them), nor optional
# (no query reads them, so a reader adds no NULL columns for them).
WORKER_CLOCK_COLUMNS = [("worker", pa.string()), ("clock_offset_ns", pa.int64())]


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    barrier_dir: str  # one folder per run and candidate (on Dask: the barrier's name on the scheduler)
    engine: str = FILE_ENGINE  # who runs the barrier: a file in barrier_dir, or the Dask scheduler

    @property
    def label(self) -> str:
        return f"shard_{self.index}"


def shards_for(count: int, barrier_dir: Path, executor: str = "multiprocess") -> list[Shard]:
    """`count` shards of one run; on the `dask` executor (`workload.replay.executor`) they meet on
    the scheduler, where `barrier_dir` is the barrier's name, not a folder."""
    engine = DASK_ENGINE if executor == "dask" else FILE_ENGINE
    return [Shard(index, count, str(barrier_dir), engine) for index in range(count)]


def shard_plan(plan: list[PlannedRequest], shard: Shard) -> list[PlannedRequest]:
    """Every shard.count-th chain of the plan: a request on its own, or a session's turns, which
    stay together (each turn follows its predecessor's reply, so one process sends them all)."""
    chain_of: dict[str, int] = {}
    chains = 0
    mine = []
    for item in plan:
        if item.follows_request_id in chain_of:
            chain = chain_of[item.follows_request_id]
        else:
            chain, chains = chains, chains + 1
        chain_of[item.request_id] = chain
        if chain % shard.count == shard.index:
            mine.append(item)
    return mine


def shard_settings(settings: ReplaySettings, shard: Shard) -> ReplaySettings:
    """Closed loop: the fixed concurrency is split across shards (the total stays the spec's);
    an open-loop cap likewise."""

    def split(total: int | None) -> int | None:
        return None if total is None else max(1, total // shard.count + (shard.index < total % shard.count))

    return replace(settings, concurrency=split(settings.concurrency), max_concurrency=split(settings.max_concurrency))


def _boot_id() -> str:
    return BOOT_ID.read_text().strip() if BOOT_ID.is_file() else "unknown"


def common_start_ns(shard: Shard, timeout_s: float) -> tuple[int, str]:
    """Block until every shard is ready; return the shared start on this process's perf_counter_ns
    clock and which clock agreed it ("monotonic" on one host, "wall" across hosts)."""
    folder = Path(shard.barrier_dir)
    ready = {
        "index": shard.index,
        "monotonic_ns": time.perf_counter_ns(),
        "unix_ns": time.time_ns(),
        "boot_id": _boot_id(),
    }
    write_text(json.dumps(ready), folder / f"ready-{shard.index}.json")
    deadline = time.perf_counter() + timeout_s
    while True:
        documents = [json.loads(path.read_text()) for path in folder.glob("ready-*.json")]
        if len(documents) >= shard.count:
            break
        interrupts.raise_if_stopped(f"{shard.label}'s replay")  # a shard never waits out a stopped run
        if time.perf_counter() > deadline:
            raise TimeoutError(
                f"{shard.label}: only {len(documents)} of {shard.count} shards ready after {timeout_s} s"
            )
        time.sleep(BARRIER_POLL_S)
    if len({d["boot_id"] for d in documents}) == 1 and ready["boot_id"] != "unknown":
        return max(d["monotonic_ns"] for d in documents) + START_LEAD_NS, "monotonic"
    start_unix_ns = max(d["unix_ns"] for d in documents) + START_LEAD_NS
    return time.perf_counter_ns() + (start_unix_ns - time.time_ns()), "wall"


class StartBarrier:
    """`run_replay`'s `start_at` for one shard: waits for the others once this process is set
    up, returns the common start and remembers which clock agreed it (and, on Dask, this
    worker's name, offset to the scheduler and that sample's round trip: `report`)."""

    def __init__(self, shard: Shard, timeout_s: float):
        self.shard, self.timeout_s = shard, timeout_s
        self.clock: str | None = None
        self.cluster: DaskBarrier | None = None

    def __call__(self) -> int:
        if self.shard.engine == DASK_ENGINE:
            self.cluster = DaskBarrier(
                self.shard.barrier_dir, self.shard.index, self.shard.count, self.timeout_s, START_LEAD_NS
            )
            start_ns, self.clock = self.cluster.wait(), "coordinator"
            return start_ns
        start_ns, self.clock = common_start_ns(self.shard, self.timeout_s)
        return start_ns

    def report(self) -> dict:
        """What the shard's report adds about its clock (nothing on the file barrier)."""
        if self.cluster is None or self.cluster.clock is None:
            return {"clock": self.clock}
        clock = self.cluster.clock
        return {
            "clock": self.clock,
            "worker": clock.worker,
            "clock_offset_ns": clock.offset_ns,
            "clock_rtt_ns": clock.rtt_ns,
        }


def with_shard_column(table: pa.Table, shard: Shard) -> pa.Table:
    return table.append_column("shard", pa.array([shard.index] * table.num_rows, pa.int64()))


def on_common_timeline(table: pa.Table, worker: str, offset_ns: int) -> pa.Table:
    """One shard's rows with every clock reading moved onto the coordinator's timeline (+ offset)
    and the two columns that undo it: `worker`, and `clock_offset_ns` (this worker's own
    perf_counter_ns reading is the value minus it)."""
    for name in CLOCK_READINGS:
        if name in table.schema.names:
            index = table.schema.get_field_index(name)
            table = table.set_column(index, name, pc.add(table.column(name), pa.scalar(offset_ns, pa.int64())))
    (worker_column, worker_type), (offset_column, offset_type) = WORKER_CLOCK_COLUMNS
    table = table.append_column(worker_column, pa.array([worker] * table.num_rows, worker_type))
    return table.append_column(offset_column, pa.array([offset_ns] * table.num_rows, offset_type))


def align_server_metrics(layout: PackLayout, reports: list[dict]) -> None:
    """Shard 0 scraped the candidate's /metrics on its own clock (server_metrics.py): move each
    scrape's `t_ns` by that shard's offset, as its rows were, so the server view still lines up
    with the raw timings (sql/server_metrics_by_candidate.sql). Nothing to do off Dask."""
    first = [r for r in reports if r["shard"].index == 0 and r.get("repeat", 0) == 0 and "clock_offset_ns" in r]
    path = layout.path(SERVER_METRICS)
    if not first or not path.is_file():
        return
    table = pq.read_table(path)
    moved = pc.add(table.column("t_ns"), pa.scalar(first[0]["clock_offset_ns"], pa.int64()))
    if "load_level" in table.schema.names:  # a sweep level's scrapes (written after) keep their own clock
        moved = pc.if_else(pc.is_null(table.column("load_level")), moved, table.column("t_ns"))
    write_parquet(table.set_column(table.schema.get_field_index("t_ns"), "t_ns", moved), path)


def _shard_rows(report: dict, aligned: bool) -> pa.Table:
    table = with_shard_column(journal_to_table(Path(report["journal"])), report["shard"])
    return on_common_timeline(table, report["worker"], report["clock_offset_ns"]) if aligned else table


def merge_shards(reports: list[dict], replay) -> tuple[pa.Table, dict]:
    """The raw timings and the replay summary of one candidate's replay, from its shards' reports
    (each: `candidate`, `shard`, `journal` path, `stats` = `ReplayStats` as a dict, `pid`, `clock`;
    on Dask also `worker`, `clock_offset_ns`, `clock_rtt_ns`).

    The journals are concatenated in shard order, each row with its `shard` and all at the spec's
    own load level (`workload.replay`, the `replay` argument). Shards that met on the Dask
    scheduler each kept their own clock: their rows are placed on the scheduler's timeline with
    their offset (`on_common_timeline`); on one host's file barrier they already share one.
    The summary's totals are the sums over the shards, except `wall_s`: the shards ran side by
    side, so the longest one."""
    reports = sorted(reports, key=lambda report: report["shard"].index)
    aligned = all("clock_offset_ns" in report for report in reports)
    timings = pa.concat_tables([_shard_rows(report, aligned) for report in reports])
    timings = with_load_level(timings, production_level(replay))
    stats = {key: sum(report["stats"][key] for report in reports) for key in SUMMED_STATS}
    stats["wall_s"] = max(report["stats"]["wall_s"] for report in reports)
    lags = [report["stats"].get("loop_lag_p99_ms") for report in reports]  # each shard's own loop: the worst
    if any(lag is not None for lag in lags):
        stats["loop_lag_p99_ms"] = max(lag for lag in lags if lag is not None)
    # One candidate per partition; the `candidates` map stays because pack/assemble/gather.py merges the
    # partitions' summaries into one for the side-by-side pack.
    summary = {
        "mode": replay.mode,
        "planned": stats["planned"],
        "candidates": {reports[0]["candidate"]: stats},
        **stats,
    }
    clock_keys = ("worker", "clock_offset_ns", "clock_rtt_ns")
    summary["shards"] = [
        {
            "shard": report["shard"].index,
            "pid": report["pid"],
            "clock": report["clock"],
            **{key: report[key] for key in clock_keys if key in report},
            **report["stats"],
        }
        for report in reports
    ]
    return timings, summary
