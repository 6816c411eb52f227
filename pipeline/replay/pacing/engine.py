"""Open-loop (at the planned offsets, optionally capped) and closed-loop (fixed concurrency) replay.

Arrival offsets are computed up front (the replay plan); every request is recorded, failed or
not; the loop is bounded by the plan's length and by `max_duration_s`.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Awaitable, Callable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

import httpx

from pipeline.replay.pacing import sessions, stopping
from pipeline.replay.pacing.loop_lag import LoopLagProbe
from pipeline.replay.pacing.pacer import DeadlinePacer
from pipeline.replay.pacing.progress import ReplayProgress
from pipeline.replay.reading.reply_reading import count_reply, reply_counters, withhold_server_text
from pipeline.replay.reading.reply_validity import judge_reply
from pipeline.replay.recording.journal import Journal
from pipeline.replay.recording.records import PlannedRequest, RequestOutcome, build_record, tool_definition_tokens
from pipeline.replay.transport import aio_request, request
from pipeline.replay.transport.api_kinds import API_PATHS, REQUEST_BODIES, ApiKind
from pipeline.replay.transport.request import send_chat

START_LEAD_NS = 50_000_000  # schedule the first request 50 ms after setup, not in the past
# the pool opened before the first send: the most sends planned in any IN_FLIGHT_WINDOW_S, ≤ POOL_CAP
IN_FLIGHT_WINDOW_S = 1.0
POOL_CAP = 1024
RETRYABLE = frozenset({"http_429", "http_5xx", "connect_error", "connect_timeout", "connection_reset"})
# Lets a server-side log be joined with the raw timings. Not `x-request-id`: llama.cpp's server
# (starlette-context) answers 400 with an empty body when that header is not a UUID.
REQUEST_ID_HEADER = "x-loadproof-request-id"


@dataclass(frozen=True)
class Target:
    candidate: str
    base_url: str
    model: str
    api_key: str | None = field(default=None, repr=False)  # never logged
    api_key_env: str | None = None  # the variable it came from: named when the key is refused
    extra_headers: tuple[tuple[str, str], ...] = ()  # sent with every request (e.g. test faults)
    gpu_metrics_url: str | None = None  # its GPU exporter's Prometheus endpoint (server_metrics.py), if any
    api: ApiKind = "chat"  # the OpenAI API the replay speaks to it (api_kinds.py)
    # the tokenizer of the model it serves (`candidates[].tokenizer`): where the plan counts under it,
    # every reply is counted under it too, usage or not (the bill check's counted side)
    tokenizer: str | None = None

    @property
    def chat_url(self) -> str:
        """Chat completions, whatever `api` is: the template-overhead probe and the separate
        accuracy slice speak chat."""
        return self.base_url.rstrip("/") + "/chat/completions"

    @property
    def request_url(self) -> str:
        """Where the replay sends: `api`'s path."""
        return self.base_url.rstrip("/") + API_PATHS[self.api]

    @property
    def models_url(self) -> str:
        return self.base_url.rstrip("/") + "/models"

    def headers(self) -> dict:
        headers = dict(self.extra_headers)
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        return headers


@dataclass(frozen=True)
class ReplaySettings:
    mode: Literal["trace", "rate", "concurrency"] = "trace"
    concurrency: int | None = None
    max_concurrency: int | None = None  # cap on in-flight requests in the open-loop modes
    ramp_up_s: float = 0.0  # closed loop: workers start evenly over this many seconds
    request_timeout_s: float = 60.0
    max_duration_s: float = 600.0
    retries: int = 0
    retry_backoff_s: float = 0.5
    progress: bool = False
    # the server's own error text in error_message (an HTTP error's body, an error event): only
    # under privacy.text keep (from_spec), since a server may quote the request back; else its length
    keep_server_error_text: bool = False
    # HTTP client: aiohttp (default: a fraction of httpx's CPU per request, so the client keeps
    # the schedule at higher rates) or httpx; both record the same timestamps and error types.
    transport: Literal["aiohttp", "httpx"] = "aiohttp"

    @classmethod
    def from_spec(cls, replay, privacy_text: str, progress: bool = False) -> ReplaySettings:
        names = (
            "mode",
            "concurrency",
            "max_concurrency",
            "ramp_up_s",
            "request_timeout_s",
            "max_duration_s",
            "retries",
            "retry_backoff_s",
            "transport",
        )
        keep_text = privacy_text == "keep"
        return cls(
            **{name: getattr(replay, name) for name in names}, progress=progress, keep_server_error_text=keep_text
        )


@dataclass
class ReplayStats:
    planned: int = 0
    sent: int = 0
    errors: int = 0
    unsent: int = 0
    retries: int = 0
    in_flight: int = 0
    peak_in_flight: int = 0
    wall_s: float = 0.0
    # connection set-up before the first send, kept out of every latency: how many were opened
    # (of how many asked for) and how long opening them all took
    pool_connections: int = 0
    pool_connections_wanted: int = 0
    pool_setup_ms: float = 0.0
    # the loop's receipt lag (loop_lag.py): p99 ms of how late this process's loop woke a 5 ms probe
    loop_lag_p99_ms: float | None = None
    loop_lag_samples: int = 0


def run_replay(
    plan: list[PlannedRequest],
    target: Target,
    settings: ReplaySettings,
    run_id: str,
    journal: Journal,
    start_at: Callable[[], int] | None = None,
) -> ReplayStats:
    """Replay the plan; offset 0 is, by default, START_LEAD_NS after setup. The shards of one
    plan pass `start_at` instead: called (in a worker thread) once this process's event loop and
    HTTP client are set up, it blocks until every shard is, and returns the shared perf_counter_ns
    start instant."""
    gc.collect()
    gc.freeze()  # the plan and everything built so far: out of the collector's sight, no long pauses
    try:
        with asyncio.Runner(loop_factory=_loop_factory()) as runner:
            return runner.run(_replay(plan, target, settings, run_id, journal, start_at))
    finally:
        gc.unfreeze()


def _loop_factory():
    """uvloop's event loop where it is installed (less CPU per request), else asyncio's own."""
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop


async def _replay(
    plan: list[PlannedRequest],
    target: Target,
    settings: ReplaySettings,
    run_id: str,
    journal: Journal,
    start_at: Callable[[], int] | None,
) -> ReplayStats:
    stats = ReplayStats(planned=len(plan))
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=None)
    connect_timeout_s = min(10.0, settings.request_timeout_s)
    timeout = httpx.Timeout(settings.request_timeout_s, connect=connect_timeout_s)
    cap = asyncio.Semaphore(settings.max_concurrency) if settings.max_concurrency else None
    progress = ReplayProgress(stats, enabled=settings.progress, label=target.candidate)
    counters = reply_counters(plan)  # loaded before the first send: a GGUF vocabulary takes a second
    tool_counts: dict[str, int] = {}  # each distinct tool definition counted once
    # the client, its send, and how it fills its pool
    transport: tuple[AbstractAsyncContextManager[Any], Callable[..., Awaitable[RequestOutcome]], Callable]
    if settings.transport == "aiohttp":
        transport = (
            aio_request.make_session(settings.request_timeout_s),
            aio_request.send_chat,
            aio_request.open_connections,
        )
    else:
        transport = (
            httpx.AsyncClient(limits=limits, timeout=timeout, trust_env=False),
            send_chat,
            request.open_connections,
        )
    client_cm, send, open_connections = transport
    stop = stopping.StopWatch()
    async with client_cm as client:
        stats.pool_connections_wanted = expected_peak_in_flight(plan, settings)
        pool_started = time.perf_counter_ns()
        opened = await open_connections(
            client, target.models_url, target.headers(), stats.pool_connections_wanted, connect_timeout_s
        )
        stats.pool_connections = len(opened)
        began = time.perf_counter_ns()  # offset 0 and the time bound count from a full pool
        stats.pool_setup_ms = (began - pool_started) / 1e6
        deadline_ns = began + int(settings.max_duration_s * 1e9)

        async def attempt(item: PlannedRequest) -> RequestOutcome:
            remaining_s = max(0.001, (deadline_ns - time.perf_counter_ns()) / 1e9)
            fields = item.request_fields
            if item.labelled_item_id is not None:
                fields = {**(fields or {}), "temperature": 0}  # as the separate accuracy replay asks
            body = REQUEST_BODIES[target.api](target.model, item.messages, item.max_tokens, item.min_tokens, fields)
            headers = {**target.headers(), REQUEST_ID_HEADER: item.request_id}
            timeout_s = min(settings.request_timeout_s, remaining_s)
            return await send(client, target.request_url, body, headers, timeout_s, target.api)

        async def fire(item: PlannedRequest, t_scheduled_ns: int, offset_s: float | None) -> RequestOutcome:
            stop.track()  # cancelled on a stop request, waiting or in flight
            if cap is not None:
                await cap.acquire()  # a capped open loop: waiting here shows up as schedule lag
            stats.in_flight += 1
            stats.peak_in_flight = max(stats.peak_in_flight, stats.in_flight)
            stop.started.add(item.request_id)
            fired_ns, fired_at = time.perf_counter_ns(), datetime.now(UTC)
            try:
                outcome, attempts = await _with_retries(attempt, item, settings, deadline_ns)
            except asyncio.CancelledError:  # in flight at a stop: recorded as cancelled, then the task ends
                outcome, attempts = stopping.cancelled_outcome(fired_ns, fired_at), []
            finally:
                stats.in_flight -= 1
                if cap is not None:
                    cap.release()
            count_reply(outcome, counters.get(item.tokenizer), every_reply=target.tokenizer == item.tokenizer)
            judge_reply(outcome, item.request_fields)
            if not settings.keep_server_error_text:
                withhold_server_text(outcome)
            record = build_record(
                run_id=run_id,
                candidate=target.candidate,
                request_id=item.request_id,
                scheduled_offset_s=offset_s,
                t_scheduled_ns=t_scheduled_ns,
                prompt_tokens_client=item.prompt_tokens_client,
                max_tokens=item.max_tokens,
                outcome=outcome,
                attempts=attempts,
                labelled_item_id=item.labelled_item_id,
            )
            record["tool_definition_tokens"] = tool_definition_tokens(
                item.request_fields, counters.get(item.tokenizer), tool_counts
            )
            sessions.add_record_columns(record, item)
            journal.append(record)
            stats.sent += 1
            stats.errors += record["status"] != "ok"
            stats.retries += record["retry_count"]
            progress.advance()
            if stop.stopped:
                raise asyncio.CancelledError
            return outcome

        start_at_ns = await asyncio.to_thread(start_at) if start_at is not None else None
        if start_at_ns is not None:  # the time bound counts from the common start, not the wait
            deadline_ns = start_at_ns + int(settings.max_duration_s * 1e9)
        chains = sessions.SessionChains(plan, deadline_ns)  # the plan itself when it has no sessions
        probe = LoopLagProbe(deadline_ns)
        probing = asyncio.create_task(probe.run())
        try:
            sending = asyncio.create_task(_send_plan(chains, settings, progress, began, start_at_ns, deadline_ns, fire))
            unsent = await stop.guard(sending)  # None: stopped (stopping.py)
        finally:
            probing.cancel()
            await asyncio.gather(probing, return_exceptions=True)
        stats.loop_lag_p99_ms, stats.loop_lag_samples = probe.p99_ms(), len(probe.lags_ns)
        closed_loop = settings.mode == "concurrency"
        unsent = (
            stopping.not_started(plan, stop.started, closed_loop)
            if unsent is None
            else chains.with_unsent_turns(unsent)
        )
    reason = stopping.interrupted_reason() if stop.stopped else stopping.NOT_SENT_BY_TIME_BOUND
    for item, offset_s in unsent:
        journal.append(stopping.unsent_record(run_id, target.candidate, item, offset_s, reason))
        stats.unsent += 1
    stats.wall_s = (time.perf_counter_ns() - began) / 1e9
    return stats


async def _send_plan(chains, settings: ReplaySettings, progress, began: int, start_at_ns, deadline_ns: int, fire):
    with progress:
        if settings.mode == "concurrency":
            if start_at_ns is not None:
                await asyncio.sleep(max(0.0, (start_at_ns - time.perf_counter_ns()) / 1e9))
            origin = start_at_ns or began
            return await _closed_loop(chains.leads, settings, origin, deadline_ns, chains.wrap(fire, origin))
        start_ns = start_at_ns or began + START_LEAD_NS
        return await _open_loop(chains.leads, start_ns, deadline_ns, chains.wrap(fire, start_ns))


def expected_peak_in_flight(
    plan: list[PlannedRequest], settings: ReplaySettings, window_s: float = IN_FLIGHT_WINDOW_S
) -> int:
    """Connections opened before the first send (more on demand): `peak_in_flight_of` the plan."""
    return peak_in_flight_of([item.scheduled_offset_s for item in plan], settings, window_s)


def peak_in_flight_of(offsets: list[float | None], settings: ReplaySettings, window_s: float) -> int:
    """The closed loop's concurrency, or the most sends of `offsets` (any order) inside any `window_s`
    (a request's expected time in flight) capped by `max_concurrency`; 1 to min(len(offsets), POOL_CAP)."""
    if settings.mode == "concurrency":
        peak = settings.concurrency or 1
    else:
        planned = sorted(offset for offset in offsets if offset is not None)
        peak, first = 0, 0
        for last, offset in enumerate(planned):
            while offset - planned[first] >= window_s:
                first += 1
            peak = max(peak, last - first + 1)
        if settings.max_concurrency:
            peak = min(peak, settings.max_concurrency)
    return max(1, min(peak, len(offsets), POOL_CAP))


async def _with_retries(attempt, item: PlannedRequest, settings: ReplaySettings, deadline_ns: int):
    """Send, and resend retryable failures. Latency stays user-perceived: from the first send."""
    outcome = await attempt(item)
    first_sent_ns, first_sent_at, first_call_ns = outcome.t_sent_ns, outcome.sent_at, outcome.t_send_call_ns
    attempts = [_attempt_summary(outcome, first_sent_ns)]
    for retry in range(settings.retries):
        if outcome.error_type not in RETRYABLE:
            break
        delay_s = outcome.retry_after_s if outcome.retry_after_s is not None else settings.retry_backoff_s * 2**retry
        if time.perf_counter_ns() + delay_s * 1e9 >= deadline_ns:
            break
        await asyncio.sleep(delay_s)
        outcome = await attempt(item)
        attempts.append(_attempt_summary(outcome, first_sent_ns))
    outcome.t_sent_ns, outcome.sent_at, outcome.t_send_call_ns = first_sent_ns, first_sent_at, first_call_ns
    return outcome, attempts


def _attempt_summary(outcome: RequestOutcome, first_sent_ns: int) -> dict:
    return {
        "error_type": outcome.error_type,
        "http_status": outcome.http_status,
        "sent_offset_ns": outcome.t_sent_ns - first_sent_ns,
        "duration_ns": outcome.t_end_ns - outcome.t_sent_ns,
        "prompt_tokens": outcome.prompt_tokens,
        "output_tokens": outcome.output_tokens if outcome.output_tokens is not None else outcome.output_tokens_client,
    }


async def _open_loop(plan, start_ns: int, deadline_ns: int, fire) -> list:
    tasks: set[asyncio.Task] = set()
    unsent: list[tuple[PlannedRequest, float | None]] = []
    failures: list[BaseException] = []

    def finished(task: asyncio.Task) -> None:
        tasks.discard(task)  # a finished task is not kept: memory stays flat over long plans
        if not task.cancelled() and (failure := task.exception()) is not None:
            failures.append(failure)

    pacer = DeadlinePacer()  # wakes at the planned instant (timerfd), not up to 1 ms after it
    try:
        for index, item in enumerate(plan):
            target_ns = start_ns + int((item.scheduled_offset_s or 0.0) * 1e9)
            if target_ns >= deadline_ns:
                unsent.extend((later, later.scheduled_offset_s) for later in plan[index:])
                break
            await pacer.sleep_until(target_ns)
            task = asyncio.create_task(fire(item, target_ns, item.scheduled_offset_s))
            tasks.add(task)
            task.add_done_callback(finished)
    finally:
        pacer.close()
    await asyncio.gather(*tasks)
    if failures:
        raise failures[0]
    return unsent


async def _closed_loop(plan, settings: ReplaySettings, began_ns: int, deadline_ns: int, fire) -> list:
    queue = list(reversed(plan))
    unsent = []
    workers = min(settings.concurrency or 1, len(plan)) or 1

    async def worker(index: int) -> None:
        if settings.ramp_up_s > 0:
            await asyncio.sleep(settings.ramp_up_s * index / workers)
        while queue:
            item = queue.pop()
            now = time.perf_counter_ns()
            if now >= deadline_ns:
                unsent.append((item, None))
                continue
            await fire(item, now, (now - began_ns) / 1e9)

    await asyncio.gather(*(worker(index) for index in range(workers)))
    return unsent
