"""One streamed chat completion, timed on the monotonic clock; failures are typed, never raised.

`error_type` values (status `error`): `http_4xx`, `http_5xx`, `http_429` (Retry-After kept in
`retry_after_s`), `model_not_found` (a 404 whose OpenAI error code says so), `connect_error`,
`connection_reset` (closed before any response), `stream_cut` (closed mid-stream, after the
headers), `stream_incomplete` (ended cleanly but without `[DONE]`), `malformed_sse`,
`stream_error_event`, `total_timeout`, `read_timeout`, `connect_timeout`, …

Usage problems do not fail a request — its tokens arrived and its timings are valid — so they
are flagged in `usage_issue` instead (status stays `ok`):
- `usage_missing`: no usage object although `stream_options.include_usage` was asked (llama.cpp's
  server, for one, never sends it in streams); output tokens then fall back to the client count.
- `usage_mismatch`: the reported `completion_tokens` cannot be right, whatever the tokenizer:
  fewer than the content chunks received, or different from `max_tokens` when the stream
  finished for `length`. The server's figure is kept in `output_tokens` (server-reported where
  given) and the flag tells the analysis not to trust it.
"""

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
                    outcome.retry_after_s = _retry_after_s(response.headers.get("retry-after"))
                    detail = (await response.aread()).decode("utf-8", "replace")
                    raise StreamError(_http_error_type(response.status_code, detail), detail[:ERROR_BODY_CHARS])
                await _consume_stream(response, outcome, text_parts)
    except StreamError as exc:
        outcome.error_type, outcome.error_message = exc.error_type, str(exc)
    except TimeoutError:
        outcome.error_type, outcome.error_message = "total_timeout", f"no end after {total_timeout_s} s"
    except httpx.HTTPError as exc:
        outcome.error_type = _transport_error_type(exc, response_started=outcome.http_status == 200)
        outcome.error_message = repr(exc)[:ERROR_BODY_CHARS]
    outcome.t_end_ns = time.perf_counter_ns()
    outcome.output_tokens_client = count_tokens("".join(text_parts))
    if outcome.error_type is None:
        outcome.usage_issue = usage_issue(outcome, body.get("max_tokens"),
                                          bool((body.get("stream_options") or {}).get("include_usage")))
    return outcome


def usage_issue(outcome: RequestOutcome, max_tokens: int | None, usage_asked: bool) -> str | None:
    """`usage_missing`, `usage_mismatch` or None for a stream that ended well (module docstring)."""
    if outcome.output_tokens is None:
        return "usage_missing" if usage_asked else None
    if outcome.output_tokens < len(outcome.chunk_times_ns):
        return "usage_mismatch"
    if outcome.finish_reason == "length" and max_tokens is not None and outcome.output_tokens != max_tokens:
        return "usage_mismatch"
    return None


async def _consume_stream(response: httpx.Response, outcome: RequestOutcome, text_parts: list[str]) -> None:
    done = False
    async for event in EventSource(response).aiter_sse():
        now = time.perf_counter_ns()
        if event.data == "[DONE]":
            done = True
            break
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
            if not isinstance(choice, dict):
                raise StreamError("malformed_sse", "choice is not a JSON object")
            content = (choice.get("delta") or {}).get("content")
            if content:
                outcome.chunk_times_ns.append(now)
                text_parts.append(content)
            if choice.get("finish_reason"):
                outcome.finish_reason = choice["finish_reason"]
    if not done:
        raise StreamError("stream_incomplete", "stream ended before [DONE]")


def _http_error_type(status: int, body: str = "") -> str:
    if status == 429:
        return "http_429"
    if status == 404 and _error_code(body) == "model_not_found":
        return "model_not_found"
    return f"http_{status // 100}xx"


def _error_code(body: str) -> str | None:
    """The `error.code` of an OpenAI-shaped error body, if it is one."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return None
    return error.get("code") if isinstance(error, dict) else None


def _retry_after_s(value: str | None) -> float | None:
    """Retry-After in seconds (the delta-seconds form; an HTTP date is not converted)."""
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


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
