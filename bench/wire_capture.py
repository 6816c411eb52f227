"""A loopback packet capture around a replay, and the clock pairing that puts its kernel
timestamps on the replay's monotonic clock.

Debian's `tcpdump` captures one server port on `lo` with nanosecond timestamps
(`--time-stamp-precision=nano`; `lo` offers one time-stamp type, `-j host`: the kernel's software
stamp, CLOCK_REALTIME, taken as the packet passes the capture tap). The replay stamps with
`time.perf_counter_ns()` (CLOCK_MONOTONIC) and records no wall anchor, so `Capture` reads the pair
(realtime − monotonic) itself, before and after the replay: each reading is the tightest of many
(monotonic, realtime, monotonic) brackets, good to half that bracket's width. Both clocks are read
from the same kernel timekeeper and NTP slews them alike, so the offset is one constant unless the
wall clock is stepped between the readings (the drift printed: `after − before`).

Stopping: tcpdump's ring buffer hands packets to the file in blocks, and SIGINT does not drain
it, so `stop` first sends one sentinel request (a `GET /health` carrying a random marker) and
waits until the marker is in the file (`-U` writes each packet as it is read): every packet of
the replay passed the tap before it.
"""

from __future__ import annotations

import os
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Self

START_TIMEOUT_S = 10.0
SENTINEL_TIMEOUT_S = 10.0
SENTINEL_POLL_S = 0.02
SENTINEL_HEADER = "x-loadproof-wire-sentinel"
RING_BUFFER_KIB = 65536  # tcpdump -B: room for a burst of 256 streams without kernel drops


class CaptureUnavailable(RuntimeError):
    """tcpdump is missing, or the kernel refused to capture (no CAP_NET_RAW)."""


@dataclass(frozen=True)
class ClockPair:
    """CLOCK_REALTIME − CLOCK_MONOTONIC (ns), read within ± `half_width_ns`."""

    offset_ns: int
    half_width_ns: int


def read_clock_pair(tries: int = 2000) -> ClockPair:
    """The tightest of `tries` (monotonic, realtime, monotonic) brackets."""
    best_width, best_offset = None, 0
    for _ in range(tries):
        before = time.perf_counter_ns()
        wall = time.time_ns()
        after = time.perf_counter_ns()
        if best_width is None or after - before < best_width:
            best_width, best_offset = after - before, wall - (before + after) // 2
    assert best_width is not None
    return ClockPair(best_offset, (best_width + 1) // 2)


@dataclass(frozen=True)
class ClockMapping:
    """The pairs read before and after a capture: `to_wall` maps a monotonic stamp onto the
    capture's clock with the mean offset; `tolerance_ns` bounds that mapping's error."""

    before: ClockPair
    after: ClockPair

    @property
    def offset_ns(self) -> int:
        return (self.before.offset_ns + self.after.offset_ns) // 2

    @property
    def drift_ns(self) -> int:
        return self.after.offset_ns - self.before.offset_ns

    @property
    def tolerance_ns(self) -> int:
        return max(self.before.half_width_ns, self.after.half_width_ns) + (abs(self.drift_ns) + 1) // 2

    def to_wall(self, monotonic_ns: int) -> int:
        return monotonic_ns + self.offset_ns


@dataclass(frozen=True)
class CaptureReport:
    path: Path
    clock: ClockMapping
    packets_captured: int
    packets_dropped: int  # by the kernel: a full ring buffer (those connections cannot be read)
    cpu_s: float  # tcpdump's own CPU time from its start to its stop (its start-up left out)
    bytes: int


def capture_unavailable_reason() -> str | None:
    """Why no capture can run here, or None (a missing tcpdump; a refused one shows on start)."""
    if shutil.which("tcpdump") is None:
        return "tcpdump is not installed (Debian: apt-get install tcpdump)"
    return None


def process_cpu_s(pid: int) -> float:
    """CPU seconds a single-threaded process has run so far, in ns from /proc/PID/schedstat
    (/proc/PID/stat counts in clock ticks, 10 ms: coarser than tcpdump's whole share of a short
    replay)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0]) / 1e9


class Capture:
    """tcpdump on `lo` for TCP port `port` into `path`; a context manager (started on enter,
    stopped on exit unless `stop` was called). `cpus`: the cores tcpdump may run on."""

    def __init__(self, port: int, path: Path, host: str = "127.0.0.1", cpus: set[int] | None = None) -> None:
        self.port, self.path, self.host, self.cpus = port, path, host, cpus
        self._process: subprocess.Popen[bytes] | None = None
        self._before: ClockPair | None = None
        self._cpu_at_start_s = 0.0
        self.report: CaptureReport | None = None

    def command(self) -> list[str]:
        # data-bearing segments and the connection's SYN/FIN/RST only: pure ACKs carry no timing
        payload = "(ip[2:2] - ((ip[0] & 0xf) << 2) - ((tcp[12] & 0xf0) >> 2)) != 0"
        flags = "(tcp[tcpflags] & (tcp-syn|tcp-fin|tcp-rst)) != 0"
        return [
            "tcpdump",
            "-i",
            "lo",
            "-n",
            "-U",
            "-Z",
            "root",
            "-B",
            str(RING_BUFFER_KIB),
            "-s",
            "0",
            "--time-stamp-precision=nano",
            "-w",
            str(self.path),
            f"tcp port {self.port} and ({flags} or {payload})",
        ]

    def start(self) -> Self:
        reason = capture_unavailable_reason()
        if reason is not None:
            raise CaptureUnavailable(reason)
        process = subprocess.Popen(
            self.command(), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        self._process = process
        assert process.stderr is not None
        if self.cpus:
            os.sched_setaffinity(process.pid, self.cpus)
        said = b""
        deadline = time.monotonic() + START_TIMEOUT_S
        while b"listening on" not in said:  # tcpdump says so once the filter is set and the ring is up
            left = deadline - time.monotonic()
            ready, _, _ = select.select([process.stderr], [], [], max(left, 0))
            chunk = os.read(process.stderr.fileno(), 4096) if ready else b""
            if not chunk:
                process.kill()
                process.wait()
                said += b"" if ready else f" (no 'listening on' within {START_TIMEOUT_S} s)".encode()
                raise CaptureUnavailable(f"tcpdump could not capture on lo: {said.decode(errors='replace').strip()}")
            said += chunk
        self._before = read_clock_pair()
        self._cpu_at_start_s = process_cpu_s(process.pid)  # start-up (the ring's set-up) left out
        return self

    def stop(self) -> CaptureReport:
        """Send the sentinel, wait for it in the file, stop tcpdump; its counts and CPU."""
        process, before = self._process, self._before
        if process is None or before is None:
            raise RuntimeError("the capture was not started")
        after = read_clock_pair()
        try:
            self._await_sentinel(process)
        finally:
            cpu_s = process_cpu_s(process.pid) - self._cpu_at_start_s if process.poll() is None else 0.0
            process.send_signal(signal.SIGINT)
            _, said = process.communicate(timeout=30)
        text = said.decode(errors="replace")
        self._process = None
        self.report = CaptureReport(
            path=self.path,
            clock=ClockMapping(before, after),
            packets_captured=_count(text, "captured"),
            packets_dropped=_count(text, "dropped by kernel"),
            cpu_s=cpu_s,
            bytes=self.path.stat().st_size,
        )
        return self.report

    def _await_sentinel(self, process: subprocess.Popen[bytes]) -> None:
        marker = secrets.token_hex(8)
        with socket.create_connection((self.host, self.port), timeout=SENTINEL_TIMEOUT_S) as sock:
            sock.sendall(
                f"GET /health HTTP/1.1\r\nHost: {self.host}\r\n{SENTINEL_HEADER}: {marker}\r\n"
                "Connection: close\r\n\r\n".encode()
            )
            while sock.recv(65536):  # the server closes after its answer
                pass
        deadline = time.monotonic() + SENTINEL_TIMEOUT_S
        needle = marker.encode()
        while needle not in _tail(self.path):
            if time.monotonic() > deadline:
                raise RuntimeError(f"the capture's sentinel never reached {self.path}: packets may be missing")
            try:  # wait on tcpdump itself: its exit ends the wait at once
                process.wait(timeout=SENTINEL_POLL_S)
                raise RuntimeError(f"tcpdump exited before the capture's sentinel reached {self.path}")
            except subprocess.TimeoutExpired:
                pass

    def __enter__(self) -> Self:
        return self if self._process is not None else self.start()  # started already: stopped on exit

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        if self._process is not None:
            if kind is None:
                self.stop()
            else:
                self._process.kill()
                self._process.wait()
                self._process = None


def _tail(path: Path, size: int = 65536) -> bytes:
    with path.open("rb") as file:
        file.seek(max(0, path.stat().st_size - size))
        return file.read()


def _count(text: str, what: str) -> int:
    found = re.search(rf"(\d+) packets? {what}", text)
    return int(found.group(1)) if found else 0
