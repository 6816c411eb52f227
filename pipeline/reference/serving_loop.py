"""The serving model in real time: one asyncio task runs engine steps and feeds per-request queues.

Clock mapping. The loop keeps a virtual clock (ns since the loop's origin, a
`time.perf_counter_ns()` reading taken at start-up) and advances it only by modelled step
durations. Before delivering a step's tokens it sleeps until the monotonic clock reaches
`origin + virtual end of the step` (an absolute deadline, so sleep overshoot never accumulates).
The virtual clock therefore never runs ahead of the monotonic one; when Python cannot keep up
(a step's bookkeeping takes longer than its modelled duration) it falls behind, and each request's
timeline carries that lag. When the engine is idle the virtual clock jumps to the earliest
pending arrival.

Arrivals. A request that arrives while a step runs joins at the next step boundary, as in a
real engine. Its arrival on the virtual clock is its monotonic arrival, clamped into
(previous step start, admitting step start] and never before the previous request's (a request
whose body took longer to read may be submitted after one that arrived later) — so feeding the
recorded virtual arrivals to `simulate` reproduces the server's virtual timeline exactly
(tests/integration/test_reference_model.py).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from pipeline.reference.serving_model import EngineCore, Sequence
from pipeline.reference.serving_profile import ServingProfile

FINISHED = -1  # queue sentinel: the sequence is done


@dataclass
class SequenceHandle:
    """A request's view of its sequence: `events` yields one item per token, then FINISHED."""

    seq: Sequence
    arrival_mono_ns: int
    events: asyncio.Queue[int] = field(default_factory=asyncio.Queue)
    lag_ns: int = 0  # monotonic − (origin + virtual) when the last event was delivered

    async def tokens(self):
        """Async iterator over the token indices (0, 1, …) as the engine produces them."""
        while True:
            item = await self.events.get()
            if item == FINISHED:
                return
            yield item


class EngineLoop:
    """Owns the EngineCore of one server; start() it inside the server's event loop."""

    def __init__(self, profile: ServingProfile) -> None:
        self.core = EngineCore(profile)
        self.origin_ns = time.perf_counter_ns()
        self.virtual_ns = 0
        self.steps = 0
        self._last_step_start_ns = -1
        self._last_arrival_ns = 0  # virtual arrivals never decrease (ties keep submission order)
        self._pending: list[SequenceHandle] = []
        self._handles: dict[int, SequenceHandle] = {}
        self._next_id = 0
        self._wake = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="reference-engine")

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass

    # --- request side ------------------------------------------------------------------------

    def submit(
        self,
        prompt_tokens: int,
        output_tokens: int,
        arrival_mono_ns: int,
        block_hashes: tuple[int, ...] = (),
        constrained: bool = False,
    ) -> SequenceHandle:
        """Queue a request (`block_hashes`: its prompt's, for the prefix cache; `constrained`: a
        schema or tool call constrains its output); raises PromptTooLong when it could never fit
        the KV cache."""
        self.core.check_fits(prompt_tokens, output_tokens)
        if self._task is None or self._task.done():
            self.start()  # started lazily when the app runs without a lifespan (in-process ASGI)
        seq = Sequence(
            self._next_id,
            prompt_tokens,
            output_tokens,
            arrival_ns=-1,
            block_hashes=block_hashes,
            constrained=constrained,
        )
        self._next_id += 1
        handle = SequenceHandle(seq, arrival_mono_ns)
        self._pending.append(handle)
        self._handles[seq.seq_id] = handle
        self._wake.set()
        return handle

    def cancel(self, handle: SequenceHandle) -> None:
        """The client went away (or a fault cut it): free the sequence's slot and KV."""
        if self._handles.pop(handle.seq.seq_id, None) is None:
            return
        if handle in self._pending:
            self._pending.remove(handle)
        else:
            self.core.cancel(handle.seq.seq_id)

    @property
    def pending(self) -> int:
        """Requests that arrived during the running step: they join the engine's queue at the next
        step boundary (vLLM's scheduler would count them as waiting already)."""
        return len(self._pending)

    def to_mono_ns(self, virtual_ns: int | None) -> int | None:
        """A virtual time as a monotonic reading (where the model put it, lag aside)."""
        return None if virtual_ns is None else self.origin_ns + virtual_ns

    # --- the loop ----------------------------------------------------------------------------

    def _admit_pending(self) -> None:
        for handle in self._pending:  # in submission order, which is the engine's FIFO order
            arrival = handle.arrival_mono_ns - self.origin_ns
            arrival = max(arrival, self._last_step_start_ns + 1, self._last_arrival_ns)
            handle.seq.arrival_ns = self._last_arrival_ns = min(arrival, self.virtual_ns)
            self.core.add(handle.seq)
        self._pending.clear()

    async def _run(self) -> None:
        while True:
            if self.core.idle and not self._pending:
                self._wake.clear()
                await self._wake.wait()
                earliest = min(h.arrival_mono_ns for h in self._pending) - self.origin_ns
                self.virtual_ns = max(self.virtual_ns, earliest)
            self._admit_pending()
            if self.core.idle:  # everything pending was cancelled meanwhile
                continue
            step = self.core.step(self.virtual_ns)
            self._last_step_start_ns = self.virtual_ns
            self.virtual_ns = step.end_ns
            self.steps += 1
            delay_ns = self.origin_ns + self.virtual_ns - time.perf_counter_ns()
            if delay_ns > 0:
                await asyncio.sleep(delay_ns / 1e9)
            else:
                await asyncio.sleep(0)  # let the request tasks run even when the model is free
            self._deliver(step.tokens, step.finished)

    def _deliver(self, tokens: list[int], finished: list[int]) -> None:
        lag = time.perf_counter_ns() - (self.origin_ns + self.virtual_ns)
        for seq_id in tokens:
            handle = self._handles.get(seq_id)
            if handle is not None:
                handle.lag_ns = lag
                handle.events.put_nowait(handle.seq.generated - 1)
        for seq_id in finished:
            handle = self._handles.pop(seq_id, None)
            if handle is not None:
                handle.lag_ns = lag
                handle.events.put_nowait(FINISHED)
