"""`dagster dev` on loopback, on a free port, for the tests that read the UI: started on an
instance folder with the project's dagster.yaml copied in (as `make dev` does), polled on its
`/server_info` until it answers (no fixed wait), and stopped with its whole process group."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx

from pipeline import REPO_ROOT
from pipeline.reference.managed_server import free_port

STARTUP_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30


class DagsterDevDidNotStart(RuntimeError):
    """`dagster dev` exited or did not answer in time: the message says which, with its stderr's end."""


@contextmanager
def dagster_dev(home: Path) -> Iterator[str]:
    """The UI's base URL, `dagster dev` serving the workspace on the instance in `home`."""
    shutil.copy(REPO_ROOT / "dagster.yaml", home / "dagster.yaml")
    port = free_port()
    dagster = Path(sys.executable).with_name("dagster")
    log = home / "dagster-dev.log"
    with log.open("wb") as stderr:
        process = subprocess.Popen(
            [str(dagster), "dev", "-h", "127.0.0.1", "-p", str(port), "-w", str(REPO_ROOT / "workspace.yaml")],
            cwd=REPO_ROOT,
            env={**os.environ, "DAGSTER_HOME": str(home)},
            stdout=subprocess.DEVNULL,
            stderr=stderr,
            start_new_session=True,  # its own process group: the webserver, daemon and code server stop together
        )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_it_answers(process, url, log)
        yield url
    finally:
        # `dagster dev` shuts its children down on SIGINT; SIGKILL the group only if it hangs.
        os.killpg(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


LOCATIONS = "{ workspaceOrError { ... on Workspace { locationEntries { name loadStatus } } } }"


def _code_loaded(url: str) -> bool:
    """The workspace's code location has loaded (the webserver answers before it has)."""
    data = httpx.post(f"{url}/graphql", json={"query": LOCATIONS}, timeout=10).json()["data"]["workspaceOrError"]
    entries = data.get("locationEntries") or []
    return bool(entries) and all(entry["loadStatus"] == "LOADED" for entry in entries)


def _wait_until_it_answers(process: subprocess.Popen, url: str, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT_S
    while True:
        if process.poll() is not None:
            raise DagsterDevDidNotStart(f"dagster dev exited ({process.returncode}): {log.read_text()[-2000:]}")
        try:
            if httpx.get(f"{url}/server_info", timeout=2).status_code == 200 and _code_loaded(url):
                return
        except httpx.TransportError:
            pass
        if time.monotonic() > deadline:
            raise DagsterDevDidNotStart(
                f"dagster dev did not answer in {STARTUP_TIMEOUT_S} s: {log.read_text()[-2000:]}"
            )
        time.sleep(0.5)  # polling interval, not a wait for readiness
