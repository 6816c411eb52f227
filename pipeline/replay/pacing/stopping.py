"""How a replay stops when the run is asked to (`pipeline/interrupts.py`: SIGTERM, SIGINT, the stop file).

A stopped replay sends no new request, cancels the ones in flight and records each as
`cancelled` (the time it was in flight kept, no latency derived), records every planned request
it never started as `not_sent`, and flushes its journal to a Parquet file beside it: everything
measured up to the stop is kept and readable, and the step then fails (`ReplayStopped`), so no
figure and no pack is made from a replay cut short. The sweep's levels, the arms and the capacity
search's probes are replays too: each checks before it starts (`runs.execute`), so they stop
between levels.
"""

from __future__ import annotations

import asyncio
import time
import weakref
from datetime import UTC, datetime
from pathlib import Path

from pipeline import interrupts
from pipeline.files.layout import write_parquet
from pipeline.replay.pacing import sessions
from pipeline.replay.recording.journal import journal_to_table
from pipeline.replay.recording.records import PlannedRequest, RequestOutcome, build_record

POLL_S = 0.05  # how often the replay's loop looks for a stop request (a stat of the stop file)
NOT_SENT_BY_TIME_BOUND = "replay time bound (max_duration_s) reached"
CANCELLED = "cancelled"


class ReplayStopped(interrupts.StopRequested):
    """A replay ended early by a stop request; its journal and Parquet hold every record up to it."""


class StopWatch:
    """Watches for the stop request beside a replay's sending: once asked, cancels the sending and
    every request waiting or in flight (`track`); `started` holds the requests that were sent."""

    def __init__(self) -> None:
        self.started: set[str] = set()
        self.in_flight: weakref.WeakSet[asyncio.Task] = weakref.WeakSet()  # a finished task drops out
        self.stopped = False

    def track(self) -> None:
        """The current task is sending a request (or waiting to): cancelled on a stop. A task that
        first runs once the stop was seen (the open loop made it just before, and `guard` could not
        know it) raises `CancelledError` here instead: it never starts, so it is recorded `not_sent`,
        where sending it would leave a request sent after the stop with no record in the journal."""
        if self.stopped:
            raise asyncio.CancelledError
        task = asyncio.current_task()
        if task is not None:
            self.in_flight.add(task)

    async def guard(self, sending: asyncio.Task) -> list | None:
        """`sending`'s result, or None when a stop came first (sending and the requests in flight
        cancelled, each in-flight request's cancelled record written before this returns)."""
        while not sending.done():
            if interrupts.stop_requested():
                self.stopped = True
                tasks = [sending, *self.in_flight]
                for task in tasks:
                    task.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
                return None
            await asyncio.wait({sending}, timeout=POLL_S)
        return sending.result()


def not_started(
    plan: list[PlannedRequest], started: set[str], closed_loop: bool
) -> list[tuple[PlannedRequest, float | None]]:
    """The planned requests (session turns too) a stopped replay never started, with their offset
    (none in a closed loop, whose requests have no planned instant)."""
    return [(item, None if closed_loop else item.scheduled_offset_s) for item in plan if item.request_id not in started]


def cancelled_outcome(t_started_ns: int, started_at: datetime) -> RequestOutcome:
    """A request in flight when the replay stopped: from its send call to the cancellation, no reply kept."""
    outcome = RequestOutcome(t_sent_ns=t_started_ns, sent_at=started_at, t_end_ns=time.perf_counter_ns())
    outcome.t_send_call_ns = t_started_ns
    outcome.error_type = CANCELLED
    outcome.error_message = f"in flight when {interrupted_reason()}"
    return outcome


def unsent_record(
    run_id: str, candidate: str, item: PlannedRequest, offset_s: float | None, reason: str = NOT_SENT_BY_TIME_BOUND
) -> dict:
    """A planned request the replay never sent: its time bound ran out, or the run was interrupted."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
    outcome.error_type, outcome.error_message = "not_sent", reason
    record = build_record(
        run_id=run_id,
        candidate=candidate,
        request_id=item.request_id,
        scheduled_offset_s=offset_s,
        t_scheduled_ns=0,
        prompt_tokens_client=item.prompt_tokens_client,
        max_tokens=item.max_tokens,
        outcome=outcome,
        labelled_item_id=item.labelled_item_id,
    )
    record.update(sent_at=None, schedule_lag_ms=None, t_sent_ns=None, t_end_ns=None, t_scheduled_ns=None)
    record.update(ttft_from_schedule_ms=None, e2e_from_schedule_ms=None, t_send_call_ns=None, connect_ms=None)
    sessions.add_record_columns(record, item)
    return record


def interrupted_reason() -> str:
    return f"the run was interrupted ({interrupts.signal_name(interrupts.stop_signal()) or 'stop requested'})"


def flush_stopped(journal: Path) -> Path:
    """A stopped replay's journal (already flushed line by line) as Parquet beside it, noted for
    INTERRUPTED.json; then `ReplayStopped`."""
    table = journal_to_table(journal)
    path = write_parquet(table, journal.with_suffix(".parquet"))
    interrupts.note_flushed(path, table.num_rows, journal.stem)
    raise ReplayStopped(f"replay {journal.stem} stopped: {interrupted_reason()}; {table.num_rows} records in {path}")
