"""The client's roofline: the highest send rate and SSE-event rate this client sustains on this
host against a zero-delay endpoint, and the run's peak demand as a share of it.

Calibration (calibration.py) answers "did the client keep *this* plan's peak?"; the roofline
answers "how far from its own ceiling was it?". A run at 90 % of the client's ceiling is one
scheduler hiccup away from measuring the client instead of the endpoint, even when its lag was
fine; a run at 5 % has room. After MLCommons Endpoints' `benchmark_httpclient`, which sweeps its
HTTP client against a local echo server to find the rate it saturates at.

The search is a short doubling ramp of constant-rate steps (each `step_s` long, from the plan's
peak rate), bounded in steps, in requests per step and in total time, because it runs in every replay: it stops at the
first step the client does not sustain (schedule lag p99 above `lag_threshold_ms`, or any error
or unsent request). The figures are the highest sustained step's *achieved* sends/s and events/s
(what the journal shows, not the rate asked for). Each request asks for the plan's own mean
output length, so events per send are the workload's."""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from pipeline.duck.session import run_query
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import ReplayRun, execute
from pipeline.replay.recording.records import PlannedRequest

ROOFLINE_LAG_MS = 5.0  # a step is sustained when its schedule lag p99 is at most this, with no errors
ROOFLINE_FIRST_RATE_PER_S = 10.0  # the ramp starts at the plan's peak rate, or at this when lower
ROOFLINE_TOP_RATE_PER_S = 6400.0
ROOFLINE_STEP_S = 1.0
ROOFLINE_BUDGET_S = 9.0  # no step starts after this much time (a running step ends within ~step_s + 2 s)
ROOFLINE_MAX_EVENTS_PER_REQUEST = 256  # the plan's mean output length, capped so one step stays short
ROOFLINE_PROMPT_WORDS = 32
STEP_TIMEOUT_S = 2.0  # a reply slower than this, against an endpoint that adds nothing, fails its step


@dataclass(frozen=True)
class RooflineSearch:
    """How the ramp is bounded; tests pass smaller ones."""

    rates_per_s: tuple[float, ...] | None = None  # None: doubling from the plan's peak rate (`ramp_from`)
    step_s: float = ROOFLINE_STEP_S
    budget_s: float = ROOFLINE_BUDGET_S
    lag_threshold_ms: float = ROOFLINE_LAG_MS


DEFAULT_ROOFLINE = RooflineSearch()

StepRunner = Callable[[float, int], dict]
"""Runs one constant-rate step (rate per s, events per request) and returns its figures: requests,
errors, schedule_lag_ms_p99, sends_per_s, events_per_s (the keys of sql/client_roofline_step.sql)."""


def peak_demand(stretch: list[PlannedRequest]) -> dict:
    """The plan's peak send rate and events/s, from its busiest stretch (calibration's): requests and
    planned output tokens (max_tokens, an upper bound on SSE content events) over the stretch's span.
    None for a closed-loop plan (no schedule, so no planned rate) or a stretch of one request."""
    offsets = [item.scheduled_offset_s for item in stretch]
    if len(stretch) < 2 or any(offset is None for offset in offsets):
        return {"sends_per_s": None, "events_per_s": None}
    span_s = cast(float, offsets[-1]) - cast(float, offsets[0])
    if span_s <= 0:
        return {"sends_per_s": None, "events_per_s": None}
    events = sum(item.max_tokens for item in stretch[:-1])  # the last send starts the span's end
    return {"sends_per_s": (len(stretch) - 1) / span_s, "events_per_s": events / span_s}


def events_per_request(stretch: list[PlannedRequest]) -> int:
    """The stretch's mean output length (so the roofline's events per send are the workload's), capped."""
    if not stretch:
        return 16
    mean = sum(item.max_tokens for item in stretch) / len(stretch)
    return max(1, min(ROOFLINE_MAX_EVENTS_PER_REQUEST, round(mean)))


def ramp_from(peak_per_s: float | None) -> tuple[float, ...]:
    """Doubling rates from the plan's peak (so the first step asks "is the peak kept at all?" and
    the budget goes to the headroom above it), from ROOFLINE_FIRST_RATE_PER_S when the peak is lower
    or unknown, up to ROOFLINE_TOP_RATE_PER_S."""
    rate = max(ROOFLINE_FIRST_RATE_PER_S, float(math.ceil(peak_per_s or 0.0)))
    rates = []
    while rate <= ROOFLINE_TOP_RATE_PER_S:
        rates.append(rate)
        rate *= 2
    return tuple(rates) or (ROOFLINE_TOP_RATE_PER_S,)


def search(
    run_step: StepRunner, events: int, bounds: RooflineSearch = DEFAULT_ROOFLINE, peak_per_s: float | None = None
) -> dict:
    """Ramp through `bounds.rates_per_s` (or doubling from `peak_per_s`) until a step is not
    sustained or the time budget is spent; return every step tried and the highest sustained step's
    achieved rates (None when none was)."""
    started = time.monotonic()
    steps: list[dict] = []
    stopped_by = "rates exhausted"
    for rate in bounds.rates_per_s or ramp_from(peak_per_s):
        if time.monotonic() - started >= bounds.budget_s:
            stopped_by = "time budget"
            break
        figures = run_step(rate, events)
        lag = figures["schedule_lag_ms_p99"]
        sustained = not figures["errors"] and lag is not None and lag <= bounds.lag_threshold_ms
        steps.append({"rate_per_s": rate, **figures, "sustained": sustained})
        if not sustained:
            stopped_by = "step not sustained"
            break
    best = next((step for step in reversed(steps) if step["sustained"]), None)
    return {
        "lag_threshold_ms": bounds.lag_threshold_ms,
        "events_per_request": events,
        "step_s": bounds.step_s,
        "steps": steps,
        "stopped_by": stopped_by,
        "sends_per_s": best["sends_per_s"] if best else None,
        "events_per_s": best["events_per_s"] if best else None,
        # the highest sustained step is a floor of the ceiling when the ramp ran out before failing
        "lower_bound": stopped_by != "step not sustained",
    }


def with_demand_share(roofline: dict, demand: dict) -> dict:
    """The run's peak demand and its share of the roofline (None where either side is unknown)."""

    def share(need: float | None, have: float | None) -> float | None:
        return need / have if need is not None and have else None

    return {
        **roofline,
        "peak_demand_sends_per_s": demand["sends_per_s"],
        "peak_demand_events_per_s": demand["events_per_s"],
        "peak_sends_share": share(demand["sends_per_s"], roofline["sends_per_s"]),
        "peak_events_share": share(demand["events_per_s"], roofline["events_per_s"]),
    }


def echo_step_runner(base_url: str, model: str, settings: ReplaySettings, step_s: float) -> StepRunner:
    """A step runner that replays a constant-rate plan against the echo endpoint at `base_url`. Each
    step's journal is read back and deleted: the figures of every step are kept in the roofline
    itself, and the pack's journal/ holds only the replays whose rows are evidence (a ramp's
    thousands of echo rows are not; they would also join the replay journals a glob finds)."""

    def run_step(rate: float, events: int) -> dict:
        count = max(2, int(rate * step_s))
        plan = [
            PlannedRequest(
                request_id=f"roofline-{rate:g}-{index:06d}",
                scheduled_offset_s=index / rate,
                messages=[{"role": "user", "content": _prompt(index)}],
                max_tokens=events,
                prompt_tokens_client=ROOFLINE_PROMPT_WORDS,
            )
            for index in range(count)
        ]
        bounded = ReplaySettings(
            mode="rate",
            request_timeout_s=STEP_TIMEOUT_S,
            max_duration_s=step_s + STEP_TIMEOUT_S,
            transport=settings.transport,
        )
        with tempfile.TemporaryDirectory(prefix="loadproof-roofline-") as folder:
            journal = Path(folder) / f"roofline-{rate:g}.jsonl"
            step = ReplayRun(plan, Target("roofline-echo", base_url, model), bounded, "roofline", journal)
            timings = execute(step).timings()
        figures = run_query("client_roofline_step", {"roofline_timings": timings}).to_pylist()[0]
        return figures

    return run_step


def _prompt(index: int) -> str:
    """A short prompt that differs per request (so no reply is served from a cache)."""
    return " ".join(f"w{(index + j) % 97}" for j in range(ROOFLINE_PROMPT_WORDS))
