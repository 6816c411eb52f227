"""A signal during a run (`pipeline/interrupts.py`): `loadproof run` sent SIGTERM and `loadproof demo`
(the bundled example, its two reference endpoints and side-by-side partition runs) sent a terminal's
Ctrl-C (SIGINT to its process group) once their production replays have begun, `run` sent either
signal in a sweep level's or the vendor arm's replay, and once a step of the ingest, the analysis or
the pack has started — polled from the replay's journal or the run's Dagster event log, no fixed
wait — exit 128 + the signal before the grace runs out (`forced: false`), with INTERRUPTED.json
naming where it stopped and no pack, each stopped replay's records flushed to a readable Parquet
file, and no child process left behind. Slow: a run reaches its replay after ingest, sampling,
planning and calibration."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import closing
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import REPO_ROOT, interrupts
from pipeline.reference import ReferenceServer
from tests.support.replay_driver import count_lines
from tests.support.specs import small_spec

# slow; and one at a time on one worker: each starts a whole run (a CLI, reference endpoints, run
# workers), and seven at once beside the rest of the suite starved its timing-sensitive tests
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("signal_runs")]

LOADPROOF = Path(sys.executable).with_name("loadproof")
GRACE_S = 60  # generous: the run must stop by itself well within it (`forced` false says it did)
MAX_WAIT_S = 600  # a guard on reaching the replay (the demo's first steps take a minute on a busy machine)
POLL_S = 0.05  # polling the journals, not waiting for a server


def replay_journals(out: Path, stage: str = "") -> list[Path]:
    """The journals of the replays a run has begun (the client calibration's aside); with `stage`
    (".sweep", ".a_vendor_conditions", ...) those of that stage's runs only."""
    return [
        path
        for path in out.glob("candidates/*/*/journal/*.jsonl")
        if not path.name.endswith("-calibration.jsonl") and stage in path.name
    ]


def cli_env() -> dict[str, str]:
    """The CLI's environment: this tree's code first (the `loadproof` script imports `pipeline`)."""
    return {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO_ROOT), os.environ.get("PYTHONPATH", "")])}


def started_steps(out: Path) -> set[str]:
    """The steps the run's Dagster runs have started: STEP_START in each run's event log (the
    instance's SQLite storage under `out/.dagster`, read-only; a log being written is read next time)."""
    started: set[str] = set()
    for path in (out / ".dagster" / "history" / "runs").glob("*-*.db"):
        try:
            with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=1)) as events:
                query = "SELECT step_key FROM event_logs WHERE dagster_event_type = 'STEP_START'"
                started |= {row[0] for row in events.execute(query)}
        except sqlite3.Error:
            continue
    return started


def interrupt_mid_replay(
    command: list[str], out: Path, sig: signal.Signals, logs: Path, stage: str = ""
) -> tuple[int, int]:
    """Start `command` in a session of its own, send `sig` once a replay's journal (of `stage`, see
    `replay_journals`) holds records; its status and its session id (every process it started
    shares it)."""
    return interrupt_when(
        command, lambda: any(count_lines(path) >= 3 for path in replay_journals(out, stage)), sig, logs
    )


def interrupt_when(
    command: list[str], ready: Callable[[], bool], sig: signal.Signals, logs: Path, group: bool = False
) -> tuple[int, int]:
    """Start `command` in a session of its own and send `sig` once `ready()` to it alone, as `kill`
    does, or (`group`) to its whole process group, as a terminal's Ctrl-C does; its status and its
    session id (every process it started shares it)."""
    env = {**cli_env(), interrupts.GRACE_ENV: str(GRACE_S), "LOADPROOF_DEMO_API_KEY": "sk-loadproof-signal-run"}
    env.pop("DAGSTER_HOME", None)
    env.pop(interrupts.STOP_FILE_ENV, None)
    with logs.with_suffix(".stdout").open("wb") as stdout, logs.with_suffix(".stderr").open("wb") as stderr:
        process = subprocess.Popen(command, env=env, start_new_session=True, stdout=stdout, stderr=stderr)
        try:
            deadline = time.monotonic() + MAX_WAIT_S
            while not ready():
                assert process.poll() is None, logs.with_suffix(".stderr").read_text()[-3000:]
                assert time.monotonic() < deadline, "the stage never began"
                time.sleep(POLL_S)
            if group:
                os.killpg(process.pid, sig)  # the CLI, its reference endpoints, its partitions' run workers
            else:
                process.send_signal(sig)
            return process.wait(timeout=GRACE_S + 60), process.pid
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def assert_interrupted(out: Path, sig: signal.Signals, in_replay: bool = True) -> dict:
    note = json.loads((out / interrupts.INTERRUPTED_NAME).read_text())
    assert (note["signal"], note["exit_status"], note["forced"]) == (sig.name, 128 + sig, False)
    assert not (out / "evidence_pack.json").exists() and not (out / "evidence_pack.html").exists()
    verified = subprocess.run(
        [str(LOADPROOF), "verify", str(out)], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert verified.returncode == 1 and "INTERRUPTED.json: the run was interrupted" in verified.stderr
    assert "NOT verified (1 problem(s)): no pack to verify" in verified.stdout
    if not in_replay:
        return note
    assert note["stage"].startswith("replay (")
    assert note["flushed"]
    cut_short = set()
    for flushed in note["flushed"]:  # every stopped replay's records, readable, as many as its journal's
        table = pq.read_table(flushed["path"])
        assert table.num_rows == flushed["rows"] == count_lines(Path(flushed["path"]).with_suffix(".jsonl"))
        cut_short |= set(table.column("error_type").to_pylist()) & {"cancelled", "not_sent"}
    assert cut_short  # the replay was cut short: requests cancelled in flight, or never sent
    return note


def left_in_session(session: int) -> list[str]:
    """The command lines of the processes still in `session`: what the run started and left behind
    (other tests' servers, running beside it, are in sessions of their own)."""
    listing = subprocess.run(["ps", "-eo", "sid=,args="], capture_output=True, text=True, check=True).stdout
    rows = (line.strip().split(maxsplit=1) for line in listing.splitlines() if line.strip())
    return [row[1] if len(row) > 1 else "" for row in rows if row[0] == str(session)]


def test_sigterm_during_run_exits_143_with_interrupted_json(tmp_path, write_spec, zero_server):
    out = tmp_path / "pack"
    spec = small_spec(write_spec, zero_server.base_url)
    status, session = interrupt_mid_replay(
        [str(LOADPROOF), "run", str(spec), "--out", str(out)], out, signal.SIGTERM, tmp_path / "run"
    )
    assert status == 143, (tmp_path / "run.stderr").read_text()[-3000:]
    note = assert_interrupted(out, signal.SIGTERM)
    said = " ".join((tmp_path / "run.stdout").read_text().split())  # the console wraps its lines
    flushed = sum(entry["rows"] for entry in note["flushed"])
    assert "stopped by SIGTERM after" in said and f"no pack; {flushed} raw-timing records flushed" in said, said
    assert left_in_session(session) == []


@pytest.mark.parametrize(
    ("stage", "sig"), [(".sweep", signal.SIGINT), (".a_vendor_conditions", signal.SIGTERM)], ids=["sweep", "arm"]
)
def test_a_signal_during_the_sweep_or_an_arm_stops_that_replay(tmp_path, write_spec, stage, sig):
    """The later stages' replays stop the same way: a sweep level's, the vendor-conditions arm's
    (against the demo's serving profile, whose ~8 ms a token keeps an arm of 256 requests of 128
    tokens in flight for seconds: the zero-delay endpoint could finish it before the signal)."""
    out = tmp_path / "pack"
    with ReferenceServer("demo") as server:
        spec = small_spec(write_spec, server.base_url)
        status, session = interrupt_mid_replay(
            [str(LOADPROOF), "run", str(spec), "--out", str(out)], out, sig, tmp_path / "run", stage
        )
    assert status == 128 + sig, (tmp_path / "run.stderr").read_text()[-3000:]
    note = assert_interrupted(out, sig)
    assert any(stage in entry["replay"] for entry in note["flushed"]), note["flushed"]  # the journal's name
    assert left_in_session(session) == []


def test_ctrl_c_during_demo_exits_130_flushes_both_partitions_and_stops_its_endpoints(tmp_path):
    """Ctrl-C in a terminal signals the whole foreground process group: the CLI and the demo's
    reference endpoints; both partitions' run workers (`dagster api execute_run`, a process group
    of their own) stop through the stop file, each replay flushed."""
    out = tmp_path / "demo"
    candidates = ("fastserve-8b", "budget-8b")

    def both_replaying() -> bool:  # each partition's production replay has begun (one may start seconds later)
        journals = replay_journals(out)
        return all(any(p.stem.endswith(f"-{c}") and count_lines(p) >= 3 for p in journals) for c in candidates)

    status, session = interrupt_when(
        [str(LOADPROOF), "demo", "--out", str(out)], both_replaying, signal.SIGINT, tmp_path / "demo", group=True
    )
    assert status == 130, (tmp_path / "demo.stderr").read_text()[-3000:]
    note = assert_interrupted(out, signal.SIGINT)
    for candidate in candidates:  # each partition run's production replay
        assert any(entry["replay"].endswith(f"-{candidate}") for entry in note["flushed"]), note["flushed"]
    assert left_in_session(session) == []  # the demo's two reference endpoints stopped with it


@pytest.mark.parametrize(
    ("step", "stage", "sig"),
    [
        ("production_logs", "workload", signal.SIGTERM),
        ("analysis_tables", "analysis", signal.SIGINT),
        ("evidence_pack", "pack", signal.SIGTERM),
    ],
    ids=["ingest", "analysis", "pack"],
)
def test_a_signal_outside_a_replay_stops_the_run_at_its_next_step(tmp_path, write_spec, zero_server, step, stage, sig):
    """Sent once `step` has started (its stage's steps last a second or two): the stop lands where a
    step first reads the spec — `step` itself if it had not yet, else a step not started when the
    signal went — which does not run, and INTERRUPTED.json names it and its stage; no pack, nothing
    left running."""
    out = tmp_path / "pack"
    spec = small_spec(write_spec, zero_server.base_url)
    started_then: set[str] = set()

    def step_started() -> bool:
        started_then.update(started_steps(out))
        return step in started_then

    status, session = interrupt_when(
        [str(LOADPROOF), "run", str(spec), "--out", str(out)], step_started, sig, tmp_path / "run"
    )
    assert status == 128 + sig, (tmp_path / "run.stderr").read_text()[-3000:]
    note = assert_interrupted(out, sig, in_replay=False)
    first = note["steps_stopped"][0]  # the first step the stop failed
    assert first == step or first not in started_then, (note, sorted(started_then))
    if not note["flushed"]:  # (a replay it reached instead, e.g. the calibration's, is named as one)
        assert note["stage"].endswith(f"(step {first} not run)"), note
    if first == step:
        assert note["stage"].startswith(f"{stage} ("), note
    assert left_in_session(session) == []
