"""A signal during a run (`pipeline/interrupts.py`): `loadproof run` sent SIGTERM and `loadproof demo`
(the bundled example, its two reference endpoints and side-by-side partition runs) sent SIGINT once
their production replay has begun, and `run` sent either signal in a sweep level's or the vendor
arm's replay — polled from the replay's journal, no fixed wait — exit 143 and 130 before the grace
runs out (`forced: false`), with INTERRUPTED.json and no pack, each stopped replay's records flushed
to a readable Parquet file, and no child process left behind. Slow: a run reaches its replay after
ingest, sampling, planning and calibration."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import REPO_ROOT, interrupts
from pipeline.reference import ReferenceServer
from tests.support.replay_driver import count_lines
from tests.support.specs import small_spec

pytestmark = pytest.mark.slow

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


def interrupt_mid_replay(
    command: list[str], out: Path, sig: signal.Signals, logs: Path, stage: str = ""
) -> tuple[int, int]:
    """Start `command` in a session of its own, send `sig` once a replay's journal (of `stage`, see
    `replay_journals`) holds records; its status and its session id (every process it started
    shares it)."""
    env = {**cli_env(), interrupts.GRACE_ENV: str(GRACE_S), "LOADPROOF_DEMO_API_KEY": "sk-loadproof-signal-run"}
    env.pop("DAGSTER_HOME", None)
    env.pop(interrupts.STOP_FILE_ENV, None)
    with logs.with_suffix(".stdout").open("wb") as stdout, logs.with_suffix(".stderr").open("wb") as stderr:
        process = subprocess.Popen(command, env=env, start_new_session=True, stdout=stdout, stderr=stderr)
        try:
            deadline = time.monotonic() + MAX_WAIT_S
            while not any(count_lines(path) >= 3 for path in replay_journals(out, stage)):
                assert process.poll() is None, logs.with_suffix(".stderr").read_text()[-3000:]
                assert time.monotonic() < deadline, "the replay never began"
                time.sleep(POLL_S)
            process.send_signal(sig)  # the process alone, as `kill` would, not its group
            return process.wait(timeout=GRACE_S + 60), process.pid
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()


def assert_interrupted(out: Path, sig: signal.Signals) -> dict:
    note = json.loads((out / interrupts.INTERRUPTED_NAME).read_text())
    assert (note["signal"], note["exit_status"], note["forced"]) == (sig.name, 128 + sig, False)
    assert note["stage"].startswith("replay (")
    assert not (out / "evidence_pack.json").exists() and not (out / "evidence_pack.html").exists()
    assert note["flushed"]
    cut_short = set()
    for flushed in note["flushed"]:  # every stopped replay's records, readable, as many as its journal's
        table = pq.read_table(flushed["path"])
        assert table.num_rows == flushed["rows"] == count_lines(Path(flushed["path"]).with_suffix(".jsonl"))
        cut_short |= set(table.column("error_type").to_pylist()) & {"cancelled", "not_sent"}
    assert cut_short  # the replay was cut short: requests cancelled in flight, or never sent
    verified = subprocess.run(
        [str(LOADPROOF), "verify", str(out)], capture_output=True, text=True, env=cli_env(), timeout=120
    )
    assert verified.returncode == 1 and "INTERRUPTED.json: the run was interrupted" in verified.stderr
    assert "NOT verified (1 problem(s)): no pack to verify" in verified.stdout
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
    assert_interrupted(out, signal.SIGTERM)
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


def test_sigint_during_demo_exits_130_and_stops_its_reference_endpoints(tmp_path):
    out = tmp_path / "demo"
    status, session = interrupt_mid_replay(
        [str(LOADPROOF), "demo", "--out", str(out)], out, signal.SIGINT, tmp_path / "demo"
    )
    assert status == 130, (tmp_path / "demo.stderr").read_text()[-3000:]
    note = assert_interrupted(out, signal.SIGINT)
    assert any(entry["replay"].endswith(("-fastserve-8b", "-budget-8b")) for entry in note["flushed"])
    assert left_in_session(session) == []  # the demo's two reference endpoints stopped with it
