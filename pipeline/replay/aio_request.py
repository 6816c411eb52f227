"""`send_chat` over aiohttp: the same contract, timestamps and error types as
`pipeline.replay.request.send_chat` (httpx), at a fraction of the client CPU per request.

httpx's connection pool re-checks every pooled connection (a poll(2) each) whenever a request
is queued or released, so its cost per request grows with the number of open connections; at a
few hundred requests per second on two cores the client, not the endpoint, sets the pace.
aiohttp keeps idle connections in a LIFO list and parses HTTP in C. The stream is read line by
line and parsed as server-sent events here (data lines joined by newlines, comments skipped);
the payloads are read by `reply_reading.py`, shared with httpx. Only aiohttp's own exceptions are
mapped here.
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime

import aiohttp

from pipeline.replay.records import RequestOutcome
from pipeline.replay.reply_reading import ERROR_BODY_CHARS, StreamError, StreamReader, finish, http_error

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream"}
# after the 200's headers, the connection dropping mid-body is a cut stream, not a reset
_CUT_MID_STREAM = (aiohttp.ClientPayloadError, aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)


def make_session(request_timeout_s: float) -> aiohttp.ClientSession:
    """One session (one connection pool) per replay: unlimited connections, kept alive."""
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=None, enable_cleanup_closed=False)
    timeout = aiohttp.ClientTimeout(total=None, connect=min(10.0, request_timeout_s), sock_read=request_timeout_s)
    return aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False, auto_decompress=True)


async def send_chat(
    session: aiohttp.ClientSession, url: str, body: dict, headers: dict, total_timeout_s: float
) -> RequestOutcome:
    """POST a streaming chat completion and record every lifecycle timestamp."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
    reader = StreamReader(outcome)
    payload = json.dumps(body, separators=(",", ":"))
    outcome.t_sent_ns = time.perf_counter_ns()
    try:
        async with asyncio.timeout(total_timeout_s):
            async with session.post(url, data=payload, headers={**JSON_HEADERS, **headers}) as response:
                outcome.t_first_byte_ns = time.perf_counter_ns()
                outcome.http_status = response.status
                if response.status != 200:
                    detail = (await response.read()).decode("utf-8", "replace")
                    raise http_error(outcome, response.status, detail, response.headers.get("retry-after"))
                await _read_events(response, reader)
    except StreamError as exc:
        outcome.error_type, outcome.error_message = exc.error_type, str(exc)
    except aiohttp.ClientError as exc:  # before TimeoutError: aiohttp's own timeouts are both
        outcome.error_type = _transport_error_type(exc, response_started=outcome.http_status == 200)
        outcome.error_message = repr(exc)[:ERROR_BODY_CHARS]
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    return finish(outcome, body, reader.text_parts)


async def _read_events(response: aiohttp.ClientResponse, reader: StreamReader) -> None:
    """Server-sent events, line by line: each event's data lines joined by newlines."""
    data: list[str] = []
    async for raw in response.content:  # one line per iteration, b"\n" kept
        line = raw.decode("utf-8").rstrip("\r\n")
        if line:
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            continue  # comments (":...") and other fields (event:, id:, retry:) carry no chunk
        if data:
            event, data = "\n".join(data), []
            reader.feed(event, time.perf_counter_ns())
    if data:  # a last event with no blank line after it
        reader.feed("\n".join(data), time.perf_counter_ns())
    reader.end()


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
