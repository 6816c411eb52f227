"""One plan across N worker processes with one common start time.

Shard i sends every N-th chain of the plan (a request, or a whole session's turns) at its own
planned offsets, so the merged shards keep the plan's arrival pattern. The common start comes from a file barrier
in the pack folder: each shard writes when it is ready, waits (bounded) until all N are, then
all start at the same instant — the latest ready time plus a lead. On one host the instant is
on CLOCK_MONOTONIC (shared by every process, which is what time.perf_counter_ns reads on
Linux); shards on several hosts (k8s/celery executors) fall back to the wall clock, which is
then only as good as the hosts' clock sync (recorded as `clock`). `merge_shards` turns the
shards' journals and stats into one raw-timings table and the replay summary.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

import pyarrow as pa

from pipeline.pack.layout import write_text
from pipeline.replay.engine import ReplaySettings
from pipeline.replay.journal import journal_to_table
from pipeline.replay.records import PlannedRequest
from pipeline.replay.sweep import production_level, with_load_level

START_LEAD_NS = 200_000_000  # every shard is past its barrier well before the first send
BARRIER_POLL_S = 0.01
BOOT_ID = Path("/proc/sys/kernel/random/boot_id")
SUMMED_STATS = ("planned", "sent", "errors", "unsent", "retries", "peak_in_flight")


@dataclass(frozen=True)
class Shard:
    index: int
    count: int
    barrier_dir: str  # one folder per run and candidate

    @property
    def label(self) -> str:
        return f"shard_{self.index}"


def shards_for(count: int, barrier_dir: Path) -> list[Shard]:
    return [Shard(index, count, str(barrier_dir)) for index in range(count)]


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
    up, returns the common start and remembers which clock agreed it."""

    def __init__(self, shard: Shard, timeout_s: float):
        self.shard, self.timeout_s = shard, timeout_s
        self.clock: str | None = None

    def __call__(self) -> int:
        start_ns, self.clock = common_start_ns(self.shard, self.timeout_s)
        return start_ns


def with_shard_column(table: pa.Table, shard: Shard) -> pa.Table:
    return table.append_column("shard", pa.array([shard.index] * table.num_rows, pa.int64()))


def merge_shards(reports: list[dict], replay) -> tuple[pa.Table, dict]:
    """The raw timings and the replay summary of one candidate's replay, from its shards' reports
    (each: `candidate`, `shard`, `journal` path, `stats` = `ReplayStats` as a dict, `pid`, `clock`).

    The journals are concatenated in shard order, each row with its `shard` and all at the spec's
    own load level (`workload.replay`, the `replay` argument). The summary's totals are the sums
    over the shards, except `wall_s`: the shards ran side by side, so the longest one."""
    reports = sorted(reports, key=lambda report: report["shard"].index)
    timings = pa.concat_tables(
        [with_shard_column(journal_to_table(Path(report["journal"])), report["shard"]) for report in reports]
    )
    timings = with_load_level(timings, production_level(replay))
    stats = {key: sum(report["stats"][key] for report in reports) for key in SUMMED_STATS}
    stats["wall_s"] = max(report["stats"]["wall_s"] for report in reports)
    # One candidate per partition; the `candidates` map stays because pack/gather.py merges the
    # partitions' summaries into one for the side-by-side pack.
    summary = {
        "mode": replay.mode,
        "planned": stats["planned"],
        "candidates": {reports[0]["candidate"]: stats},
        **stats,
    }
    summary["shards"] = [
        {"shard": report["shard"].index, "pid": report["pid"], "clock": report["clock"], **report["stats"]}
        for report in reports
    ]
    return timings, summary
