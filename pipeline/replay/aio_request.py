"""`send_chat` over aiohttp: the same contract, timestamps and error types as
`pipeline.replay.request.send_chat` (httpx), at a fraction of the client CPU per request.

httpx's connection pool re-checks every pooled connection (a poll(2) each) whenever a request
is queued or released, so its cost per request grows with the number of open connections; at a
few hundred requests per second on two cores the client, not the endpoint, sets the pace.
aiohttp keeps idle connections in a LIFO list and parses HTTP in C. The stream is read line by
line and parsed as server-sent events here (data lines joined by newlines, comments skipped).
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timezone

import aiohttp

from pipeline.replay.records import RequestOutcome
from pipeline.replay.request import ERROR_BODY_CHARS, StreamError, _http_error_type, _retry_after
from pipeline.tokens import count_tokens

JSON_HEADERS = {"Content-Type": "application/json", "Accept": "text/event-stream"}


def make_session(request_timeout_s: float) -> aiohttp.ClientSession:
    """One session (one connection pool) per replay: unlimited connections, kept alive."""
    connector = aiohttp.TCPConnector(limit=0, limit_per_host=0, ttl_dns_cache=None, enable_cleanup_closed=False)
    timeout = aiohttp.ClientTimeout(total=None, connect=min(10.0, request_timeout_s), sock_read=request_timeout_s)
    return aiohttp.ClientSession(connector=connector, timeout=timeout, trust_env=False, auto_decompress=True)


async def send_chat(
    session: aiohttp.ClientSession, url: str, body: dict, headers: dict, total_timeout_s: float
) -> RequestOutcome:
    """POST a streaming chat completion and record every lifecycle timestamp."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(timezone.utc), t_end_ns=0)
    text_parts: list[str] = []
    payload = json.dumps(body, separators=(",", ":"))
    outcome.t_sent_ns = time.perf_counter_ns()
    try:
        async with asyncio.timeout(total_timeout_s):
            async with session.post(url, data=payload, headers={**JSON_HEADERS, **headers}) as response:
                outcome.t_first_byte_ns = time.perf_counter_ns()
                outcome.http_status = response.status
                if response.status != 200:
                    outcome.retry_after_s = _retry_after(response.headers.get("retry-after"))
                    detail = (await response.read()).decode("utf-8", "replace")[:ERROR_BODY_CHARS]
                    raise StreamError(_http_error_type(response.status), detail)
                await _consume_stream(response, outcome, text_parts)
    except StreamError as exc:
        outcome.error_type, outcome.error_message = exc.error_type, str(exc)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    except aiohttp.ClientError as exc:
        outcome.error_type, outcome.error_message = _transport_error_type(exc), repr(exc)[:ERROR_BODY_CHARS]
    outcome.t_end_ns = time.perf_counter_ns()
    outcome.output_tokens_client = count_tokens("".join(text_parts))
    return outcome


async def _consume_stream(response: aiohttp.ClientResponse, outcome: RequestOutcome, text_parts: list[str]) -> None:
    done = False
    data: list[str] = []
    async for raw in response.content:  # one line per iteration, b"\n" kept
        line = raw.decode("utf-8").rstrip("\r\n")
        if line:
            if line.startswith("data:"):
                data.append(line[6:] if line.startswith("data: ") else line[5:])
            continue  # comments (":...") and other fields (event:, id:, retry:) carry no chunk
        if not data:
            continue
        event, data = "\n".join(data), []
        if done or event == "[DONE]":
            done = True  # read on to the end of the body, so the connection goes back to the pool
            continue
        _handle_chunk(event, time.perf_counter_ns(), outcome, text_parts)
    if data and not done:  # a last event with no blank line after it
        event = "\n".join(data)
        if event == "[DONE]":
            done = True
        else:
            _handle_chunk(event, time.perf_counter_ns(), outcome, text_parts)
    if not done:
        raise StreamError("stream_incomplete", "stream ended before [DONE]")


def _handle_chunk(data: str, now: int, outcome: RequestOutcome, text_parts: list[str]) -> None:
    """One SSE data payload; the same reading as request._consume_stream (keep the two in step)."""
    try:
        payload = json.loads(data)
    except json.JSONDecodeError:
        raise StreamError("malformed_sse", f"chunk is not JSON: {data[:80]!r}") from None
    if not isinstance(payload, dict):
        raise StreamError("malformed_sse", "chunk is not a JSON object")
    if "error" in payload:
        raise StreamError("stream_error_event", json.dumps(payload["error"])[:ERROR_BODY_CHARS])
    usage = payload.get("usage")
    if isinstance(usage, dict):
        outcome.prompt_tokens = usage.get("prompt_tokens")
        outcome.output_tokens = usage.get("completion_tokens")
    for choice in payload.get("choices") or []:
        content = (choice.get("delta") or {}).get("content")
        if content:
            outcome.chunk_times_ns.append(now)
            text_parts.append(content)


def _transport_error_type(exc: aiohttp.ClientError) -> str:
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
