"""A server subprocess on a free loopback port, ready once a health URL answers 200 — the one
lifecycle that the reference endpoint (`ReferenceServer`) and the real model (`LlamaServer`) share:
start, poll until ready within a bounded wait, show the server's own output when it fails to come
up, stop with SIGTERM (then SIGKILL), and a context manager around all of it."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
from types import TracebackType
from typing import IO, ClassVar, Self

import httpx

LOOPBACK_HOST = "127.0.0.1"


def free_port(host: str = LOOPBACK_HOST) -> int:
    """A port that was free on `host` a moment ago (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


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


class ManagedServer:
    """A server subprocess on `port` (a free loopback one by default); a context manager.

    A subclass says what to run (`command`), how it is named in errors (`label`), where readiness
    shows (`health_path`, under `root_url`) and, as class attributes, how patiently to poll and stop
    it. The server's output goes to a temporary file so that a server which dies or hangs while
    starting is reported with its own last words (`output_tail`)."""

    health_path: ClassVar[str] = "/health"
    health_timeout_s: ClassVar[float] = 1.0
    """How long one readiness request may take."""
    poll_interval_s: ClassVar[float] = 0.05
    """The pause between readiness requests (spent waiting on the process, so an exit ends it)."""
    stop_grace_s: ClassVar[float] = 5.0
    """How long `stop` waits after SIGTERM before it kills."""
    capture_stdout: ClassVar[bool] = False
    """Keep stdout with stderr in the output file (True) or discard it (False)."""

    def __init__(self, port: int | None, startup_timeout_s: float) -> None:
        self.port = port or free_port()
        self.startup_timeout_s = startup_timeout_s
        self.root_url = f"http://{LOOPBACK_HOST}:{self.port}"
        self.base_url = f"{self.root_url}/v1"
        self._process: subprocess.Popen[bytes] | None = None
        self._output: IO[bytes] | None = None

    @property
    def label(self) -> str:
        """What the server is called in error messages."""
        return type(self).__name__

    def command(self) -> list[str]:
        """The command line that runs the server on `LOOPBACK_HOST`:`port`."""
        raise NotImplementedError

    def start(self) -> Self:
        """Start the subprocess and return once `health_path` answers 200."""
        if self._process is not None:
            raise RuntimeError(f"{self.label} already started")
        command = self.command()
        output = self._output = tempfile.TemporaryFile()  # noqa: SIM115 (lives as long as the server)
        stdout: IO[bytes] | int = output if self.capture_stdout else subprocess.DEVNULL
        stderr: IO[bytes] | int = subprocess.STDOUT if self.capture_stdout else output
        self._process = subprocess.Popen(
            command, stdout=stdout, stderr=stderr, env={**os.environ, "PYTHONUNBUFFERED": "1"}
        )
        try:
            self._wait_ready(self._process)
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self, process: subprocess.Popen[bytes]) -> None:
        deadline = time.monotonic() + self.startup_timeout_s
        # trust_env=False: a proxy from the environment must never see a loopback health check.
        with httpx.Client(timeout=self.health_timeout_s, trust_env=False) as client:
            while True:
                if process.poll() is not None:
                    raise RuntimeError(
                        f"{self.label} exited with code {process.returncode} before becoming ready; "
                        f"output:\n{self.output_tail()}"
                    )
                try:
                    if client.get(f"{self.root_url}{self.health_path}").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                if time.monotonic() >= deadline:
                    raise TimeoutError(
                        f"{self.label} on port {self.port} not ready after {self.startup_timeout_s:.0f} s; "
                        f"output:\n{self.output_tail()}"
                    )
                try:
                    process.wait(timeout=self.poll_interval_s)
                except subprocess.TimeoutExpired:
                    pass

    def output_tail(self, chars: int = 3000) -> str:
        """The last `chars` characters the server wrote (stderr, and stdout if captured)."""
        if self._output is None:
            return ""
        self._output.seek(0)
        return self._output.read().decode("utf-8", "replace").strip()[-chars:]

    def stop(self) -> None:
        """Terminate the subprocess (SIGTERM, then kill after `stop_grace_s`). Safe to call twice."""
        process, self._process = self._process, None
        terminate(process, grace_s=self.stop_grace_s)
        if self._output is not None:
            self._output.close()
            self._output = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()
