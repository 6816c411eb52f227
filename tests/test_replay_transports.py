"""The replay's two HTTP clients (aiohttp, the default, and httpx) read every reply alike: the same
error type, status, chunk count and token counts, for good replies and for each kind of fault.
A canned-bytes HTTP server on loopback plays the faults."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest

from pipeline.replay import aio_request, request
from pipeline.replay.engine import PlannedRequest, ReplaySettings, Target, run_replay
from pipeline.replay.journal import Journal, journal_to_table
from pipeline.replay.pacer import DeadlinePacer


def _sse(*events: str) -> bytes:
    return "".join(f"data: {event}\n\n" for event in events).encode()


def _chunk(text: str) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": {"content": text}}]})


USAGE = json.dumps({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 3}})
GOOD = _sse(_chunk("alpha"), _chunk(" bravo"), _chunk(" cargo"), USAGE, "[DONE]")
SSE_HEADERS = "Content-Type: text/event-stream\r\n"

# path -> (status line, extra headers, body, bytes of the body actually sent or None for all)
CANNED = {
    "/good": ("200 OK", SSE_HEADERS, GOOD, None),
    "/good-crlf-multiline": ("200 OK", SSE_HEADERS, (
        ": a comment line\r\nevent: message\r\ndata: {\"choices\": [{\"delta\":\r\ndata: {\"content\": \"x\"}}]}\r\n\r\n"
        "data: [DONE]\r\n\r\n").encode(), None),
    "/too-many": ("429 Too Many Requests", "Content-Type: application/json\r\nRetry-After: 2\r\n", b'{"error": "slow down"}', None),
    "/server-error": ("503 Service Unavailable", "Content-Type: text/plain\r\n", b"overloaded", None),
    "/no-done": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), USAGE), None),
    "/truncated": ("200 OK", SSE_HEADERS, GOOD, 40),
    "/malformed": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), "{not json", "[DONE]"), None),
    "/error-event": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), json.dumps({"error": {"message": "boom"}}), "[DONE]"), None),
    "/no-usage": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), _chunk(" bravo"), "[DONE]"), None),
}


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    path = lines[0].split()[1]
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    await reader.readexactly(length)
    if path == "/reset":  # close without a word
        writer.close()
        return
    status, headers, body, sent = CANNED[path]
    writer.write(f"HTTP/1.1 {status}\r\n{headers}Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode())
    writer.write(body if sent is None else body[:sent])
    await writer.drain()
    writer.close()


def _fingerprint(outcome) -> dict:
    return {
        "error_type": outcome.error_type,
        "http_status": outcome.http_status,
        "chunks": len(outcome.chunk_times_ns),
        "prompt_tokens": outcome.prompt_tokens,
        "output_tokens": outcome.output_tokens,
        "output_tokens_client": outcome.output_tokens_client,
        "retry_after_s": outcome.retry_after_s,
        "ordered": outcome.t_sent_ns <= (outcome.t_first_byte_ns or outcome.t_end_ns) <= outcome.t_end_ns,
    }


async def _both(paths: list[str], port: int | None = None) -> dict[str, tuple[dict, dict]]:
    server = await asyncio.start_server(_serve, "127.0.0.1", 0)
    port = port or server.sockets[0].getsockname()[1]
    body = request.chat_body("m", [{"role": "user", "content": "hi"}], 3)
    results = {}
    async with httpx.AsyncClient(trust_env=False) as client, aio_request.make_session(5.0) as session:
        for path in paths:
            url = f"http://127.0.0.1:{port}{path}"
            via_httpx = await request.send_chat(client, url, body, {}, 5.0)
            via_aiohttp = await aio_request.send_chat(session, url, body, {}, 5.0)
            results[path] = (_fingerprint(via_httpx), _fingerprint(via_aiohttp))
    server.close()
    await server.wait_closed()
    return results


EXPECTED = {
    "/good": (None, 3),
    "/good-crlf-multiline": (None, 1),
    "/too-many": ("http_429", 0),
    "/server-error": ("http_5xx", 0),
    "/no-done": ("stream_incomplete", 1),
    "/truncated": ("connection_reset", 0),
    "/malformed": ("malformed_sse", 1),
    "/error-event": ("stream_error_event", 1),
    "/no-usage": (None, 2),
    "/reset": ("connection_reset", 0),
}


def test_aiohttp_and_httpx_read_every_reply_and_fault_alike():
    results = asyncio.run(_both(list(EXPECTED)))
    for path, (error_type, chunks) in EXPECTED.items():
        via_httpx, via_aiohttp = results[path]
        assert via_aiohttp == via_httpx, path
        assert (via_aiohttp["error_type"], via_aiohttp["chunks"]) == (error_type, chunks), path
        assert via_aiohttp["ordered"], path
    assert results["/good"][1]["output_tokens"] == 3 and results["/good"][1]["prompt_tokens"] == 7
    assert results["/too-many"][1]["retry_after_s"] == 2.0 and results["/too-many"][1]["http_status"] == 429
    assert results["/no-usage"][1]["output_tokens"] is None and results["/no-usage"][1]["output_tokens_client"] == 2


@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_both_transports_replay_the_same_plan_to_the_same_records(tmp_path: Path, zero_server, transport: str):
    plan = [PlannedRequest(f"r{i}", i * 0.005, [{"role": "user", "content": f"hello {i}"}], 4, 2) for i in range(20)]
    with Journal(tmp_path / "j.jsonl") as journal:
        stats = run_replay(plan, Target("ref", zero_server.base_url, "reference-model"), ReplaySettings(mode="rate", transport=transport), "run", journal)
    rows = journal_to_table(tmp_path / "j.jsonl").to_pylist()
    assert stats.sent == 20 and stats.errors == 0
    assert sorted(r["request_id"] for r in rows) == sorted(f"r{i}" for i in range(20))
    assert {(r["status"], r["output_tokens"], r["content_chunks"], r["usage_reported"]) for r in rows} == {("ok", 4, 4, True)}
    assert all(r["t_scheduled_ns"] <= r["t_sent_ns"] < r["t_first_token_ns"] <= r["t_end_ns"] for r in rows)


def test_pacer_never_wakes_before_its_deadline():
    async def wake_times() -> list[tuple[int, int]]:
        pacer = DeadlinePacer()
        try:
            start = time.perf_counter_ns()
            pairs = []
            for step in range(1, 30):
                deadline = start + step * 300_000  # every 0.3 ms: below asyncio's 1 ms timer granularity
                await pacer.sleep_until(deadline)
                pairs.append((deadline, time.perf_counter_ns()))
            await pacer.sleep_until(start)  # a deadline already past returns at once
            return pairs
        finally:
            pacer.close()

    pairs = asyncio.run(wake_times())
    assert len(pairs) == 29 and all(woke >= deadline for deadline, woke in pairs)
