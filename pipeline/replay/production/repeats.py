"""The production replay done N times in a row (`workload.replay.repeats`), and its runs merged.

Why repeat at all: one replay's intervals treat its requests as independent draws, and under
queueing they are not; the spread between whole replays of the same plan is the direct measure
of what a single run cannot see. Each run is a full replay of the plan, one after the other (never
overlapping: two runs at once would be a load twice the production one), each with its own
journal and, with shards, its own start barrier. Run 0 keeps the names a single replay has always
had, so a spec without `repeats` writes exactly what it wrote before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import pyarrow as pa

from pipeline.contracts import REPEAT_COLUMN
from pipeline.replay.pacing.runs import RunBuilder, execute
from pipeline.replay.production.shards import (
    SUMMED_STATS,
    Shard,
    StartBarrier,
    merge_shards,
    shard_plan,
    shard_settings,
)
from pipeline.replay.recording.records import PlannedRequest

REPEAT = REPEAT_COLUMN[0]


def repeat_name(name: str, repeat: int) -> str:
    """The journal name of one run: the single replay's name for run 0, `<name>.repeat<k>` after."""
    return name if repeat == 0 else f"{name}.repeat{repeat}"


def shard_run_name(candidate: str, shard: Shard, repeat: int) -> str:
    """The journal name of one shard's run: the candidate's name (`<candidate>-shard_<i>` when the
    plan is split over shards), as `repeat_name` has it for run `repeat`."""
    return repeat_name(candidate if shard.count == 1 else f"{candidate}-{shard.label}", repeat)


def repeat_shard(shard: Shard, repeat: int) -> Shard:
    """The shard as it starts run `repeat`: the shards of each run wait at a barrier of their own."""
    return shard if repeat == 0 else replace(shard, barrier_dir=str(Path(shard.barrier_dir) / f"repeat-{repeat}"))


def replay_runs(
    plan: list[PlannedRequest],
    runs: RunBuilder,
    shard: Shard,
    replay,
    *,
    log: Callable[[str], None],
    unresolved: Callable[[pa.Table], list[str]] | None = None,
) -> list[dict]:
    """Replay the shard's part of the plan (`shard_plan`, at `shard_settings`) `replay.repeats`
    times, one run after the other (never two at once), each a run of `runs` journalled as
    `shard_run_name`; one report per run (`merge_repeats`), each with its `repeat`. With
    `replay.until` (one shard), up to `until.max_runs` runs: after each from the second, the runs so
    far go to `unresolved` (the claimed figures still inconclusive: `analysis.repeated_figures`), and
    the replay stops when none is, or when `until.max_minutes` have passed since the first run."""
    mine, settings, candidate = shard_plan(plan, shard), shard_settings(runs.settings, shard), runs.target.candidate
    until = getattr(replay, "until", None)
    planned = until.max_runs if until is not None else replay.repeats
    started = time.perf_counter()
    reports: list[dict] = []
    for repeat in range(planned):
        if until is not None and reports and _stop(reports, replay, until, started, unresolved, log):
            break
        barrier = StartBarrier(repeat_shard(shard, repeat), replay.shard_ready_timeout_s) if shard.count > 1 else None
        run = f", run {repeat + 1} of {'at most ' if until else ''}{planned}" if planned > 1 else ""
        log(
            f"replaying {len(mine)} requests against {candidate} (mode {replay.mode}, {shard.label} of "
            f"{shard.count}{run}, pid {os.getpid()})"
        )
        outcome = execute(runs.run(shard_run_name(candidate, shard, repeat), mine, settings, start_at=barrier))
        stats = outcome.stats
        log(
            f"{candidate} {shard.label}{run}: {stats.sent} sent, {stats.errors} errors, {stats.unsent} not sent "
            f"in {stats.wall_s:.1f} s"
        )
        reports.append(
            {
                "candidate": candidate,
                "shard": shard,
                "repeat": repeat,
                "journal": str(outcome.journal),
                "stats": outcome.totals(),
                "pid": os.getpid(),
                **(barrier.report() if barrier else {"clock": "monotonic"}),
            }
        )
    return reports


def _stop(reports: list[dict], replay, until, started: float, unresolved, log: Callable[[str], None]) -> bool:
    """Whether `until: resolved` stops before another run: the minutes are spent, or (from two runs)
    no claimed figure is still inconclusive."""
    minutes = (time.perf_counter() - started) / 60.0
    if minutes >= until.max_minutes:
        log(f"until resolved: {minutes:.1f} min ≥ max_minutes {until.max_minutes:g} after {len(reports)} run(s)")
        return True
    if len(reports) < 2 or unresolved is None:
        return False
    still = unresolved(merge_repeats(reports, replay)[0])
    log(f"until resolved: after {len(reports)} runs, inconclusive: {', '.join(still) or 'none'}")
    return not still


def with_repeat_column(table: pa.Table, repeat: int) -> pa.Table:
    return table.append_column(REPEAT, pa.array([repeat] * table.num_rows, REPEAT_COLUMN[1]))


def merge_repeats(reports: list[dict], replay) -> tuple[pa.Table, dict]:
    """The raw timings of every run, each row with its `repeat`, and the replay summary.

    `reports` are the shards' reports (`merge_shards`), each with its `repeat` (0 when absent).
    One run: the summary is that run's, as before. Several: the totals are summed over the runs
    (every planned request was sent once per run, so `planned` is N × the plan), `wall_s` too (the
    runs went one after the other), `peak_in_flight` is the highest, and `runs` holds each run's
    own summary."""
    by_repeat: dict[int, list[dict]] = {}
    for report in reports:
        by_repeat.setdefault(report.get("repeat", 0), []).append(report)
    merged = [(repeat, *merge_shards(by_repeat[repeat], replay)) for repeat in sorted(by_repeat)]
    timings = pa.concat_tables([with_repeat_column(table, repeat) for repeat, table, _ in merged])
    if len(merged) == 1:
        return timings, merged[0][2]
    runs = [{"repeat": repeat, **summary} for repeat, _, summary in merged]
    totals = {key: sum(run[key] for run in runs) for key in SUMMED_STATS if key != "peak_in_flight"}
    totals["peak_in_flight"] = max(run["peak_in_flight"] for run in runs)
    totals["wall_s"] = sum(run["wall_s"] for run in runs)
    candidate = next(iter(runs[0]["candidates"]))
    summary = {"mode": replay.mode, **totals, "candidates": {candidate: dict(totals)}, "repeats": len(runs)}
    summary["runs"] = [{k: v for k, v in run.items() if k != "candidates"} for run in runs]
    return timings, summary
