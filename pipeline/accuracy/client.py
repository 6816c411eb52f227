"""Send every item of the labelled slice to one candidate (non-streaming chat completions) and
keep its reply; failures are recorded with a type, never raised. Latency on the monotonic clock.
An item of the tool_call or json_schema scorer is sent with its request fields, and its reply's
tool calls and finish reason are read for the scorer (`labelled_slice.score_replies` drops them).
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime

import httpx

from pipeline.replay.pacing.engine import Target

ERROR_CHARS = 300


def accuracy_body(model: str, messages: list[dict], max_tokens: int, request: dict | None = None) -> dict:
    """The request: the item's own fields (tools, tool_choice, response_format) under ours."""
    ours = {"model": model, "messages": messages, "max_tokens": max_tokens, "temperature": 0, "stream": False}
    return {**(request or {}), **ours}


def _tool_calls(message: dict) -> list[dict]:
    """Each call's `name` and `arguments` text, for the scorer only (never recorded)."""
    calls = []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        calls.append({"name": function.get("name"), "arguments": function.get("arguments")})
    return calls


def replay_slice(items: list[dict], target: Target, max_tokens: int, concurrency: int, timeout_s: float) -> list[dict]:
    """One reply record per item (item_id, label, messages_json), in the slice's order."""
    return asyncio.run(_replay(items, target, max_tokens, concurrency, timeout_s))


async def _replay(items: list[dict], target: Target, max_tokens: int, concurrency: int, timeout_s: float) -> list[dict]:
    gate = asyncio.Semaphore(concurrency)
    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(timeout_s), trust_env=False) as client:

        async def one(item: dict) -> dict:
            async with gate:
                return await _ask(client, target, item, max_tokens, timeout_s)

        return await asyncio.gather(*(one(item) for item in items))


async def _ask(client: httpx.AsyncClient, target: Target, item: dict, max_tokens: int, timeout_s: float) -> dict:
    record = {
        "candidate": target.candidate,
        "item_id": item["item_id"],
        "label": item["label"],
        "reply": None,
        "status": "error",
        "error_type": None,
        "http_status": None,
        "latency_ms": None,
        "prompt_tokens": None,
        "output_tokens": None,
        "sent_at": datetime.now(UTC),
    }
    request = json.loads(item["request_json"]) if item.get("request_json") else None
    body = accuracy_body(target.model, json.loads(item["messages_json"]), max_tokens, request)
    started = time.perf_counter_ns()
    try:
        async with asyncio.timeout(timeout_s):
            response = await client.post(target.chat_url, json=body, headers=target.headers())
        record["http_status"] = response.status_code
        if response.status_code != 200:
            record["error_type"] = (
                "http_429" if response.status_code == 429 else f"http_{response.status_code // 100}xx"
            )
        else:
            payload = response.json()
            choice = payload["choices"][0]
            record["reply"] = choice["message"]["content"] or ""
            if request is not None:  # judged by the tool_call / json_schema scorers, then dropped
                record["tool_calls"], record["finish_reason"] = (
                    _tool_calls(choice["message"]),
                    choice.get("finish_reason"),
                )
            usage = payload.get("usage") or {}
            record["prompt_tokens"] = usage.get("prompt_tokens")
            record["output_tokens"] = usage.get("completion_tokens")
            record["status"] = "ok"
    except TimeoutError:
        record["error_type"] = "total_timeout"
    except httpx.HTTPError as exc:
        record["error_type"] = type(exc).__name__
    except (ValueError, KeyError, IndexError, TypeError):
        record["error_type"] = "malformed_body"
    record["latency_ms"] = (time.perf_counter_ns() - started) / 1e6
    return record
