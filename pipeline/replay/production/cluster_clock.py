"""The shards' start barrier and clock alignment through a Dask cluster's scheduler.

Why not the file barrier (`shards.common_start_ns`): shards on several hosts share neither a disk
that every one of them polls nor a clock. Here the scheduler is both the meeting point and the
reference clock:

- **Clock offset.** Each shard asks the scheduler for its `perf_counter_ns` reading a number of
  times (`Client.run_on_scheduler`), stamping its own clock before and after each round trip.
  The sample with the smallest round trip is the one least disturbed by queueing, so it is the
  one kept (Cristian's algorithm, min-filtered as NTP does): offset = coordinator − (t_send +
  t_recv) / 2, good to ± RTT/2. A worker clock reading plus its offset is a reading on the
  coordinator's timeline.
- **Barrier.** Each shard publishes its ready instant (on the coordinator's timeline) in a
  `distributed.Variable` of its own, then blocks on every shard's Variable (a `get` waits until it
  is set). All of them then compute the same start: the latest ready instant plus a lead, which
  each converts back to its own clock with its own offset.

`distributed` is imported only here and only when a shard runs on the cluster (the default
multiprocess path never loads it).
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass

CLOCK_SAMPLES = 25  # round trips per shard: enough for one to meet a quiet scheduler


@dataclass(frozen=True)
class ClockSample:
    """One round trip: this process's clock before and after, the coordinator's reading between."""

    t_send_ns: int
    coordinator_ns: int
    t_recv_ns: int

    @property
    def rtt_ns(self) -> int:
        return self.t_recv_ns - self.t_send_ns

    @property
    def offset_ns(self) -> int:
        return self.coordinator_ns - (self.t_send_ns + self.t_recv_ns) // 2


@dataclass(frozen=True)
class WorkerClock:
    """What a shard records about its clock: who it is, the kept offset and that sample's RTT."""

    worker: str
    offset_ns: int
    rtt_ns: int
    samples: int

    def to_dict(self) -> dict:
        return asdict(self)


def min_rtt_offset(samples: list[ClockSample]) -> ClockSample:
    """The sample with the smallest round trip (the earliest one on a tie)."""
    if not samples:
        raise ValueError("no clock samples")
    return min(samples, key=lambda sample: sample.rtt_ns)


def sample_clock(coordinator_now_ns: Callable[[], int], count: int = CLOCK_SAMPLES) -> list[ClockSample]:
    samples = []
    for _ in range(count):
        sent = time.perf_counter_ns()
        remote = coordinator_now_ns()
        samples.append(ClockSample(sent, remote, time.perf_counter_ns()))
    return samples


def common_start(ready_on_coordinator_ns: list[int], lead_ns: int) -> int:
    """The start every shard computes alike from the same ready instants: the latest plus a lead."""
    return max(ready_on_coordinator_ns) + lead_ns


def worker_name() -> str:
    """The Dask worker's own name where this runs inside one, else host:pid."""
    try:
        from distributed import get_worker

        return str(get_worker().name)
    except (ImportError, ValueError):
        return f"{socket.gethostname()}:{os.getpid()}"


class DaskBarrier:
    """One shard's side of the barrier on the cluster this process belongs to (a Dask worker's
    own client; `client` for a test or a bench that holds one)."""

    def __init__(self, name: str, index: int, count: int, timeout_s: float, lead_ns: int, client=None):
        self.name, self.index, self.count = name, index, count
        self.timeout_s, self.lead_ns = timeout_s, lead_ns
        self.client = client
        self.clock: WorkerClock | None = None

    def _client(self):
        if self.client is None:
            from distributed import get_client

            self.client = get_client()
        return self.client

    def measure(self) -> WorkerClock:
        client = self._client()
        # a builtin, pickled by reference: the scheduler needs nothing of this project to run it
        samples = sample_clock(lambda: client.run_on_scheduler(time.perf_counter_ns))
        best = min_rtt_offset(samples)
        self.clock = WorkerClock(worker_name(), best.offset_ns, best.rtt_ns, len(samples))
        return self.clock

    def wait(self) -> int:
        """Measure the offset, publish ready, wait for every shard; the common start on this
        process's perf_counter_ns clock."""
        from distributed import Variable

        client = self._client()
        clock = self.measure()
        ready = {"worker": clock.worker, "ready_ns": time.perf_counter_ns() + clock.offset_ns}
        Variable(f"{self.name}/ready/{self.index}", client=client).set(ready)
        deadline = time.monotonic() + self.timeout_s
        documents = []
        for index in range(self.count):
            left = max(0.0, deadline - time.monotonic())
            try:
                documents.append(Variable(f"{self.name}/ready/{index}", client=client).get(timeout=left))
            except TimeoutError as error:
                raise TimeoutError(
                    f"shard_{self.index}: only {len(documents)} of {self.count} shards ready after "
                    f"{self.timeout_s} s (barrier {self.name} on the Dask scheduler)"
                ) from error
        start_on_coordinator = common_start([document["ready_ns"] for document in documents], self.lead_ns)
        return start_on_coordinator - clock.offset_ns
