"""The replay's two HTTP clients (aiohttp, the default, and httpx) read every reply alike: the same
error type, status, chunk count and token counts, for good replies and for each kind of fault.
A canned-bytes HTTP server on loopback plays the faults."""

from __future__ import annotations

import asyncio
import json
import socket
import struct
import time
from pathlib import Path

import httpx
import pytest

from pipeline.reference import ReferenceServer
from pipeline.reference.faults import FAULT_HEADER
from pipeline.reference.serving_profile import FAULT_KINDS
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.pacing.pacer import DeadlinePacer
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.replay.transport import aio_request, request
from pipeline.spec import SpecError, load_spec
from tests.support.specs import demo_spec_dict


def _sse(*events: str) -> bytes:
    return "".join(f"data: {event}\n\n" for event in events).encode()


def _chunk(text: str, finish_reason: str | None = None) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish_reason}]})


def _usage(prompt_tokens: int, completion_tokens: int) -> str:
    return json.dumps(
        {"choices": [], "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}}
    )


USAGE = _usage(7, 3)
GOOD = _sse(_chunk("alpha"), _chunk(" bravo"), _chunk(" cargo", "stop"), USAGE, "[DONE]")
SSE_HEADERS = "Content-Type: text/event-stream\r\n"
JSON_HEADERS = "Content-Type: application/json\r\n"
MODEL_NOT_FOUND = json.dumps(
    {
        "error": {
            "message": "The model `m` does not exist",
            "type": "invalid_request_error",
            "param": "model",
            "code": "model_not_found",
        }
    }
).encode()
TWO_CHUNKS = len(_sse(_chunk("alpha"), _chunk(" bravo")))

# path -> (status line, extra headers, body, bytes of the body actually sent or None for all)
CANNED = {
    "/good": ("200 OK", SSE_HEADERS, GOOD, None),
    "/good-crlf-multiline": (
        "200 OK",
        SSE_HEADERS,
        (
            b': a comment line\r\nevent: message\r\ndata: {"choices": [{"delta":\r\ndata: {"content": "x"}}]}\r\n\r\n'
            b"data: [DONE]\r\n\r\n"
        ),
        None,
    ),
    "/too-many": ("429 Too Many Requests", JSON_HEADERS + "Retry-After: 2\r\n", b'{"error": "slow down"}', None),
    "/server-error": ("503 Service Unavailable", "Content-Type: text/plain\r\nRetry-After: 3\r\n", b"overloaded", None),
    "/model-not-found": ("404 Not Found", JSON_HEADERS, MODEL_NOT_FOUND, None),
    "/not-found": ("404 Not Found", "Content-Type: text/plain\r\n", b"no such route", None),
    "/no-done": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), USAGE), None),
    "/truncated": ("200 OK", SSE_HEADERS, GOOD, 40),
    "/cut-mid-stream": ("200 OK", SSE_HEADERS, GOOD, TWO_CHUNKS + 12),
    "/malformed": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), "{not json", "[DONE]"), None),
    "/malformed-choice": ("200 OK", SSE_HEADERS, _sse(json.dumps({"choices": ["alpha"]}), "[DONE]"), None),
    "/error-event": (
        "200 OK",
        SSE_HEADERS,
        _sse(_chunk("alpha"), json.dumps({"error": {"message": "boom"}}), "[DONE]"),
        None,
    ),
    "/no-usage": ("200 OK", SSE_HEADERS, _sse(_chunk("alpha"), _chunk(" bravo"), "[DONE]"), None),
    "/usage-below-chunks": (
        "200 OK",
        SSE_HEADERS,
        _sse(_chunk("alpha"), _chunk(" bravo"), _chunk(" cargo", "stop"), _usage(7, 1), "[DONE]"),
        None,
    ),
    "/length-not-max-tokens": (
        "200 OK",
        SSE_HEADERS,
        _sse(_chunk("alpha"), _chunk(" bravo"), _chunk(" cargo", "length"), _usage(7, 5), "[DONE]"),
        None,
    ),
    "/after-done": ("200 OK", SSE_HEADERS, GOOD + _sse(_chunk(" ignored"), "{not json"), None),
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


TRANSPORT_ERRORS = {"stream_cut", "connection_reset", "connect_error", "read_timeout", "connect_timeout"}


def _fingerprint(outcome) -> dict:
    return {
        "error_type": outcome.error_type,
        "http_status": outcome.http_status,
        "chunks": len(outcome.chunk_times_ns),
        "prompt_tokens": outcome.prompt_tokens,
        "output_tokens": outcome.output_tokens,
        "output_tokens_client": outcome.output_tokens_client,
        "retry_after_s": outcome.retry_after_s,
        "usage_issue": outcome.usage_issue,
        "finish_reason": outcome.finish_reason,
        # the reply's own words where the shared reading typed it (a transport error's repr differs)
        "message": outcome.error_message if outcome.error_type not in TRANSPORT_ERRORS else None,
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


# path -> (error_type, content chunks, usage_issue)
EXPECTED = {
    "/good": (None, 3, None),
    "/good-crlf-multiline": (None, 1, "usage_missing"),
    "/too-many": ("http_429", 0, None),
    "/server-error": ("http_5xx", 0, None),
    "/model-not-found": ("model_not_found", 0, None),
    "/not-found": ("http_4xx", 0, None),
    "/no-done": ("stream_incomplete", 1, None),
    "/truncated": ("stream_cut", 0, None),
    "/cut-mid-stream": ("stream_cut", 2, None),
    "/malformed": ("malformed_sse", 1, None),
    "/malformed-choice": ("malformed_sse", 0, None),
    "/error-event": ("stream_error_event", 1, None),
    "/no-usage": (None, 2, "usage_missing"),
    "/usage-below-chunks": (None, 3, "usage_mismatch"),
    "/length-not-max-tokens": (None, 3, "usage_mismatch"),
    "/after-done": (None, 3, None),
    "/reset": ("connection_reset", 0, None),
}


def test_aiohttp_and_httpx_read_every_reply_and_fault_alike():
    results = asyncio.run(_both(list(EXPECTED)))
    for path, (error_type, chunks, usage_issue) in EXPECTED.items():
        via_httpx, via_aiohttp = results[path]
        assert via_aiohttp == via_httpx, path
        assert (via_aiohttp["error_type"], via_aiohttp["chunks"], via_aiohttp["usage_issue"]) == (
            error_type,
            chunks,
            usage_issue,
        ), path
        assert via_aiohttp["ordered"], path
    good = results["/good"][1]
    assert (good["output_tokens"], good["prompt_tokens"], good["finish_reason"]) == (3, 7, "stop")
    assert results["/too-many"][1]["retry_after_s"] == 2.0 and results["/too-many"][1]["http_status"] == 429
    assert results["/server-error"][1]["retry_after_s"] == 3.0 and results["/server-error"][1]["http_status"] == 503
    assert (
        results["/model-not-found"][1]["http_status"] == 404
        and "does not exist" in results["/model-not-found"][1]["message"]
    )
    assert results["/no-usage"][1]["output_tokens"] is None and results["/no-usage"][1]["output_tokens_client"] == 2
    assert results["/usage-below-chunks"][1]["output_tokens"] == 1  # the server's figure is kept, flagged
    assert results["/length-not-max-tokens"][1]["finish_reason"] == "length"
    assert results["/after-done"][1] == good


@pytest.mark.parametrize("api", ["chat", "completions", "responses"])
@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_both_transports_replay_the_same_plan_to_the_same_records(
    tmp_path: Path, zero_server, transport: str, api: str
):
    plan = [PlannedRequest(f"r{i}", i * 0.005, [{"role": "user", "content": f"hello {i}"}], 4, 2) for i in range(20)]
    with Journal(tmp_path / "j.jsonl") as journal:
        stats = run_replay(
            plan,
            Target("ref", zero_server.base_url, "reference-model", api=api),
            ReplaySettings(mode="rate", transport=transport),
            "run",
            journal,
        )
    rows = journal_to_table(tmp_path / "j.jsonl").to_pylist()
    assert stats.sent == 20 and stats.errors == 0
    assert sorted(r["request_id"] for r in rows) == sorted(f"r{i}" for i in range(20))
    assert {(r["status"], r["output_tokens"], r["content_chunks"], r["usage_reported"]) for r in rows} == {
        ("ok", 4, 4, True)
    }
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


def test_both_transports_record_the_reference_endpoints_faults_alike(tmp_path: Path):
    """Every fault the reference endpoint injects, through the real engine on each transport."""
    messages = [{"role": "user", "content": "Is my transfer to Spain still pending?"}]
    columns = (
        "status",
        "error_type",
        "usage_issue",
        "http_status",
        "content_chunks",
        "output_tokens",
        "prompt_tokens",
        "output_tokens_client",
        "finish_reason",
        "retry_after_s",
        "retry_count",
    )
    rows_by_transport = {}
    with ReferenceServer("zero") as server:
        for transport in ("aiohttp", "httpx"):
            rows = {}
            for fault in FAULT_KINDS:
                target = Target("ref", server.base_url, "reference-model", extra_headers=((FAULT_HEADER, fault),))
                journal_path = tmp_path / f"{transport}-{fault}.jsonl"
                with Journal(journal_path) as journal:
                    run_replay(
                        [PlannedRequest(fault, 0.0, messages, 8, 10)],
                        target,
                        ReplaySettings(request_timeout_s=0.5, transport=transport),
                        "run",
                        journal,
                    )
                (row,) = journal_to_table(journal_path).to_pylist()
                rows[fault] = tuple(row[column] for column in columns)
            rows_by_transport[transport] = rows
    assert rows_by_transport["aiohttp"] == rows_by_transport["httpx"]
    kinds = {fault: row[1] or row[2] for fault, row in rows_by_transport["aiohttp"].items()}
    assert kinds == {
        "5xx": "http_5xx",
        "429": "http_429",
        "reset": "connection_reset",
        "stall": "total_timeout",
        "cut": "stream_cut",
        "malformed": "malformed_sse",
        "wrong_usage": "usage_mismatch",
        "no_usage": "usage_missing",
        "model_not_found": "model_not_found",
        "buffered": None,  # every token arrives, all at once: a good reply (the zero-gap warning's case)
        "bad_tool_args": None,  # no tools offered: a plain good reply
        "overbill": None,  # a good reply whose usage over-counts the prompt: only the bill check sees it
    }


def test_the_spec_chooses_the_transport_and_refuses_an_unknown_one(write_spec):
    data = demo_spec_dict()
    assert ReplaySettings.from_spec(load_spec(write_spec(data)).spec.workload.replay, "hash").transport == "aiohttp"
    data["workload"].setdefault("replay", {})["transport"] = "httpx"
    assert ReplaySettings.from_spec(load_spec(write_spec(data)).spec.workload.replay, "hash").transport == "httpx"
    data["workload"]["replay"]["transport"] = "curl"
    with pytest.raises(SpecError, match="transport"):
        load_spec(write_spec(data))


def _answer_once_per_connection(seen: list[int], reset: bool = False):
    """Like llama.cpp's server: a streamed reply whose headers say keep-alive, and then the
    connection is no good — here closed without a word when the next request arrives on it (after
    reading it whole), so the client meets the stale connection every time, not only when it wins
    a race with the close. `reset`: closed with a reset (RST), as a server dropping a request it
    took does, not a close (FIN). `seen` gets one entry per request the server read."""

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        answered = 0
        while True:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                break
            length = next(
                (
                    int(line.split(":", 1)[1])
                    for line in head.decode().split("\r\n")
                    if line.lower().startswith("content-length:")
                ),
                0,
            )
            await reader.readexactly(length)
            seen.append(1)
            if answered:
                break
            writer.write(
                f"HTTP/1.1 200 OK\r\n{SSE_HEADERS}Content-Length: {len(GOOD)}\r\n"
                "Keep-Alive: timeout=5, max=100\r\n\r\n".encode()
            )
            writer.write(GOOD)
            await writer.drain()
            answered += 1
        if reset:
            writer.transport.get_extra_info("socket").setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0)
            )
            writer.transport.abort()
        else:
            writer.close()

    return answer


async def _two_requests_per_client(seen: list[int], reset: bool) -> list:
    """Three requests in turn from each transport (one pooled connection each), against
    `_answer_once_per_connection`."""
    server = await asyncio.start_server(_answer_once_per_connection(seen, reset), "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1/chat/completions"
    body = request.chat_body("m", [{"role": "user", "content": "hi"}], 3)
    outcomes = []
    async with httpx.AsyncClient(trust_env=False) as client, aio_request.make_session(5.0) as session:
        for _ in range(3):
            outcomes.append(await request.send_chat(client, url, body, {}, 5.0))
            outcomes.append(await aio_request.send_chat(session, url, body, {}, 5.0))
    server.close()
    await server.wait_closed()
    return outcomes


def test_a_pooled_connection_the_server_closed_is_replaced_not_counted_as_an_error():
    """Each request after the first finds its pooled connection closed before any response: it is
    sent again on a new connection (the server never saw it), ends well, and its send is stamped
    on the connection that carried it (t_send_call_ns, the first call, is earlier)."""

    seen: list[int] = []
    outcomes = asyncio.run(_two_requests_per_client(seen, reset=False))
    assert [(o.error_type, len(o.chunk_times_ns), o.output_tokens) for o in outcomes] == [(None, 3, 3)] * 6
    assert all(o.t_send_call_ns <= o.t_sent_ns < o.t_end_ns for o in outcomes)
    # the first request of each client opened its connection; each later one met a stale pooled
    # connection and was carried by a new one, whose set-up is timed
    assert all(o.connect_ns is not None for o in outcomes)


def test_a_reset_after_the_whole_request_is_recorded_not_sent_again():
    """A pooled connection reset (RST) after the server read the whole request is a server that
    dropped a request it may have taken (the reference's `reset` fault), not a stale connection:
    recorded as `connection_reset` and never sent again (the server read each request once)."""
    seen: list[int] = []
    outcomes = asyncio.run(_two_requests_per_client(seen, reset=True))
    kinds = [o.error_type for o in outcomes]
    # each transport: its first request opens a connection and ends well; its next one meets the
    # reset on that pooled connection; its third opens a new connection (the reset one was dropped)
    assert kinds == [None, None, "connection_reset", "connection_reset", None, None]
    assert len(seen) == len(outcomes)
