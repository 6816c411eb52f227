"""The arms: each one's requests sent as a run like every replay (`runs.execute`), one arm after
the other, into `arm_timings` (the raw-timing columns plus `arm`).

`run_arm` runs one arm's requests (a run of the candidate's `RunBuilder`, journalled as
`<candidate>.<arm>`) inside what the caller runs beside it (e.g. a /metrics scrape). `run_arms`
runs the planned arms in ladder order, then asks `follow_up` for arms that depend on what ran
(the ladder's arrival-process step takes (d)'s measured request rate; deciding that needs the
analysis, which this package does not import).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Literal

import pyarrow as pa

from pipeline.contracts import RAW_TIMING_RECORD_SCHEMA
from pipeline.replay.pacing.engine import ReplaySettings
from pipeline.replay.pacing.runs import RunBuilder, execute
from pipeline.replay.recording.records import PlannedRequest

# arm_timings' columns (pipeline/contracts/ ARM_TIMINGS): the raw-timing record, then which arm
# sent the request (a_vendor_conditions, b_prompt_lengths, c_output_lengths, d_request_structure,
# e_arrival_process: pipeline/plan/arms.py) and the loop receipt lag of the client while it sent them
# (the replay's probe, `ReplayStats.loop_lag_p99_ms`: the instrument error of the arm's latency figures)
ARM_COLUMN = ("arm", pa.string())
LOOP_LAG_COLUMN = ("arm_loop_lag_p99_ms", pa.float64())
ARM_TIMINGS_SCHEMA = pa.schema([*RAW_TIMING_RECORD_SCHEMA, ARM_COLUMN, LOOP_LAG_COLUMN])


@dataclass(frozen=True)
class ArmPlan:
    """One arm (pipeline/plan/arms.py builds them): its name, its requests and how they are sent
    (closed loop at `concurrency`, or open loop at the requests' offsets)."""

    arm: str
    mode: Literal["concurrency", "trace"]
    concurrency: int
    requests: list[PlannedRequest]
    # the OpenAI API the arm speaks (api_kinds.py: the claim's endpoint for the vendor's steps);
    # None: the candidate's own (`Target.api`)
    api: str | None = None


def arm_settings(settings: ReplaySettings, arm: ArmPlan, max_duration_s: float) -> ReplaySettings:
    """The replay's own settings (timeouts, retries, transport), with the arm's loop and bound:
    closed at the arm's concurrency, or open at the offsets (no cap: the arrival process is the
    thing measured), workers all started at once (the first wave is the warm-up)."""
    return dataclasses.replace(
        settings,
        mode=arm.mode,
        concurrency=arm.concurrency if arm.mode == "concurrency" else None,
        max_concurrency=None,
        ramp_up_s=0.0,
        max_duration_s=max_duration_s,
    )


def with_arm(timings: pa.Table, arm: str, loop_lag_p99_ms: float | None = None) -> pa.Table:
    """The arm's rows with `arm` and the client's loop receipt lag while it ran (None: not probed)."""
    added = (ARM_COLUMN[0], LOOP_LAG_COLUMN[0])
    timings = timings.drop_columns([name for name in added if name in timings.schema.names])
    timings = timings.append_column(ARM_COLUMN[0], pa.array([arm] * timings.num_rows, ARM_COLUMN[1]))
    return timings.append_column(LOOP_LAG_COLUMN[0], pa.array([loop_lag_p99_ms] * timings.num_rows, LOOP_LAG_COLUMN[1]))


def run_arm(
    arm: ArmPlan, runs: RunBuilder, max_duration_s: float, beside: AbstractContextManager | None = None
) -> tuple[pa.Table, dict]:
    """One arm's requests against the candidate (inside `beside`), journalled as
    `<candidate>.<arm>`: its raw timings (with `arm`) and the replay's totals."""
    settings = arm_settings(runs.settings, arm, max_duration_s)
    run = runs.run(f"{runs.target.candidate}.{arm.arm}", arm.requests, settings)
    if arm.api is not None:
        run = dataclasses.replace(run, target=dataclasses.replace(run.target, api=arm.api))  # type: ignore[arg-type]
    outcome = execute(run, beside)
    table = with_arm(outcome.timings(), arm.arm, outcome.stats.loop_lag_p99_ms).cast(ARM_TIMINGS_SCHEMA)
    summary = {"arm": arm.arm, "mode": arm.mode, "concurrency": arm.concurrency, "api": run.target.api}
    return table, {**summary, **outcome.totals()}


def run_arms(
    planned: list[ArmPlan],
    runs: RunBuilder,
    max_duration_s: float,
    follow_up: Callable[[dict[str, pa.Table]], list[ArmPlan]] | None = None,
    log: Callable[[str], None] = lambda message: None,
    around_arm: Callable[[str], AbstractContextManager] | None = None,
) -> tuple[pa.Table, list[dict]]:
    """Every arm in order, then the follow-up arms; returns all rows and one summary per arm.
    `around_arm(name)`: what each arm runs inside (the server-metrics scrape, scoped by `arm`)."""
    tables: dict[str, pa.Table] = {}
    summaries: list[dict] = []

    def run(arms: list[ArmPlan]) -> None:
        for arm in arms:
            log(f"arm {arm.arm} for {runs.target.candidate}: {len(arm.requests)} requests ({arm.mode})")
            beside = around_arm(arm.arm) if around_arm is not None else None
            tables[arm.arm], summary = run_arm(arm, runs, max_duration_s, beside)
            summaries.append(summary)

    run(planned)
    if follow_up is not None:
        run(follow_up(dict(tables)))
    timings = pa.concat_tables(list(tables.values())) if tables else ARM_TIMINGS_SCHEMA.empty_table()
    return timings, summaries
