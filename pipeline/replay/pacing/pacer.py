"""Wait until an absolute `time.perf_counter_ns()` deadline with sub-millisecond precision.

asyncio's timers wake through `epoll_wait`, whose timeout is rounded up to whole milliseconds,
so `asyncio.sleep` arrives on average half a millisecond late and up to a millisecond late even
on an idle loop. On Linux a `timerfd` armed with an absolute CLOCK_MONOTONIC deadline (the clock
behind `perf_counter_ns`) becomes readable when the kernel's high-resolution timer fires; the
loop sees it as an ordinary readable file descriptor, tens of microseconds after the deadline.
Elsewhere (or if the timerfd cannot be made) the pacer falls back to `asyncio.sleep`.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import os
import sys
import time

_CLOCK_MONOTONIC = 1
_TFD_NONBLOCK = os.O_NONBLOCK
_TFD_CLOEXEC = os.O_CLOEXEC
_TFD_TIMER_ABSTIME = 1


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _load_timerfd():
    """libc's timerfd_create/timerfd_settime, or None where there is no timerfd (not Linux)."""
    if not sys.platform.startswith("linux"):
        return None
    if "CLOCK_MONOTONIC" not in time.get_clock_info("perf_counter").implementation:
        return None  # a deadline on perf_counter would not be a CLOCK_MONOTONIC deadline
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        create, settime = libc.timerfd_create, libc.timerfd_settime
    except (OSError, AttributeError):
        return None
    create.argtypes, create.restype = [ctypes.c_int, ctypes.c_int], ctypes.c_int
    settime.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.POINTER(_Itimerspec), ctypes.c_void_p]
    settime.restype = ctypes.c_int
    return create, settime


_TIMERFD = _load_timerfd()


class DeadlinePacer:
    """One waiter at a time (the open loop's single pacing coroutine); use inside a running loop."""

    def __init__(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._fd = -1
        self._waiter: asyncio.Future | None = None
        self._spec = _Itimerspec()
        if _TIMERFD is not None:
            fd = _TIMERFD[0](_CLOCK_MONOTONIC, _TFD_NONBLOCK | _TFD_CLOEXEC)
            if fd >= 0:
                self._fd = fd
                self._loop.add_reader(fd, self._on_expiry)

    @property
    def precise(self) -> bool:
        """True when deadlines are kept by a kernel high-resolution timer (timerfd)."""
        return self._fd >= 0

    async def sleep_until(self, deadline_ns: int) -> None:
        """Return at (just after) `deadline_ns` on the perf_counter_ns clock; at once if past."""
        if deadline_ns <= time.perf_counter_ns():
            return
        if self._fd < 0:
            await asyncio.sleep((deadline_ns - time.perf_counter_ns()) / 1e9)
            return
        self._spec.it_value.tv_sec, self._spec.it_value.tv_nsec = divmod(deadline_ns, 1_000_000_000)
        if _TIMERFD[1](self._fd, _TFD_TIMER_ABSTIME, ctypes.byref(self._spec), None) != 0:
            await asyncio.sleep((deadline_ns - time.perf_counter_ns()) / 1e9)
            return
        self._waiter = self._loop.create_future()
        try:
            await self._waiter
        finally:
            self._waiter = None

    def _on_expiry(self) -> None:
        try:
            os.read(self._fd, 8)  # the expiry count; reading re-arms readiness
        except BlockingIOError:
            return
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def close(self) -> None:
        if self._fd >= 0:
            self._loop.remove_reader(self._fd)
            os.close(self._fd)
            self._fd = -1
