"""What a signal does to a command, as `pipeline/exit_statuses.py` (`SIGNALS`) and the docs'
exit-status page say: a command outside a Dagster run stopped by Ctrl-C exits 130 and is killed by
SIGTERM (a shell reports 143); `serve-reference` stops cleanly on either (its requests in flight get 3 s), then
exits the same way. The command is caught
while it waits on a candidate that accepted its connection and never answers: the listening socket's
`accept` says when it is there, so no fixed wait. (A signal during a run stops it, writes
INTERRUPTED.json and exits 130 / 143: `test_signal_run.py`, slow, since a run costs a minute.)"""

from __future__ import annotations

import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from pipeline.reference.managed_server import free_port
from tests.support.specs import DEMO_LOG

LOADPROOF = str(Path(sys.executable).with_name("loadproof"))
WAIT_S = 60


def default_signals() -> None:
    """In the child before it runs: SIGINT and SIGTERM as a terminal gives them to a command. A
    disposition of SIG_IGN survives exec, and a process started in the background of a
    non-interactive shell (a CI's `.ci/run &`) ignores SIGINT: its commands would never see one
    (a fresh-clone CI once saw all four cases exit 0 or 2 at once)."""
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)


def ignored_signals(pid: int) -> str:
    """The child's SigIgn mask (/proc), for a failure's message."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "unknown"
    return next((line for line in status.splitlines() if line.startswith("SigIgn")), "unknown")


def init_caught_waiting(sig: signal.Signals, tmp_path: Path) -> int:
    """`loadproof init` against a port that accepts and never answers, sent `sig` once it is connected."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.settimeout(WAIT_S)
        url = f"http://127.0.0.1:{listener.getsockname()[1]}"
        process = subprocess.Popen(
            [LOADPROOF, "init", str(DEMO_LOG), "--target", url, "--window-s", "10", "--out", str(tmp_path / "s.yaml")],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            preexec_fn=default_signals,
        )
        try:
            connection, _ = listener.accept()  # init is now waiting for GET /v1/models to answer
            with connection:
                ignored = ignored_signals(process.pid)
                process.send_signal(sig)
                status = process.wait(timeout=WAIT_S)
                assert status in (130, -signal.SIGTERM), f"init exited {status}; its {ignored}"
                return status
        finally:
            if process.poll() is None:
                process.kill()


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)])
def test_a_command_outside_a_run_exits_128_plus_the_signal(sig, status, tmp_path):
    assert init_caught_waiting(sig, tmp_path) == status  # -15: killed by SIGTERM, 143 in a shell
    assert not (tmp_path / "s.yaml").exists()


@pytest.mark.parametrize(("sig", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, -signal.SIGTERM)])
def test_serve_reference_stops_cleanly_then_exits_128_plus_the_signal(sig, status):
    port = free_port()
    process = subprocess.Popen(
        [LOADPROOF, "serve-reference", "--port", str(port), "--profile", "zero"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=default_signals,
    )
    try:
        deadline = time.monotonic() + WAIT_S
        while True:  # polled until it answers: no fixed wait
            assert process.poll() is None, "serve-reference exited before it answered"
            try:
                httpx.get(f"http://127.0.0.1:{port}/v1/models", timeout=2).raise_for_status()
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "serve-reference did not answer"
                time.sleep(0.1)  # polling interval, not a wait for readiness
        ignored = ignored_signals(process.pid)
        process.send_signal(sig)
        assert process.wait(timeout=WAIT_S) == status, f"its {ignored}"
    finally:
        if process.poll() is None:
            process.kill()
