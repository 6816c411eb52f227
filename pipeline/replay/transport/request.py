"""One streamed request (chat, completions or responses: `api_kinds.py`) over httpx, timed on the
monotonic clock; failures are typed, never raised. The reading of the reply (error types, chunks,
usage flags) is shared with the aiohttp transport in `reply_reading.py`; only httpx's own
exceptions are mapped here.

As with aiohttp, the send is stamped as the request goes onto the socket, after any pool wait and
connection set-up (httpcore's `trace` extension: `http11.send_request_headers.started` — h11
writes the headers apart from the body, and the server may start on the headers alone), the
call kept as `t_send_call_ns`, and a TCP connect made for the request timed apart (`connect_ns`)."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import httpx
from httpx_sse import EventSource

from pipeline.replay.reading.reply_reading import (
    ERROR_BODY_CHARS,
    StreamError,
    chat_body,
    finish,
    http_error,
    sent_past_stale_connections,
)
from pipeline.replay.recording.records import RequestOutcome
from pipeline.replay.transport.api_kinds import stream_reader

__all__ = ["ERROR_BODY_CHARS", "StreamError", "chat_body", "open_connections", "send_chat"]


async def open_connections(
    client: httpx.AsyncClient, url: str, headers: dict, count: int, timeout_s: float
) -> list[int]:
    """Fill the pool with `count` connections before the replay: httpx has no call that only
    connects, so `count` concurrent GETs of `url` (the models list) open them and leave them
    idle in the pool. Returns each successful one's duration (ns)."""

    async def one() -> int | None:
        started = time.perf_counter_ns()
        try:
            await client.get(url, headers=headers, timeout=timeout_s)
        except httpx.HTTPError:
            return None
        return time.perf_counter_ns() - started

    return [d for d in await asyncio.gather(*(one() for _ in range(max(0, count)))) if d is not None]


async def send_chat(
    client: httpx.AsyncClient, url: str, body: dict, headers: dict, total_timeout_s: float, api: str = "chat"
) -> RequestOutcome:
    """POST a streamed request of `api` (chat, completions, responses: `api_kinds.py`) and record
    every lifecycle timestamp; sent again on another connection where a pooled one turned out
    closed (`stale_connection`)."""
    return await sent_past_stale_connections(lambda: _send_once(client, url, body, headers, total_timeout_s, api))


async def _send_once(
    client: httpx.AsyncClient, url: str, body: dict, headers: dict, total_timeout_s: float, api: str
) -> RequestOutcome:
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
    reader = stream_reader(api, outcome)
    connect_started: list[int] = []
    body_written: list[bool] = []

    async def trace(event: str, _info: dict) -> None:
        if event == "http11.send_request_headers.started":
            outcome.t_sent_ns = time.perf_counter_ns()
        elif event == "http11.send_request_body.complete":
            body_written.append(True)
        elif event == "connection.connect_tcp.started":
            connect_started.append(time.perf_counter_ns())
        elif event == "connection.connect_tcp.complete" and connect_started:
            outcome.connect_ns = time.perf_counter_ns() - connect_started[-1]

    outcome.t_send_call_ns = outcome.t_sent_ns = time.perf_counter_ns()  # t_sent_ns: re-stamped once written
    try:
        async with asyncio.timeout(total_timeout_s):
            async with client.stream("POST", url, json=body, headers=headers, extensions={"trace": trace}) as response:
                outcome.t_first_byte_ns = time.perf_counter_ns()
                outcome.http_status = response.status_code
                if response.status_code != 200:
                    detail = (await response.aread()).decode("utf-8", "replace")
                    raise http_error(outcome, response.status_code, detail, response.headers.get("retry-after"))
                async for event in EventSource(response).aiter_sse():
                    reader.feed(event.data, time.perf_counter_ns())
                reader.end()
    except StreamError as exc:
        exc.record(outcome)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    except httpx.HTTPError as exc:
        outcome.error_type = _transport_error_type(exc, response_started=outcome.http_status == 200)
        outcome.error_message = repr(exc)[:ERROR_BODY_CHARS]
        # the server closed before any response (FIN: "Server disconnected without sending a
        # response"), or the request was not written whole; a reset (ReadError) may follow a taken one
        outcome.request_not_taken = not body_written or isinstance(exc, httpx.RemoteProtocolError)
    return finish(outcome, body, reader)


def _transport_error_type(exc: httpx.HTTPError, response_started: bool = False) -> str:
    if response_started and isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError)):
        return "stream_cut"
    kinds = [
        (httpx.ConnectTimeout, "connect_timeout"),
        (httpx.ReadTimeout, "read_timeout"),
        (httpx.WriteTimeout, "write_timeout"),
        (httpx.PoolTimeout, "pool_timeout"),
        (httpx.ConnectError, "connect_error"),
        (httpx.RemoteProtocolError, "connection_reset"),
        (httpx.ReadError, "connection_reset"),
        (httpx.WriteError, "connection_reset"),
    ]
    for kind, name in kinds:
        if isinstance(exc, kind):
            return name
    return "transport_error"
