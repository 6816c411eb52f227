"""One streamed chat completion, timed on the monotonic clock; failures are typed, never raised."""

from __future__ import annotations

import asyncio
import json
import time
from datetime import datetime, timezone

import httpx
from httpx_sse import EventSource

from pipeline.replay.records import RequestOutcome
from pipeline.tokens import count_tokens

ERROR_BODY_CHARS = 300


class StreamError(Exception):
    def __init__(self, error_type: str, message: str):
        super().__init__(message)
        self.error_type = error_type


def chat_body(model: str, messages: list[dict], max_tokens: int) -> dict:
    return {
        "model": model,
        "messages": messages,
        "max_tokens": max_tokens,
        "stream": True,
        "stream_options": {"include_usage": True},
    }


async def send_chat(
    client: httpx.AsyncClient, url: str, body: dict, headers: dict, total_timeout_s: float
) -> RequestOutcome:
    """POST a streaming chat completion and record every lifecycle timestamp."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime.now(timezone.utc), t_end_ns=0)
    text_parts: list[str] = []
    outcome.t_sent_ns = time.perf_counter_ns()
    try:
        async with asyncio.timeout(total_timeout_s):
            async with client.stream("POST", url, json=body, headers=headers) as response:
                outcome.t_first_byte_ns = time.perf_counter_ns()
                outcome.http_status = response.status_code
                if response.status_code != 200:
                    outcome.retry_after_s = _retry_after(response.headers.get("retry-after"))
                    detail = (await response.aread()).decode("utf-8", "replace")[:ERROR_BODY_CHARS]
                    raise StreamError(_http_error_type(response.status_code), detail)
                await _consume_stream(response, outcome, text_parts)
    except StreamError as exc:
        outcome.error_type, outcome.error_message = exc.error_type, str(exc)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    except httpx.HTTPError as exc:
        outcome.error_type, outcome.error_message = _transport_error_type(exc), repr(exc)[:ERROR_BODY_CHARS]
    outcome.t_end_ns = time.perf_counter_ns()
    outcome.output_tokens_client = count_tokens("".join(text_parts))
    return outcome


async def _consume_stream(response: httpx.Response, outcome: RequestOutcome, text_parts: list[str]) -> None:
    done = False
    async for event in EventSource(response).aiter_sse():
        now = time.perf_counter_ns()
        if done or event.data == "[DONE]":
            done = True  # read on to the end of the body, so the connection goes back to the pool
            continue
        try:
            payload = json.loads(event.data)
        except json.JSONDecodeError:
            raise StreamError("malformed_sse", f"chunk is not JSON: {event.data[:80]!r}") from None
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
    if not done:
        raise StreamError("stream_incomplete", "stream ended before [DONE]")


def _retry_after(value: str | None) -> float | None:
    """Retry-After in seconds (the delta-seconds form; an HTTP date is ignored)."""
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _http_error_type(status: int) -> str:
    if status == 429:
        return "http_429"
    return f"http_{status // 100}xx"


def _transport_error_type(exc: httpx.HTTPError) -> str:
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
