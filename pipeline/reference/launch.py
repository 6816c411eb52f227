"""Run the reference endpoint: in this process (`serve`) or as a managed subprocess
(`ReferenceServer`, for the demo and tests). It only ever listens on loopback."""

from __future__ import annotations

import ipaddress
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO

import httpx

from pipeline.reference.oracle import load_oracle_config
from pipeline.reference.server import build_app
from pipeline.reference.serving_profile import load_profile

LOOPBACK_HOST = "127.0.0.1"


def terminate(process: subprocess.Popen | None, grace_s: float) -> None:
    """SIGTERM a server subprocess, SIGKILL it if it is still there after `grace_s`."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def check_loopback(host: str) -> str:
    """Return `host` if it is a loopback address (127.0.0.0/8, ::1, localhost); else ValueError."""
    if host.strip().lower() == "localhost":
        return host
    try:
        address = ipaddress.ip_address(host.strip().strip("[]"))
    except ValueError:
        address = None
    if address is None or not address.is_loopback:
        raise ValueError(
            f"refusing to listen on {host!r}: the reference endpoint binds only to loopback "
            "(127.0.0.0/8, ::1 or localhost)"
        )
    return host


def serve(
    host: str, port: int, profile: str, timeline_path: str | Path | None = None, oracle: str | None = None
) -> None:
    """Serve the reference endpoint with `profile` (a name or a YAML path) until interrupted;
    with `timeline_path`, append the server's own per-request timeline there (JSONL);
    `oracle` (a YAML file) adds or replaces the profile's accuracy oracle."""
    import uvicorn

    check_loopback(host)
    serving = load_profile(profile)
    if oracle:
        serving = serving.model_copy(update={"oracle": load_oracle_config(oracle)})
    app = build_app(serving, timeline_path=timeline_path)
    uvicorn.run(app, host=host, port=port, log_level="warning", access_log=False, timeout_graceful_shutdown=3)


def free_port(host: str = LOOPBACK_HOST) -> int:
    """A port that was free on `host` a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


class ReferenceServer:
    """The reference endpoint in a subprocess on a free loopback port; a context manager.

    >>> with ReferenceServer("zero") as server:
    ...     httpx.get(f"{server.root_url}/health")
    """

    def __init__(
        self,
        profile: str = "zero",
        port: int | None = None,
        startup_timeout_s: float = 20.0,
        timeline_path: str | Path | None = None,
        oracle: str | Path | None = None,
    ) -> None:
        self.profile = profile
        self.timeline_path = Path(timeline_path) if timeline_path else None
        self.oracle = oracle
        self.port = port or free_port()
        self.startup_timeout_s = startup_timeout_s
        self.root_url = f"http://{LOOPBACK_HOST}:{self.port}"
        self.base_url = f"{self.root_url}/v1"
        self._process: subprocess.Popen[bytes] | None = None
        self._stderr: IO[bytes] | None = None

    def start(self) -> ReferenceServer:
        """Start the subprocess and return once `/health` answers 200."""
        if self._process is not None:
            raise RuntimeError("reference server already started")
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the server)
        command = [
            sys.executable,
            "-m",
            "pipeline.reference",
            "--host",
            LOOPBACK_HOST,
            "--port",
            str(self.port),
            "--profile",
            str(self.profile),
        ]
        if self.timeline_path is not None:
            command += ["--timeline", str(self.timeline_path)]
        if self.oracle:
            command += ["--oracle", str(self.oracle)]
        self._process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=self._stderr, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        assert self._process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        with httpx.Client(timeout=1.0) as client:
            while True:
                if self._process.poll() is not None:
                    raise RuntimeError(
                        f"reference server (profile {self.profile!r}) exited with code "
                        f"{self._process.returncode} before becoming ready; stderr:\n{self._read_stderr()}"
                    )
                try:
                    if client.get(f"{self.root_url}/health").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"reference server on port {self.port} not ready after "
                        f"{self.startup_timeout_s:.0f} s; stderr:\n{self._read_stderr()}"
                    )
                time.sleep(0.05)

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.seek(0)
        return self._stderr.read().decode("utf-8", "replace").strip()

    def stop(self) -> None:
        """Terminate the subprocess (SIGTERM, then kill after 5 s). Safe to call twice."""
        process, self._process = self._process, None
        terminate(process, grace_s=5)
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None

    def __enter__(self) -> ReferenceServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
