"""The process-wide stop request: how SIGTERM and SIGINT stop `loadproof run` / `demo` mid-run.

Why a request and not the signal itself: a signal handler runs only on the main thread, and the
work that has to stop — the replay's event loop, the Dagster run's steps, the shards and the
partitions' run workers in processes of their own — runs elsewhere. So the CLI runs the Dagster
job in a worker thread (`run_interruptible`); the main thread only waits and turns a signal into
the request: a `threading.Event` for this process, and the stop file `$LOADPROOF_STOP_FILE` for its
children (made before the work starts, so every child inherits its name; it exists once a stop is
asked). The replay checks `stop_requested()` (`pipeline/replay/pacing/stopping.py`): no new send, the
requests in flight cancelled and recorded, the journal flushed to Parquet (`note_flushed` lists
what was, for `INTERRUPTED.json`); the step then fails and the run ends. A second signal, or the
grace `$LOADPROOF_STOP_GRACE_S` (default 10 s) running out, forces the exit. Either way the
status is 128 + the signal (130 for SIGINT, 143 for SIGTERM). A leaf: standard library only."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

STOP_FILE_ENV = "LOADPROOF_STOP_FILE"
GRACE_ENV = "LOADPROOF_STOP_GRACE_S"
DEFAULT_GRACE_S = 10.0
INTERRUPTED_NAME = "INTERRUPTED.json"  # in the pack folder of an interrupted run, in place of a pack
PACK_DOCUMENTS = ("evidence_pack.json", "evidence_pack.md", "evidence_pack.html")  # pages.py's, tree.py's
SIGNALS = (signal.SIGINT, signal.SIGTERM)
WAIT_STEP_S = 0.1  # how often the main thread looks at the worker and the grace's end

T = TypeVar("T")

_stop = threading.Event()
_received: list[int] = []  # the signals this process was sent, in order
_forced_exit: list[Callable[[], object]] = []  # what a forced exit stops first (child processes)
_writing: list[bool] = []  # set once the run may write into its pack folder (`note_writing`)


class StopRequested(Exception):
    """The run was asked to stop: raised where work ends early, so the Dagster step fails and its run ends."""


def stop_file() -> Path | None:
    """The stop file this process and its children share, where one is named."""
    value = os.environ.get(STOP_FILE_ENV)
    return Path(value) if value else None


def request_stop(signum: int | None = None) -> None:
    """Ask every part of the run, in this process and in its children, to stop."""
    if signum is not None:
        _received.append(signum)
    _stop.set()
    path = stop_file()
    if path is not None and not path.exists():
        note = {"signal": signal_name(signum), "at": datetime.now(UTC).isoformat()}
        # one temporary file per process: Ctrl-C signals the CLI and its run workers at once
        temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        temporary.write_text(json.dumps(note), encoding="utf-8")
        temporary.replace(path)  # whole or absent: a child never reads half a note


def stop_requested() -> bool:
    """Whether a stop was asked of this process or, through the stop file, of the run it belongs to."""
    if _stop.is_set():
        return True
    path = stop_file()
    return path is not None and path.exists()


def raise_if_stopped(what: str) -> None:
    """Raise `StopRequested` before `what` starts, once a stop was asked (a sweep's next level, an arm, ...)."""
    if stop_requested():
        raise StopRequested(f"run interrupted ({signal_name(stop_signal())}): {what} not started")


@contextmanager
def signals_stop_the_replay() -> Iterator[None]:
    """Within: SIGINT and SIGTERM ask for the stop (`request_stop`) instead of raising where the main
    thread happens to be. Outside the CLI's own process a replay runs on a process's main thread
    under Dagster's handler (a side-by-side partition run or a multiprocess step reached by a
    terminal's Ctrl-C, which signals the whole process group; a run launched from the UI and
    terminated there), which raises its interrupt error inside whichever event-loop task runs
    next: one request's task would swallow it and the replay go on. As a stop request the replay
    ends the way `stopping.py` says, flushed; its `ReplayStopped` then fails the step and the
    steps after it refuse to start. Off the main thread (the CLI's in-process run) nothing changes."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, _frame: object) -> None:
        request_stop(signum)

    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    try:
        yield
    finally:
        for sig, handler_before in previous.items():
            signal.signal(sig, handler_before)


def stop_signal() -> int | None:
    """The signal that asked for the stop: this process's first, else the stop file's."""
    if _received:
        return _received[0]
    path = stop_file()
    if path is None or not path.exists():
        return None
    name = json.loads(path.read_text(encoding="utf-8")).get("signal")
    return int(signal.Signals[name]) if name in signal.Signals.__members__ else None


def signal_name(signum: int | None) -> str | None:
    return signal.Signals(signum).name if signum is not None else None


def _append_notes(kind: str, entries: list[dict]) -> None:
    """Append `entries` as JSON lines to the stop file's `.{kind}` notes with one write, so the
    run's processes (shards, partition runs) may note theirs at once; nothing without a stop file."""
    stop = stop_file()
    if stop is None:
        return
    with stop.with_name(f"{stop.name}.{kind}").open("a", encoding="utf-8") as handle:
        handle.write("".join(json.dumps(entry) + "\n" for entry in entries))


def _read_notes(kind: str) -> list[dict]:
    """Every process's `.{kind}` notes (`_append_notes`), in the order they were written."""
    stop = stop_file()
    notes = stop.with_name(f"{stop.name}.{kind}") if stop is not None else None
    if notes is None or not notes.exists():
        return []
    return [json.loads(line) for line in notes.read_text(encoding="utf-8").splitlines() if line.strip()]


def note_flushed(path: Path, rows: int, replay: str) -> None:
    """Record that a stopped replay flushed `rows` records to `path` (read back by `flushed()`)."""
    _append_notes("flushed", [{"replay": replay, "path": str(path), "rows": rows}])


def note_stopped(steps: list[tuple[str, str]]) -> None:
    """Record the (step, stage) pairs a stop failed, in order (read back by `stopped()`)."""
    _append_notes("stopped", [{"step": step, "stage": stage} for step, stage in steps])


def stopped() -> list[dict]:
    """The steps a stop failed (`note_stopped`): {step, stage}, the first to fail first."""
    return _read_notes("stopped")


def flushed() -> list[dict]:
    """What the stopped replays flushed, every process's (`note_flushed`)."""
    return _read_notes("flushed")


def grace_s() -> float:
    """How long a stopping run may take before its exit is forced: `$LOADPROOF_STOP_GRACE_S`, default 10 s."""
    value = os.environ.get(GRACE_ENV)
    return float(value) if value else DEFAULT_GRACE_S


def at_forced_exit(stop: Callable[[], object]) -> None:
    """Call `stop` (e.g. a child process's terminate) before a forced exit, which runs no cleanup."""
    _forced_exit.append(stop)


def note_writing() -> None:
    """The run is about to write into its pack folder (the Dagster runs start): from now on an
    interruption marks the folder (`write_interrupted`); before, an earlier run's pack is left whole."""
    _writing.append(True)


def reset() -> None:
    """Forget any stop request and signal (a new run in the same process, and the tests)."""
    _stop.clear()
    _received.clear()
    _forced_exit.clear()
    _writing.clear()


def exit_status(signum: int) -> int:
    return 128 + signum


def run_interruptible(body: Callable[[], T], on_interrupted: Callable[[int, bool], object]) -> T:
    """Run `body` in a worker thread while the main thread waits, its handlers for SIGINT and
    SIGTERM turning a signal into the stop request. Once `body` ends after a signal,
    `on_interrupted(signal, False)` runs and the process exits 128 + the signal; a second signal
    or the grace's end calls `on_interrupted(signal, True)`, stops the child processes
    (`at_forced_exit`) and exits at once. Without a signal, `body`'s result or exception. Called
    off the main thread (no handler can be installed there), `body` simply runs."""
    if threading.current_thread() is not threading.main_thread():
        return body()
    folder = tempfile.mkdtemp(prefix="loadproof-stop-")
    previous_file = os.environ.get(STOP_FILE_ENV)
    os.environ[STOP_FILE_ENV] = str(Path(folder) / "stop")  # inherited by every child started from now on
    reset()
    outcome: dict[str, object] = {}
    done = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = body()
        except BaseException as exc:  # noqa: BLE001 (typer.Exit, SystemExit: re-raised on the main thread)
            outcome["error"] = exc
        finally:
            done.set()

    def force(signum: int) -> None:
        on_interrupted(signum, True)
        for stop in _forced_exit:
            try:
                stop()
            except Exception:  # noqa: BLE001, S110 (a child already gone: nothing left to stop)
                pass
        shutil.rmtree(folder, ignore_errors=True)  # os._exit runs no `finally`
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(exit_status(signum))

    def handler(signum: int, _frame: object) -> None:
        if _received:
            force(_received[0])  # the second signal: no more waiting
        request_stop(signum)

    previous = {sig: signal.signal(sig, handler) for sig in SIGNALS}
    try:
        threading.Thread(target=work, name="loadproof-run", daemon=True).start()
        deadline: float | None = None
        while not done.wait(WAIT_STEP_S):
            if _received and deadline is None:
                deadline = time.monotonic() + grace_s()
            if deadline is not None and time.monotonic() >= deadline:
                force(_received[0])
        if _received:
            on_interrupted(_received[0], False)
            raise SystemExit(exit_status(_received[0]))
        if "error" in outcome:
            raise outcome["error"]  # type: ignore[misc]
        return outcome.get("value")  # type: ignore[return-value]
    finally:
        for sig, handler_before in previous.items():
            signal.signal(sig, handler_before)
        if previous_file is None:
            os.environ.pop(STOP_FILE_ENV, None)
        else:
            os.environ[STOP_FILE_ENV] = previous_file
        shutil.rmtree(folder, ignore_errors=True)


def write_interrupted(out: Path, signum: int, forced: bool) -> Path | None:
    """`INTERRUPTED.json` in the run's pack folder, in place of a pack: the signal, the stage it
    came in, when, and what the stopped replays flushed. A pack document already there (an
    earlier run's) is removed, so the folder never looks complete. None when the run was stopped
    before it wrote anything there (`note_writing`): the folder, if any, is left as it was."""
    if not _writing or not out.is_dir():
        return None
    for name in PACK_DOCUMENTS:
        (out / name).unlink(missing_ok=True)
    replays, steps = flushed(), stopped()
    if replays:
        stage = "replay (" + ", ".join(sorted({note["replay"] for note in replays})) + ")"
    elif steps:  # the first step the stop failed, and its stage (the asset group: workload, analysis, pack, ...)
        stage = f"{steps[0]['stage'] or 'the Dagster run'} (step {steps[0]['step']} not run)"
    elif (out / ".dagster").is_dir():
        stage = "the Dagster run, outside a replay"
    else:
        stage = "before the Dagster run"
    note = {
        "interrupted": True,
        "signal": signal_name(signum),
        "exit_status": exit_status(signum),
        "stage": stage,
        "at": datetime.now(UTC).isoformat(),
        "forced": forced,  # a second signal or the grace's end: the run did not finish stopping
        "flushed": replays,
        "steps_stopped": [entry["step"] for entry in steps],  # failed by the stop, the first first
        "pack": "none: an interrupted run writes no evidence pack; run it again for one",
    }
    path = out / INTERRUPTED_NAME
    path.write_text(json.dumps(note, indent=2) + "\n", encoding="utf-8")
    return path


def interrupted_problem(folder: Path) -> str | None:
    """What `loadproof verify` says of a run's folder that holds `INTERRUPTED.json`; None without one."""
    path = folder / INTERRUPTED_NAME
    if not path.is_file():
        return None
    try:
        note = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        note = {}
    flushed_rows = sum(entry.get("rows", 0) for entry in note.get("flushed", []))
    return (
        f"{INTERRUPTED_NAME}: the run was interrupted ({note.get('signal', 'a signal')} during "
        f"{note.get('stage', 'the run')}, at {note.get('at', '?')}): no evidence pack; {flushed_rows} raw-timing "
        "records flushed; run it again for a pack"
    )
