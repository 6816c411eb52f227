"""`send_chat` over aiohttp: the same contract, timestamps and error types as
`pipeline.replay.transport.request.send_chat` (httpx), at a fraction of the client CPU per request.

httpx's connection pool re-checks every pooled connection (a poll(2) each) whenever a request
is queued or released, so its cost per request grows with the number of open connections; at a
few hundred requests per second on two cores the client, not the endpoint, sets the pace.
aiohttp keeps idle connections in a LIFO list and parses HTTP in C. The stream is read a block
at a time and parsed as server-sent events here (data lines joined by newlines, comments skipped);
the payloads are read by `reply_reading.py`, shared with httpx. Only aiohttp's own exceptions are
mapped here.

Transit stays out of the TTFT: the send is stamped at the write that puts the request on the
socket (`t_sent_ns`, by the body payload itself), not when the call began (kept as
`t_send_call_ns`); a connection opened for the request is timed apart (`connect_ns`, by the
connector that opens it), and `open_connections` fills the pool before the first
planned send so that, at the plan's peak, no request waits for a TCP handshake. Each event is
stamped as the loop hands over the socket read that brought it (`_StampingHandler`), not when the
request's task wakes to parse it: at 256 streams on one loop that cut the TTFT error p99 against the
wire from 15.9 to 7.5 ms (bench/client_vs_wire.py --pin, medians of 4 and 6 runs); what is left is
the wait for the loop's next poll while it is busy (a closed loop's wave of ends and sends).
"""

from __future__ import annotations

import asyncio
import functools
import json
import time
from contextvars import ContextVar
from datetime import UTC, datetime

import aiohttp
from aiohttp.client_proto import ResponseHandler
from aiohttp.streams import EMPTY_PAYLOAD
from yarl import URL

from pipeline.replay.reading.reply_reading import (
    ERROR_BODY_CHARS,
    ReplyReader,
    StreamError,
    finish,
    http_error,
    sent_past_stale_connections,
)
from pipeline.replay.recording.records import RequestOutcome
from pipeline.replay.transport.api_kinds import stream_reader

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream"}
# after the 200's headers, the connection dropping mid-body is a cut stream, not a reset
_CUT_MID_STREAM = (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


class _StampingHandler(ResponseHandler):
    """aiohttp's connection protocol, which stamps every socket read as the event loop hands it
    over (`data_received`), before any task runs: `read_stamps` holds, for the response being
    read, (its body's bytes so far, the read's stamp) per read. A task that wakes late (the loop
    busy with other streams' events) still learns when each byte arrived: with one loop reading
    hundreds of streams, the reads of one burst come microseconds apart while the tasks that
    parse them run tens of microseconds each."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.read_stamps: list[tuple[int, int]] = []

    def data_received(self, data: bytes) -> None:
        if not data:  # aiohttp resuming its parser after a pause: no read
            super().data_received(data)
            return
        received_ns = time.perf_counter_ns()
        before = self._payload
        super().data_received(data)
        payload = self._payload
        if payload is None or payload is EMPTY_PAYLOAD:
            return
        if payload is not before:  # a new response on this connection
            self.read_stamps = []
        self.read_stamps.append((payload.total_bytes, received_ns))


def make_session(request_timeout_s: float) -> aiohttp.ClientSession:
    """One session (one connection pool) per replay: unlimited connections, kept alive. No read
    timeout of aiohttp's own: each request's total timeout (`send_chat`, at most
    `request_timeout_s`) bounds any silence too, and a read timeout re-arms a timer at every
    socket read (each SSE event) — CPU per event for a limit that could never fire first."""
    connector = _TimedConnector(limit=0, limit_per_host=0, ttl_dns_cache=None, enable_cleanup_closed=False)
    # our protocol for every connection it opens (aiohttp has no public hook: its own factory's attribute)
    stamping = functools.partial(_StampingHandler, loop=asyncio.get_running_loop())
    connector._factory = stamping  # type: ignore[assignment]  # a partial of a ResponseHandler subclass
    timeout = aiohttp.ClientTimeout(total=None, connect=min(10.0, request_timeout_s))
    return aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False, auto_decompress=True)


# the request whose connection is being opened (a task's own: set by `_send_once`)
_CONNECTING_FOR: ContextVar[RequestOutcome | None] = ContextVar("connecting_for", default=None)


class _TimedConnector(aiohttp.TCPConnector):
    """Times each connection it opens for a request (`connect_ns`), so set-up is recorded apart
    from the request's latency. Not aiohttp's tracing: with a trace config aiohttp awaits a
    signal at every step of every request (start, headers, each body chunk, end), pooled or not."""

    async def _create_connection(self, req, traces, timeout):
        outcome = _CONNECTING_FOR.get()
        started = time.perf_counter_ns()
        protocol = await super()._create_connection(req, traces, timeout)
        if outcome is not None:
            outcome.connect_ns = time.perf_counter_ns() - started
        return protocol


class _StampedBody(aiohttp.BytesPayload):
    """The request body, which stamps the send as it goes onto the socket: after any pool wait
    and connection set-up, at the one write that carries the request (aiohttp coalesces the
    headers with the body). Stamped as that write is called, not after it returns: on a busy
    machine the write wakes the server, which can run (and stamp its arrival) milliseconds
    before the client resumes, and a send stamped after the server's arrival is no send time."""

    def __init__(self, value: bytes, outcome: RequestOutcome) -> None:
        super().__init__(value, content_type="application/json")
        self._outcome = outcome
        self.written = False  # the whole request is on the socket

    async def write_with_length(self, writer, content_length: int | None) -> None:
        self._outcome.t_sent_ns = time.perf_counter_ns()
        await super().write_with_length(writer, content_length)
        self.written = True


async def open_connections(
    session: aiohttp.ClientSession, url: str, _headers: dict, count: int, timeout_s: float
) -> list[int]:
    """Open `count` connections to `url`'s host and leave them idle in the session's pool, so the
    replay's first `count` concurrent requests find one ready. Plain TCP connects (no request is
    sent: a real endpoint sees no extra traffic); aiohttp's connector has no public call for it,
    so the pool is filled through `connector.connect`, as a request would. Returns each
    successful set-up's duration (ns); a failed one is left to the replay to report."""
    connector = session.connector
    if connector is None or count <= 0:
        return []
    request = aiohttp.ClientRequest("POST", URL(url), loop=asyncio.get_running_loop(), session=session, ssl=True)
    timeout = aiohttp.ClientTimeout(total=timeout_s, connect=timeout_s)

    async def one() -> tuple[aiohttp.connector.Connection, int] | None:
        started = time.perf_counter_ns()
        try:
            return await connector.connect(request, [], timeout), time.perf_counter_ns() - started
        except (aiohttp.ClientError, OSError, TimeoutError):
            return None

    opened = [result for result in await asyncio.gather(*(one() for _ in range(count))) if result is not None]
    for connection, _ in opened:
        connection.release()  # back to the pool, idle and kept alive
    return [duration for _, duration in opened]


async def send_chat(
    session: aiohttp.ClientSession, url: str, body: dict, headers: dict, total_timeout_s: float, api: str = "chat"
) -> RequestOutcome:
    """POST a streamed request of `api` (chat, completions, responses: `api_kinds.py`) and record
    every lifecycle timestamp; sent again on another connection where a pooled one turned out
    closed (`stale_connection`)."""
    return await sent_past_stale_connections(lambda: _send_once(session, url, body, headers, total_timeout_s, api))


async def _send_once(
    session: aiohttp.ClientSession, url: str, body: dict, headers: dict, total_timeout_s: float, api: str
) -> RequestOutcome:
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
    reader = stream_reader(api, outcome)
    payload = _StampedBody(json.dumps(body, separators=(",", ":")).encode(), outcome)
    outcome.t_send_call_ns = outcome.t_sent_ns = time.perf_counter_ns()  # t_sent_ns: re-stamped once written
    connecting_for = _CONNECTING_FOR.set(outcome)  # in this task's context only
    try:
        async with asyncio.timeout(total_timeout_s):
            async with session.post(url, data=payload, headers={**JSON_HEADERS, **headers}) as response:
                outcome.t_first_byte_ns = headers_stamp(response, outcome.t_sent_ns)
                outcome.http_status = response.status
                if response.status != 200:
                    detail = (await response.read()).decode("utf-8", "replace")
                    raise http_error(outcome, response.status, detail, response.headers.get("retry-after"))
                await _read_events(response, reader)
    except StreamError as exc:
        exc.record(outcome)
    except aiohttp.ClientError as exc:  # before TimeoutError: aiohttp's own timeouts are both
        outcome.error_type = _transport_error_type(exc, response_started=outcome.http_status == 200)
        outcome.error_message = repr(exc)[:ERROR_BODY_CHARS]
        # the server closed before any response (FIN: ServerDisconnectedError), or the request was
        # not written whole ("Can not write request body"); a reset (ClientOSError) may follow a taken one
        outcome.request_not_taken = not payload.written or isinstance(exc, aiohttp.ServerDisconnectedError)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    finally:
        _CONNECTING_FOR.reset(connecting_for)
    return finish(outcome, body, reader)


async def _read_events(response: aiohttp.ClientResponse, reader: ReplyReader) -> None:
    """Server-sent events: each event's data lines joined by newlines. Read a network block at a
    time (not a line per await): each wake-up takes every complete line the socket reads since
    the last one brought, and each event is stamped when the socket read that brought its end was
    handed over (`_StampingHandler`; where there is none, when the block was taken) — what the
    user had then, not when the parse reached it. Bytes that are not UTF-8 become U+FFFD, as
    httpx's line reader makes them (a block ends at a newline, which no multi-byte character
    holds, so none is split)."""
    data: list[str] = []
    pending = b""
    connection = getattr(response, "connection", None)
    protocol = connection.protocol if connection is not None else None
    stamps = protocol.read_stamps if isinstance(protocol, _StampingHandler) else None
    consumed = 0  # body bytes taken off the stream so far
    async for chunk in response.content.iter_any():
        taken_ns = time.perf_counter_ns()
        block_start = consumed - len(pending)  # the body offset of the block's first byte
        consumed += len(chunk)
        block = pending + chunk if pending else chunk
        end = block.rfind(b"\n")  # complete lines: up to the block's last newline
        pending = block[end + 1 :]  # an incomplete last line waits for the next block
        if end < 0:
            continue
        lines = block[:end].decode("utf-8", "replace").split("\n")
        if stamps:
            _drop_reads_before(stamps, block_start + 1)  # a long reply's reads are not all kept
        if not stamps:
            data = _take_lines(lines, data, reader, taken_ns)
            continue
        last = _read_stamp(stamps, block_start + end + 1)
        if _read_stamp(stamps, block_start + 1) == last:  # one read brought every line (the usual case)
            data = _take_lines(lines, data, reader, last)
            continue
        line_stamps, offset = [], block_start  # each line by the read that brought its newline
        for raw in block[:end].split(b"\n"):
            offset += len(raw) + 1
            line_stamps.append(_read_stamp(stamps, offset))
        data = _take_lines(lines, data, reader, last, line_stamps)
    if pending:  # a last line with no newline after it
        data = _take_lines([pending.decode("utf-8", "replace")], data, reader, time.perf_counter_ns())
    if data:  # a last event with no blank line after it
        reader.feed("\n".join(data), time.perf_counter_ns())
    reader.end()


def headers_stamp(response: aiohttp.ClientResponse, sent_ns: int) -> int:
    """When the loop handed over the read that completed the response's headers (the first read
    `_StampingHandler` kept for it), so that the first token, stamped the same way, never comes
    before it; now where there is none (or only an earlier response's: an empty body keeps none)."""
    connection = getattr(response, "connection", None)
    protocol = connection.protocol if connection is not None else None
    if isinstance(protocol, _StampingHandler) and protocol.read_stamps and protocol.read_stamps[0][1] >= sent_ns:
        return protocol.read_stamps[0][1]
    return time.perf_counter_ns()


def _read_stamp(stamps: list[tuple[int, int]], offset: int) -> int:
    """The stamp of the first read that brought the body up to `offset` bytes (searched from the
    newest: a block spans few reads)."""
    found = stamps[-1][1]
    for total, stamp in reversed(stamps):
        if total < offset:
            break
        found = stamp
    return found


def _drop_reads_before(stamps: list[tuple[int, int]], offset: int) -> None:
    """Forget the reads no byte from `offset` on came in (all but the one that brought it, and later)."""
    kept = 0
    while kept + 1 < len(stamps) and stamps[kept][0] < offset:
        kept += 1
    if kept:
        del stamps[:kept]


def _take_lines(
    lines: list[str], data: list[str], reader: ReplyReader, received_ns: int, line_stamps: list[int] | None = None
) -> list[str]:
    """SSE lines read together: a `data:` line is kept, a blank line ends the event (fed to the
    reader with the lines' arrival: `line_stamps[i]` for line i where given, else `received_ns`);
    the unfinished event's data lines so far."""
    for index, line in enumerate(lines):
        if line.endswith("\r"):
            line = line.rstrip("\r")
        if not line:
            if data:
                stamp = received_ns if line_stamps is None else line_stamps[index]
                reader.feed(data[0] if len(data) == 1 else "\n".join(data), stamp)
                data = []
        elif line.startswith("data:"):
            data.append(line[6:] if line.startswith("data: ") else line[5:])
        # comments (":...") and other fields (event:, id:, retry:) carry no chunk
    return data


def _transport_error_type(exc: aiohttp.ClientError, response_started: bool = False) -> str:
    if response_started and isinstance(exc, _CUT_MID_STREAM):
        return "stream_cut"
    kinds = [
        (aiohttp.ConnectionTimeoutError, "connect_timeout"),
        (aiohttp.SocketTimeoutError, "read_timeout"),
        (aiohttp.ServerTimeoutError, "read_timeout"),
        (aiohttp.ClientConnectorError, "connect_error"),
        (aiohttp.ServerDisconnectedError, "connection_reset"),
        (aiohttp.ClientPayloadError, "connection_reset"),
        (aiohttp.ClientOSError, "connection_reset"),
    ]
    for kind, name in kinds:
        if isinstance(exc, kind):
            return name
    return "transport_error"
