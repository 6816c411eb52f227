"""The process-wide stop request (`pipeline/interrupts.py`): the event and the stop file children
share, the handlers `run_interruptible` installs (a signal becomes the request, the exit is 128 +
the signal), the forced exit at the grace's end, and INTERRUPTED.json, which `verify` names."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from pipeline import REPO_ROOT, interrupts
from pipeline.cli import app
from pipeline.pack.audit.verify import verify_pack

WAIT_S = 60  # a generous guard, not a timing threshold


@pytest.fixture(autouse=True)
def clean(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(interrupts.STOP_FILE_ENV, str(tmp_path / "stop"))
    interrupts.reset()
    yield
    interrupts.reset()


def test_a_stop_request_is_seen_here_and_through_the_stop_file_by_a_child(tmp_path):
    assert not interrupts.stop_requested()
    interrupts.raise_if_stopped("the replay")  # nothing asked yet: no raise
    interrupts.request_stop(signal.SIGTERM)
    assert interrupts.stop_requested() and interrupts.stop_signal() == signal.SIGTERM
    assert json.loads((tmp_path / "stop").read_text())["signal"] == "SIGTERM"
    with pytest.raises(interrupts.StopRequested, match=r"SIGTERM.*the sweep's level 2 not started"):
        interrupts.raise_if_stopped("the sweep's level 2")
    child = "from pipeline import interrupts; print(interrupts.stop_requested(), interrupts.stop_signal())"
    seen = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, cwd=REPO_ROOT, check=True)
    assert seen.stdout.split() == ["True", str(int(signal.SIGTERM))]  # another process: the file alone


def test_the_stop_file_alone_is_a_stop_request(tmp_path):
    (tmp_path / "stop").write_text(json.dumps({"signal": "SIGINT"}))
    assert interrupts.stop_requested() and interrupts.stop_signal() == signal.SIGINT


def test_flushed_replays_are_noted_by_every_process(tmp_path):
    interrupts.note_flushed(tmp_path / "a.parquet", 3, "a")
    interrupts.note_flushed(tmp_path / "b.parquet", 5, "b")
    assert [(note["replay"], note["rows"]) for note in interrupts.flushed()] == [("a", 3), ("b", 5)]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_becomes_the_stop_request_and_the_exit_is_128_plus_it(sig, monkeypatch):
    monkeypatch.delenv(interrupts.STOP_FILE_ENV)  # run_interruptible names its own
    seen: dict = {}

    def body() -> str:  # in the worker thread: the signal is handled on the main thread
        seen["thread"] = threading.current_thread() is not threading.main_thread()
        seen["file"] = interrupts.stop_file()
        os.kill(os.getpid(), sig)
        assert interrupts._stop.wait(WAIT_S)
        return "finished"

    previous = signal.getsignal(sig)
    with pytest.raises(SystemExit) as stopped:
        interrupts.run_interruptible(body, lambda signum, forced: seen.update(signum=signum, forced=forced))
    assert stopped.value.code == 128 + sig
    assert seen["thread"] and seen["signum"] == sig and seen["forced"] is False
    assert seen["file"] is not None and not seen["file"].parent.exists()  # its folder removed afterwards
    assert signal.getsignal(sig) == previous and interrupts.STOP_FILE_ENV not in os.environ


def test_without_a_signal_the_body_s_result_and_exception_come_back(monkeypatch):
    assert interrupts.run_interruptible(lambda: 42, lambda *_: None) == 42

    def fails() -> None:
        raise SystemExit(2)

    with pytest.raises(SystemExit) as failed:
        interrupts.run_interruptible(fails, lambda *_: None)
    assert failed.value.code == 2


FORCED = """
import os, signal, sys, threading
from pathlib import Path
from pipeline import interrupts
out, second = Path(sys.argv[1]), sys.argv[2] == "second"
def body():
    os.kill(os.getpid(), signal.SIGTERM)
    if second:
        interrupts._stop.wait()
        os.kill(os.getpid(), signal.SIGINT)
    threading.Event().wait()  # never stops by itself
interrupts.run_interruptible(body, lambda signum, forced: out.write_text(f"{signum} {forced}"))
"""


@pytest.mark.parametrize(("how", "grace_s"), [("grace", "0.2"), ("second", "600")])
def test_the_grace_s_end_or_a_second_signal_forces_the_exit(how, grace_s, tmp_path):
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {**os.environ, interrupts.GRACE_ENV: grace_s, "TMPDIR": str(temp)}
    env.pop(interrupts.STOP_FILE_ENV)
    process = subprocess.run(
        [sys.executable, "-c", FORCED, str(tmp_path / "note"), how], cwd=REPO_ROOT, env=env, timeout=WAIT_S
    )
    assert process.returncode == 143  # the first signal's status
    assert (tmp_path / "note").read_text() == f"{int(signal.SIGTERM)} True"
    assert list(temp.iterdir()) == []  # the stop file's folder goes with a forced exit too


def test_interrupted_json_replaces_the_pack_and_verify_names_it(tmp_path):
    out = tmp_path / "pack"
    out.mkdir()
    (out / "evidence_pack.json").write_text("{}")  # an earlier run's
    assert interrupts.write_interrupted(out, signal.SIGINT, False) is None  # stopped before writing: left whole
    assert (out / "evidence_pack.json").exists() and not (out / interrupts.INTERRUPTED_NAME).exists()
    interrupts.note_writing()  # the Dagster runs began
    interrupts.note_flushed(out / "journal" / "x.parquet", 7, "x")
    written = interrupts.write_interrupted(out, signal.SIGINT, False)
    assert written == out / interrupts.INTERRUPTED_NAME and not (out / "evidence_pack.json").exists()
    note = json.loads(written.read_text())
    assert (note["signal"], note["exit_status"], note["stage"], note["forced"]) == ("SIGINT", 130, "replay (x)", False)
    result = verify_pack(out)
    assert not result.ok and result.problems[0].startswith("INTERRUPTED.json: the run was interrupted (SIGINT")
    assert "7 raw-timing records flushed" in result.problems[0]
    verified = CliRunner().invoke(app, ["verify", str(out)])
    assert verified.exit_code == 1
    assert "NOT verified (1 problem(s)): no pack to verify" in verified.output
    assert "files hashed" not in verified.output  # nothing was: no "1 pack, 0 files hashed" line
