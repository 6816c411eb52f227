"""A load sweep: the plan replayed at each load level, one level after the other, per candidate.

The spec's own replay (`raw_timings`) is the production level; the sweep replays every other
level of `workload.replay.sweep` (pipeline/spec/sweep.py) into `sweep_timings`, with the same
engine and the same raw-timing columns, plus `load_level` (the level's number: × logged traffic,
requests/s or requests in flight) and `load_level_label` (e.g. "2×"), so that no figure ever
mixes two levels. Every loop is bounded: at most MAX_LEVELS levels, each by its request count
(`requests_per_level`, the plan's length), its schedule (`duration_s_per_level`) and the
replay's `max_duration_s`. With `stop_after_miss`, a candidate's higher levels are skipped once
a level clearly misses the SLA (the caller's `judge` decides from the level's raw timings).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from pipeline.contracts import LOAD_LEVEL_COLUMNS, SWEEP_TIMINGS_SCHEMA
from pipeline.plan import arrivals
from pipeline.replay.engine import ReplaySettings, Target, run_replay
from pipeline.replay.journal import Journal, journal_to_table
from pipeline.replay.records import PlannedRequest

LOAD_UNITS = {"trace": "× logged traffic", "rate": "requests/s", "concurrency": "requests in flight"}


@dataclass(frozen=True)
class LoadLevel:
    value: float  # what `load_level` holds: larger is more load
    label: str
    knob: float  # the replay setting at this level: time_scale, rate_per_s or concurrency
    production: bool = False  # the spec's own load: replayed by raw_timings, not by the sweep


def _level(mode: str, knob: float, production: bool = False) -> LoadLevel:
    if mode == "trace":
        value = 1.0 / knob
        return LoadLevel(value, f"{value:.3g}×", knob, production)
    if mode == "rate":
        return LoadLevel(float(knob), f"{knob:.3g} req/s", float(knob), production)
    return LoadLevel(float(knob), f"{int(knob)} in flight", float(knob), production)


def production_level(replay) -> LoadLevel:
    """The spec's own load: time_scale, rate_per_s or concurrency of `workload.replay`."""
    knob = {"trace": replay.time_scale, "rate": replay.rate_per_s, "concurrency": replay.concurrency}[replay.mode]
    return _level(replay.mode, knob, production=True)


def load_levels(replay) -> list[LoadLevel]:
    """The production level and every sweep level, ascending by load; a sweep level equal to the
    production load is the production level (replayed once)."""
    own = production_level(replay)
    levels = [own]
    if replay.sweep is not None:
        for knob in getattr(replay.sweep, replay.sweep.knob):
            if not math.isclose(knob, own.knob, rel_tol=1e-9):
                levels.append(_level(replay.mode, knob))
    return sorted(levels, key=lambda level: level.value)


def level_plan(plan: list[PlannedRequest], level: LoadLevel, replay) -> list[PlannedRequest]:
    """The plan at this level: its first `requests_per_level` requests, re-timed to the level's
    load (trace: offsets × time_scale ratio; rate: the spec's seeded process at the level's rate),
    then only those scheduled within `duration_s_per_level`."""
    sweep = replay.sweep
    prefix = plan[: sweep.requests_per_level] if sweep and sweep.requests_per_level else list(plan)
    if replay.mode == "trace":
        ratio = level.knob / replay.time_scale
        offsets: list[float | None] = [
            None if item.scheduled_offset_s is None else item.scheduled_offset_s * ratio for item in prefix
        ]
    elif replay.mode == "rate":
        offsets = list(
            arrivals.synthetic(
                len(prefix), level.knob, replay.arrival, replay.seed, replay.burstiness, replay.ramp_up_s
            )
        )
    else:
        return prefix
    timed = [dataclasses.replace(item, scheduled_offset_s=offset) for item, offset in zip(prefix, offsets)]
    if sweep and sweep.duration_s_per_level:
        timed = [item for item in timed if (item.scheduled_offset_s or 0.0) < sweep.duration_s_per_level]
    return timed


def level_settings(settings: ReplaySettings, level: LoadLevel, mode: str) -> ReplaySettings:
    return dataclasses.replace(settings, concurrency=int(level.knob)) if mode == "concurrency" else settings


def with_load_level(timings: pa.Table, level: LoadLevel) -> pa.Table:
    """The raw timings with `load_level` and `load_level_label` set on every row."""
    for name, _ in LOAD_LEVEL_COLUMNS:
        if name in timings.schema.names:
            timings = timings.drop_columns([name])
    rows = timings.num_rows
    timings = timings.append_column("load_level", pa.array([level.value] * rows, pa.float64()))
    return timings.append_column("load_level_label", pa.array([level.label] * rows, pa.string()))


# judge(candidate, level, the level's raw timings; None for the production level) -> clearly missed
Judge = Callable[[str, LoadLevel, pa.Table | None], bool]


def run_sweep(
    plan: list[PlannedRequest],
    replay,
    target: Target,
    settings: ReplaySettings,
    run_id: str,
    journal_path: Callable[[str, int], Path],
    judge: Judge | None = None,
    log: Callable[[str], None] = lambda message: None,
) -> tuple[pa.Table, dict]:
    """Replay every sweep level against the candidate `target`, levels ascending. Returns the
    sweep's raw timings and a summary of what ran, was reused or skipped."""
    levels = load_levels(replay)
    stop_judge = judge if replay.sweep is not None and replay.sweep.stop_after_miss else None
    tables, entries, missed = [], [], None
    for index, level in enumerate(levels):
        entry = {"load_level": level.value, "load_level_label": level.label, "production": level.production}
        entries.append(entry)
        if missed is not None:
            entry.update(status="skipped", reason=f"level {missed} clearly missed the SLA")
            continue
        table = None
        if level.production:
            entry["status"] = "reused"  # raw_timings holds it
        else:
            requests = level_plan(plan, level, replay)
            log(f"sweep {target.candidate} at {level.label}: {len(requests)} requests")
            with Journal(journal_path(target.candidate, index)) as journal:
                stats = run_replay(requests, target, level_settings(settings, level, replay.mode), run_id, journal)
            table = with_load_level(journal_to_table(journal.path), level)
            tables.append(table)
            entry.update(status="replayed", **dataclasses.asdict(stats))
        if stop_judge is not None:
            entry["clearly_missed_sla"] = stop_judge(target.candidate, level, table)
            if entry["clearly_missed_sla"]:
                missed = level.label
    # One candidate per partition; the `candidates` map stays because pack/gather.py merges the
    # partitions' sweep summaries into one for the side-by-side pack.
    summary = {"mode": replay.mode, "unit": LOAD_UNITS[replay.mode], "candidates": {target.candidate: entries}}
    timings = (
        pa.concat_tables([t.cast(SWEEP_TIMINGS_SCHEMA) for t in tables])
        if tables
        else SWEEP_TIMINGS_SCHEMA.empty_table()
    )
    return timings, summary
