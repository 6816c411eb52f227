"""A replay stopped mid-way (`pipeline/interrupts.py`, `pipeline/replay/pacing/stopping.py`), against the
reference endpoint on loopback: the requests in flight are recorded `cancelled`, the rest
`not_sent` and never reach the server, the journal is flushed to a readable Parquet file, and a
replay asked to start after the stop sends nothing. The stop is asked once the journal holds its
first records (polled, no fixed wait)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import REPO_ROOT, interrupts
from pipeline.reference import ReferenceServer
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import ReplayRun, execute
from pipeline.replay.pacing.stopping import ReplayStopped, StopWatch
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens
from tests.support.replay_driver import count_lines

MESSAGES = [{"role": "user", "content": "Why was my card declined at the shop today?"}]
WAIT_S = 60  # a generous guard on every poll, not a timing threshold


@pytest.fixture()
def stop_file(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(interrupts.STOP_FILE_ENV, str(tmp_path / "stop"))
    interrupts.reset()
    yield tmp_path / "stop"
    interrupts.reset()


def plan(n: int) -> list[PlannedRequest]:
    # 64 tokens at the demo profile's ~8 ms each: every request is in flight for half a second or more
    return [PlannedRequest(f"q{i}", i * 0.02, MESSAGES, 64, count_message_tokens(MESSAGES)) for i in range(n)]


def poll_until(condition, what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)  # polling interval, not a wait for readiness


@pytest.mark.parametrize(
    "settings", [ReplaySettings(), ReplaySettings(mode="concurrency", concurrency=16)], ids=["open", "closed"]
)
def test_a_stopped_replay_cancels_in_flight_sends_nothing_more_and_flushes_parquet(tmp_path, stop_file, settings):
    journal = tmp_path / "journal" / "ref.jsonl"
    requests = plan(400)  # 8 s of arrivals (25 s at 16 at once): far from done when stopped
    raised: list[BaseException] = []
    with ReferenceServer("demo", timeline_path=tmp_path / "timeline.jsonl") as server:
        run = ReplayRun(requests, Target("ref", server.base_url, "reference-model"), settings, "run-1", journal)

        def replay() -> None:
            try:
                execute(run)
            except BaseException as exc:  # noqa: BLE001 (kept for the assertions below)
                raised.append(exc)

        worker = threading.Thread(target=replay)
        worker.start()
        poll_until(lambda: count_lines(journal) >= 3, "the replay's first records")
        interrupts.request_stop()
        worker.join(WAIT_S)
        assert not worker.is_alive()
    assert len(raised) == 1 and isinstance(raised[0], ReplayStopped), raised
    assert interrupts.stop_requested() and stop_file.exists()  # the request reached the stop file

    table = pq.read_table(journal.with_suffix(".parquet"))  # readable, one row per planned request
    rows = table.to_pylist()
    assert sorted(row["request_id"] for row in rows) == sorted(item.request_id for item in requests)
    by_type: dict[str | None, list[dict]] = {}
    for row in rows:
        by_type.setdefault(row["error_type"], []).append(row)
    assert by_type.get(None), "no request finished before the stop"
    cancelled, not_sent = by_type.get("cancelled", []), by_type.get("not_sent", [])
    assert cancelled, "no request was in flight at the stop"
    assert not_sent, "every request was sent"
    assert all(row["t_sent_ns"] is not None and row["t_end_ns"] >= row["t_sent_ns"] for row in cancelled)
    assert all(row["e2e_ms"] is None and row["ttft_ms"] is None for row in cancelled)  # no latency made of a cut
    assert all("interrupted" in row["error_message"] for row in cancelled + not_sent)
    # nothing planned after the stop reached the server: every request it saw was recorded as sent
    arrived = {json.loads(line)["request_id"] for line in (tmp_path / "timeline.jsonl").read_text().splitlines()}
    assert not arrived & {row["request_id"] for row in not_sent}
    assert interrupts.flushed() == [{"replay": "ref", "path": str(journal.with_suffix(".parquet")), "rows": len(rows)}]


def test_a_replay_asked_to_start_after_the_stop_sends_nothing(tmp_path, stop_file):
    interrupts.request_stop()
    target = Target("ref", "http://127.0.0.1:9/v1", "reference-model")  # never reached
    run = ReplayRun(plan(3), target, ReplaySettings(), "run-1", tmp_path / "journal" / "level2.jsonl")
    with pytest.raises(interrupts.StopRequested, match="level2 not started"):
        execute(run)
    assert not run.journal.exists()


def test_a_send_task_that_first_runs_after_the_stop_never_starts():
    """The open loop may make a request's task just before the stop is seen; `guard` cannot cancel a
    task that has not yet run, so the task itself refuses to start: it is recorded `not_sent`, not
    sent after the stop with no record (a CI run once lost one request of 400 that way)."""
    watch = StopWatch()

    async def fire(request_id: str) -> str:  # as the engine's: track, then count it started and send
        watch.track()
        watch.started.add(request_id)
        return "sent"

    async def main() -> None:
        assert await asyncio.create_task(fire("q34")) == "sent"
        late = asyncio.create_task(fire("q35"))  # made before the stop, first run after it
        watch.stopped = True
        with pytest.raises(asyncio.CancelledError):
            await late

    asyncio.run(main())
    assert watch.started == {"q34"}  # q35 never started: not_started() records it not_sent


UNDER_DAGSTERS_HANDLER = """
import os, signal, sys, threading, time
from pathlib import Path
from dagster._core.errors import DagsterExecutionInterruptedError
from dagster._utils.interrupts import capture_interrupts, raise_interrupts_as
from pipeline.replay.pacing.engine import ReplaySettings, Target
from pipeline.replay.pacing.runs import ReplayRun, execute
from pipeline.replay.pacing.stopping import ReplayStopped
from tests.integration.test_replay_stop import plan, poll_until
from tests.support.replay_driver import count_lines

journal = Path(sys.argv[2])
run = ReplayRun(plan(400), Target("ref", sys.argv[1], "reference-model"), ReplaySettings(), "run-1", journal)

def terminate():  # as Dagster terminates a run launched from its UI: SIGINT to the run worker itself
    poll_until(lambda: count_lines(journal) >= 3, "the replay's first records")
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=terminate, daemon=True).start()
with capture_interrupts(), raise_interrupts_as(DagsterExecutionInterruptedError):  # a step's user code
    try:
        execute(run)
    except ReplayStopped as stopped:
        print("ReplayStopped:", stopped)
        sys.exit(3)
"""


def test_a_replay_under_dagsters_interrupt_handler_stops_as_a_stop_request(tmp_path):
    """A run launched from the Dagster UI and terminated there (or reached by a terminal's Ctrl-C)
    gets SIGINT on its process, whose main thread runs the replay under Dagster's handler: that
    would raise its interrupt error inside whichever event-loop task ran next. The replay turns it
    into a stop request instead (`interrupts.signals_stop_the_replay`): cancelled and not-sent
    requests recorded, the journal flushed to Parquet, `ReplayStopped`."""
    journal = tmp_path / "journal" / "ref.jsonl"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    env.pop(interrupts.STOP_FILE_ENV, None)
    with ReferenceServer("demo") as server:
        done = subprocess.run(
            [sys.executable, "-c", UNDER_DAGSTERS_HANDLER, server.base_url, str(journal)],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO_ROOT,
            timeout=WAIT_S * 2,
        )
    assert done.returncode == 3 and "ReplayStopped: replay ref stopped" in done.stdout, done.stderr[-3000:]
    rows = pq.read_table(journal.with_suffix(".parquet")).to_pylist()
    assert len(rows) == 400  # every planned request, one row each
    kinds = {row["error_type"] for row in rows}
    assert None in kinds and "cancelled" in kinds and "not_sent" in kinds, kinds
