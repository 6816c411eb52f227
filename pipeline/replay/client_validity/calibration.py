"""Client validity: before the replay, drive the plan's busiest stretch against a zero-delay echo
endpoint. The schedule lag and TTFT measured there are the client's own floor; when the client
cannot keep the plan's schedule even against an endpoint that adds nothing, the run is marked
client-limited and the evidence pack says so.

The echo endpoint is injected (`echo_server`): the caller at the app edge passes the reference
endpoint's instant profile (`ReferenceServer("zero")`), so the replay package never imports the
simulated endpoint it is meant to measure others against."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import replace
from pathlib import Path
from typing import Protocol, cast

from pipeline.duck.session import run_query
from pipeline.replay.client_validity.roofline import (
    DEFAULT_ROOFLINE,
    RooflineSearch,
    echo_step_runner,
    events_per_request,
    peak_demand,
    search,
)
from pipeline.replay.client_validity.roofline import with_demand_share as roofline_with_demand_share
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import ReplayRun, execute
from pipeline.replay.recording.records import PlannedRequest

CLIENT_LIMITED_LAG_MS = 10.0  # schedule lag p99 above this: the client, not the endpoint, set the pace
CALIBRATION_SPAN_S = 10.0
CALIBRATION_MAX_REQUESTS = 2000
CALIBRATION_MAX_DURATION_S = 60.0
ECHO_MODEL = "reference-model"  # the model name the reference endpoint's `zero` profile serves


class EchoEndpoint(Protocol):
    """A running zero-delay echo endpoint: an OpenAI-compatible server that adds no latency."""

    @property
    def base_url(self) -> str: ...


EchoServer = Callable[[], AbstractContextManager[EchoEndpoint]]
"""Starts an echo endpoint for the `with` block and stops it after (e.g. `lambda: ReferenceServer("zero")`)."""


def busiest_stretch(
    plan: list[PlannedRequest], span_s: float = CALIBRATION_SPAN_S, limit: int = CALIBRATION_MAX_REQUESTS
) -> list[PlannedRequest]:
    """The densest `span_s` seconds of an open-loop plan, re-based to start at 0 (the plan's peak
    rate); for a closed-loop plan (no offsets), its first `limit` requests."""
    if not plan or plan[0].scheduled_offset_s is None:
        return plan[:limit]
    offsets = [cast(float, item.scheduled_offset_s) for item in plan]  # an open loop times every request
    best_start, best_count, end = 0, 0, 0
    for start, offset in enumerate(offsets):
        while end < len(offsets) and offsets[end] < offset + span_s:
            end += 1
        if end - start > best_count:
            best_start, best_count = start, end - start
    stretch = plan[best_start : best_start + min(best_count, limit)]
    origin = offsets[best_start]
    return [
        replace(item, request_id=f"calibration-{item.request_id}", scheduled_offset_s=offset - origin)
        for item, offset in zip(stretch, offsets[best_start:])
    ]


def calibrate(
    plan: list[PlannedRequest],
    settings: ReplaySettings,
    journal_path: Path,
    *,
    echo_server: EchoServer,
    roofline: RooflineSearch | None = DEFAULT_ROOFLINE,
) -> dict:
    """Replay the plan's busiest stretch against a zero-delay echo endpoint that `echo_server` starts,
    then (unless `roofline` is None) ramp the client to its own ceiling against the same endpoint
    (roofline.py): the figures gain `roofline`, with the plan's peak demand as a share of it."""
    stretch = busiest_stretch(plan)
    bounded = replace(
        settings, max_duration_s=min(settings.max_duration_s, CALIBRATION_MAX_DURATION_S), retries=0, progress=False
    )
    with echo_server() as server:
        echo = Target("calibration-echo", server.base_url, ECHO_MODEL)
        calibration = execute(ReplayRun(stretch, echo, bounded, "calibration", journal_path))
        ceiling = None
        if roofline is not None:
            runner = echo_step_runner(server.base_url, ECHO_MODEL, settings, roofline.step_s)
            ceiling = search(runner, events_per_request(stretch), roofline, peak_demand(stretch)["sends_per_s"])
    figures = run_query("client_calibration", {"calibration_timings": calibration.timings()}).to_pylist()[0]
    lag_p99 = figures["schedule_lag_ms_p99"]
    figures.update(
        mode=settings.mode,
        peak_rate_per_s=(figures["requests"] - 1) / figures["span_s"] if figures["span_s"] else None,
        concurrency=settings.concurrency,
        threshold_ms=CLIENT_LIMITED_LAG_MS,
        client_limited=bool(figures["errors"]) or (lag_p99 is not None and lag_p99 > CLIENT_LIMITED_LAG_MS),
    )
    if ceiling is not None:
        figures["roofline"] = roofline_with_demand_share(ceiling, peak_demand(stretch))
    return figures
