"""A load sweep: the plan replayed at each load level, one level after the other, per candidate.

The spec's own replay (`raw_timings`) is the production level; the sweep replays every other
level of `workload.replay.sweep` (pipeline/spec/sweep.py) into `sweep_timings`, with the same
engine and the same raw-timing columns, plus `load_level` (the level's number: × logged traffic,
requests/s or requests in flight) and `load_level_label` (e.g. "2×"), so that no figure ever
mixes two levels. Every loop is bounded: at most MAX_LEVELS levels, each by its request count
(`requests_per_level`, the plan's length), its schedule (`duration_s_per_level`) and the
replay's `max_duration_s`. With `stop_after_miss`, a candidate's higher levels are skipped once
a level clearly misses the SLA (the caller's `judge` decides from the level's raw timings).

With `sweep.search` the levels are not listed: the capacity search (pipeline/replay/conditions/capacity_search.py)
chooses each next level from the judgements so far (above the production load, or below it when
the production load misses the SLA), and every level it picks is replayed here the
same way; the summary says, per candidate, whether its bracket closed and, if not, why.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

import pyarrow as pa

from pipeline.contracts import LOAD_LEVEL_COLUMNS, SWEEP_TIMINGS_SCHEMA
from pipeline.plan import arrivals
from pipeline.replay.conditions import capacity_search
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.pacing.runs import RunBuilder, execute
from pipeline.replay.recording.records import PlannedRequest

LOAD_UNITS = {"trace": "× logged traffic", "rate": "requests/s", "concurrency": "requests in flight"}


@dataclass(frozen=True)
class LoadLevel:
    value: float  # what `load_level` holds: larger is more load
    label: str
    knob: float  # the replay setting at this level: time_scale, rate_per_s or concurrency
    production: bool = False  # the spec's own load: replayed by raw_timings, not by the sweep


# the replay setting each mode's sweep turns (what a capacity row calls its `knob`)
KNOB_SETTING = {"trace": "time_scale", "rate": "rate_per_s", "concurrency": "concurrency"}


def _level(mode: str, knob: float, production: bool = False) -> LoadLevel:
    if mode == "trace":
        value = 1.0 / knob
        return LoadLevel(value, f"{value:.3g}×", knob, production)
    if mode == "rate":
        return LoadLevel(float(knob), f"{knob:.3g} req/s", float(knob), production)
    return LoadLevel(float(knob), f"{int(knob)} in flight", float(knob), production)


def level_at(mode: str, value: float) -> LoadLevel:
    """The level of a load-level value (what the search chooses, what `load_level` holds): trace's
    knob is 1 / value (the time scale), the other modes' the value itself."""
    if mode == "trace":
        return LoadLevel(float(value), f"{value:.3g}×", 1.0 / value)
    return _level(mode, value)


def level_for_value(replay, value: float) -> LoadLevel:
    """The listed (or production) level with this value, else the level a search chose there."""
    listed = next((level for level in load_levels(replay) if math.isclose(level.value, value, rel_tol=1e-9)), None)
    return listed or level_at(replay.mode, value)


def production_level(replay) -> LoadLevel:
    """The spec's own load: time_scale, rate_per_s or concurrency of `workload.replay`."""
    knob = {"trace": replay.time_scale, "rate": replay.rate_per_s, "concurrency": replay.concurrency}[replay.mode]
    return _level(replay.mode, knob, production=True)


def load_levels(replay) -> list[LoadLevel]:
    """The production level and every listed sweep level, ascending by load; a sweep level equal
    to the production load is the production level (replayed once). A search lists none: its
    levels are chosen as it runs."""
    own = production_level(replay)
    levels = [own]
    if replay.sweep is not None and replay.sweep.search is None:
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
        # a session's think times are time-scaled like the offsets (pipeline/plan/sessions.py)
        prefix = [
            item if item.think_time_s is None else dataclasses.replace(item, think_time_s=item.think_time_s * ratio)
            for item in prefix
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


# judge(candidate, level, the level's raw timings; None for the production level) -> the level's
# judgement: capacity_search.MET, CLEARLY_MISSED or INCONCLUSIVE
Judge = Callable[[str, LoadLevel, pa.Table | None], str]
# around_level(candidate, level): a context held while that level is replayed (the server-metrics scrape)
AroundLevel = Callable[[str, LoadLevel], AbstractContextManager]


@dataclass
class _Runner:
    """Replays one level after the other for one candidate, collecting the tables and entries."""

    plan: list[PlannedRequest]
    replay: Any  # the spec's Replay (replay imports no spec)
    runs: RunBuilder
    log: Callable[[str], None]
    around_level: AroundLevel
    tables: list[pa.Table] = dataclasses.field(default_factory=list)
    entries: list[dict] = dataclasses.field(default_factory=list)

    def run(self, level: LoadLevel, judge: Judge | None, **extra) -> str | None:
        """Replay `level` (the production level: reuse raw_timings) and judge it (None: no judge)."""
        entry = {"load_level": level.value, "load_level_label": level.label, "production": level.production, **extra}
        self.entries.append(entry)
        table = None
        if level.production:
            entry["status"] = "reused"  # raw_timings holds it
        else:
            candidate = self.runs.target.candidate
            requests = level_plan(self.plan, level, self.replay)
            self.log(f"sweep {candidate} at {level.label}: {len(requests)} requests")
            settings = level_settings(self.runs.settings, level, self.replay.mode)
            level_run = self.runs.run(f"{candidate}.sweep{len(self.entries) - 1}", requests, settings)
            sent = execute(level_run, beside=self.around_level(candidate, level))
            table = with_load_level(sent.timings(), level)
            self.tables.append(table)
            entry.update(status="replayed", **sent.totals())
        if judge is None:
            return None
        outcome = judge(self.runs.target.candidate, level, table)
        entry.update(outcome=outcome, clearly_missed_sla=outcome == capacity_search.CLEARLY_MISSED)
        return outcome


def search_bounds(sweep) -> capacity_search.SearchBounds:
    found = sweep.search
    return capacity_search.SearchBounds(
        found.growth, found.precision, found.max_levels, found.start, found.max_search_s
    )


def run_sweep(
    plan: list[PlannedRequest],
    replay,
    runs: RunBuilder,
    judge: Judge | None = None,
    log: Callable[[str], None] = lambda message: None,
    around_level: AroundLevel = lambda candidate, level: nullcontext(),
) -> tuple[pa.Table, dict]:
    """Replay every sweep level against the candidate (`runs.target`), each level a run of `runs`
    journalled as `<candidate>.sweep<i>` (i: the level's entry in the summary): the listed levels
    ascending, or those the capacity search chooses (it needs the `judge`). Returns the sweep's raw
    timings and a summary of what ran, was reused or skipped (and, for a search, how it ended)."""
    target = runs.target
    runner = _Runner(plan, replay, runs, log, around_level)
    # One candidate per partition; the `candidates` (and `search`) maps stay because pack/assemble/gather.py
    # merges the partitions' sweep summaries into one for the side-by-side pack.
    summary: dict = {"mode": replay.mode, "unit": LOAD_UNITS[replay.mode], "candidates": {target.candidate: None}}
    if replay.sweep is not None and replay.sweep.search is not None:
        if judge is None:
            raise ValueError("a capacity search needs a judge of each level")
        levels = {level.value: level for level in load_levels(replay)}

        def measure(value: float, phase: str) -> str:
            level = levels.get(value) or level_at(replay.mode, value)
            return runner.run(level, judge, phase=phase) or capacity_search.INCONCLUSIVE

        def ran_alone(value: float) -> bool:
            """The level ran with at most one request in flight (a single request at a time)."""
            entry: dict = next((e for e in reversed(runner.entries) if e["load_level"] == value), {})
            return entry.get("status") == "replayed" and entry.get("peak_in_flight", 2) <= 1

        result = capacity_search.search(
            production_level(replay).value,
            search_bounds(replay.sweep),
            measure,
            integer=replay.mode == "concurrency",
            ran_alone=ran_alone,
        )
        log(f"sweep {target.candidate}: {result.reason}")
        summary["search"] = {
            target.candidate: {
                "bracket_closed": result.bracket_closed,
                "reason": result.reason,
                "levels_run": result.levels_run,
            }
        }
    else:
        stop_judge = judge if replay.sweep is not None and replay.sweep.stop_after_miss else None
        missed = None
        for level in load_levels(replay):
            if missed is not None:
                runner.entries.append(
                    {
                        "load_level": level.value,
                        "load_level_label": level.label,
                        "production": level.production,
                        "status": "skipped",
                        "reason": f"level {missed} clearly missed the SLA",
                    }
                )
                continue
            if runner.run(level, stop_judge) == capacity_search.CLEARLY_MISSED:
                missed = level.label
    summary["candidates"][target.candidate] = runner.entries
    timings = (
        pa.concat_tables([t.cast(SWEEP_TIMINGS_SCHEMA) for t in runner.tables])
        if runner.tables
        else SWEEP_TIMINGS_SCHEMA.empty_table()
    )
    return timings, summary
