"""One streamed chat completion over httpx, timed on the monotonic clock; failures are typed,
never raised. The reading of the reply (error types, chunks, usage flags) is shared with the
aiohttp transport in `reply_reading.py`; only httpx's own exceptions are mapped here."""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime

import httpx
from httpx_sse import EventSource

from pipeline.replay.records import RequestOutcome
from pipeline.replay.reply_reading import ERROR_BODY_CHARS, StreamError, StreamReader, chat_body, finish, http_error

__all__ = ["ERROR_BODY_CHARS", "StreamError", "chat_body", "send_chat"]


async def send_chat(
    client: httpx.AsyncClient, url: str, body: dict, headers: dict, total_timeout_s: float
) -> RequestOutcome:
    """POST a streaming chat completion and record every lifecycle timestamp."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(UTC), t_end_ns=0)
    reader = StreamReader(outcome)
    outcome.t_sent_ns = time.perf_counter_ns()
    try:
        async with asyncio.timeout(total_timeout_s):
            async with client.stream("POST", url, json=body, headers=headers) as response:
                outcome.t_first_byte_ns = time.perf_counter_ns()
                outcome.http_status = response.status_code
                if response.status_code != 200:
                    detail = (await response.aread()).decode("utf-8", "replace")
                    raise http_error(outcome, response.status_code, detail, response.headers.get("retry-after"))
                async for event in EventSource(response).aiter_sse():
                    reader.feed(event.data, time.perf_counter_ns())
                reader.end()
    except StreamError as exc:
        outcome.error_type, outcome.error_message = exc.error_type, str(exc)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    except httpx.HTTPError as exc:
        outcome.error_type = _transport_error_type(exc, response_started=outcome.http_status == 200)
        outcome.error_message = repr(exc)[:ERROR_BODY_CHARS]
    return finish(outcome, body, reader.text_parts)


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
    ]
    for kind, name in kinds:
        if isinstance(exc, kind):
            return name
    return "transport_error"
