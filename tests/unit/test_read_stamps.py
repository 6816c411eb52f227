"""Each streamed event is stamped when the event loop handed over the socket read that brought it
(`aio_request._StampingHandler.data_received`), not when the request's task woke to parse it: with
hundreds of streams on one loop the task wakes milliseconds after the read (bench/client_vs_wire.py,
TTFT error p99 at 256 streams). aiohttp's own protocol and HTTP parser read the bytes here; the
clock is the test's, so the stamps are exact."""

from __future__ import annotations

import asyncio
import itertools
from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from pipeline.replay.reading.reply_reading import StreamReader
from pipeline.replay.recording.records import RequestOutcome
from pipeline.replay.transport import aio_request

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"


def chunk(payload: bytes) -> bytes:
    return f"{len(payload):x}\r\n".encode() + payload + b"\r\n"


def event(token: str) -> bytes:
    return b'data: {"choices": [{"delta": {"content": "' + token.encode() + b'"}}]}\n\n'


class Clock:
    """perf_counter_ns as the test sets it."""

    def __init__(self) -> None:
        self.now = 0

    def __call__(self) -> int:
        return self.now


def handler_with_reads(clock: Clock, reads: list[tuple[int, bytes]]) -> aio_request._StampingHandler:
    """aiohttp's protocol (ours) fed `reads` as the loop would hand them over, each at its time."""
    handler = aio_request._StampingHandler(asyncio.get_running_loop())
    handler.connection_made(SimpleNamespace(get_extra_info=lambda *_: None, is_closing=lambda: False))
    handler.set_response_params(read_until_eof=False, auto_decompress=False)
    for at, data in reads:
        clock.now = at
        handler.data_received(data)
    return handler


async def read_late(handler: aio_request._StampingHandler, clock: Clock, late_ns: int) -> RequestOutcome:
    """The request's task wakes at `late_ns`, after every read, and reads the body."""
    message, payload = handler._buffer[0][0]  # what aiohttp hands the response: (message, payload)
    assert message.code == 200
    clock.now = late_ns
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 6, tzinfo=UTC), t_end_ns=0)
    response = SimpleNamespace(content=payload, connection=SimpleNamespace(protocol=handler))
    await aio_request._read_events(response, StreamReader(outcome))
    return outcome


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    clock = Clock()
    monkeypatch.setattr(aio_request.time, "perf_counter_ns", clock)
    return clock


def test_each_event_keeps_the_time_its_read_was_handed_over_however_late_the_task_wakes(clock: Clock):
    async def scenario() -> RequestOutcome:
        reads = [
            (1_000, HEAD + chunk(event("a"))),  # the headers and the first token together
            (2_000, chunk(event("b"))),
            (3_000, chunk(event("c")) + chunk(event("d"))),  # two events in one read
            (4_000, chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"),
        ]
        return await read_late(handler_with_reads(clock, reads), clock, late_ns=50_000)

    outcome = asyncio.run(scenario())
    assert outcome.chunk_times_ns == [1_000, 2_000, 3_000, 3_000]


def test_the_headers_are_stamped_by_their_read_so_the_first_token_never_precedes_them(clock: Clock):
    """The lifecycle's order (first byte ≤ first token, a blocking check on every replay) holds
    when the headers and the first token come in one read and the task takes the response late."""

    async def scenario() -> tuple[int, int, int]:
        handler = handler_with_reads(clock, [(1_000, HEAD + chunk(event("a")))])
        response = SimpleNamespace(connection=SimpleNamespace(protocol=handler))
        clock.now = 9_000  # the task wakes
        return (
            aio_request.headers_stamp(response, sent_ns=500),
            aio_request.headers_stamp(response, sent_ns=2_000),  # an earlier response's read: not this one's
            aio_request.headers_stamp(SimpleNamespace(connection=None), sent_ns=500),
        )

    assert asyncio.run(scenario()) == (1_000, 9_000, 9_000)


def test_an_event_split_across_reads_is_stamped_by_the_read_that_completed_it(clock: Clock):
    whole = event("split")
    cut = len(whole) // 2

    async def scenario() -> RequestOutcome:
        reads = [
            (10, HEAD + chunk(event("x"))),
            (20, chunk(whole[:cut])),  # half an event: not yet one
            (30, chunk(whole[cut:])),
            (40, chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"),
        ]
        return await read_late(handler_with_reads(clock, reads), clock, late_ns=99)

    outcome = asyncio.run(scenario())
    assert outcome.chunk_times_ns == [10, 30]


def test_a_second_response_on_the_connection_starts_its_own_stamps(clock: Clock):
    async def scenario() -> list[tuple[int, int]]:
        first = [(1, HEAD + chunk(event("a")) + b"0\r\n\r\n")]
        handler = handler_with_reads(clock, first)
        handler._buffer.clear()
        handler.set_response_params(read_until_eof=False, auto_decompress=False)
        clock.now = 7
        handler.data_received(HEAD + chunk(event("b")))
        return handler.read_stamps

    assert asyncio.run(scenario()) == [(len(event("b")), 7)]


def test_without_our_protocol_the_block_is_stamped_when_taken(clock: Clock):
    """A response read some other way (no `_StampingHandler`): as before, when the task took it."""

    async def iter_any():
        clock.now = 5
        yield event("a")
        clock.now = 8
        yield event("b") + b"data: [DONE]\n\n"

    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 6, tzinfo=UTC), t_end_ns=0)
    asyncio.run(
        aio_request._read_events(SimpleNamespace(content=SimpleNamespace(iter_any=iter_any)), StreamReader(outcome))
    )
    assert outcome.chunk_times_ns == [5, 8]


def test_the_stamp_lookup_takes_the_first_read_reaching_the_offset():
    stamps = list(zip(itertools.accumulate([10, 5, 20]), [100, 200, 300]))  # (10, 100), (15, 200), (35, 300)
    assert [aio_request._read_stamp(stamps, offset) for offset in (1, 10, 11, 15, 16, 35)] == [
        100,
        100,
        200,
        200,
        300,
        300,
    ]


def test_a_long_reply_keeps_only_the_reads_it_still_needs(clock: Clock):
    async def scenario() -> tuple[RequestOutcome, int]:
        reads = [(i + 1, chunk(event(f"t{i}"))) for i in range(1, 500)]
        reads.append((600, chunk(b"data: [DONE]\n\n") + b"0\r\n\r\n"))
        handler = handler_with_reads(clock, [(1, HEAD + chunk(event("t0")))])
        payload = handler._buffer[0][0][1]
        outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 6, tzinfo=UTC), t_end_ns=0)
        most = 0

        async def reads_as_they_come():  # the task keeps up: a block after every read
            nonlocal most
            yield await payload.readany()
            for at, data in reads:
                clock.now = at
                handler.data_received(data)
                most = max(most, len(handler.read_stamps))
                yield await payload.readany()

        response = SimpleNamespace(
            content=SimpleNamespace(iter_any=reads_as_they_come), connection=SimpleNamespace(protocol=handler)
        )
        await aio_request._read_events(response, StreamReader(outcome))
        return outcome, most

    outcome, most = asyncio.run(scenario())
    assert outcome.chunk_times_ns == list(range(1, 501)) and most <= 3
