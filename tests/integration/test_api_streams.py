"""The readers of each API kind against streams real servers sent (`tests/fixtures/api_streams/`,
sources in its README): each file served byte for byte over loopback, read by both transports,
must give the same record — every token event an arrival, reasoning before output, the usage
and the finish reason the stream carried. The reference endpoint's own Responses stream is held
to the recorded one's shape: the same event types, with at least the recorded keys."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import httpx
import pytest
import yaml

from pipeline.reference import ReferenceServer
from pipeline.replay.reading.reply_validity import judge_reply
from pipeline.replay.transport import aio_request, request
from pipeline.replay.transport.api_kinds import API_PATHS, REQUEST_BODIES

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "api_streams"
TEXT = "openai-stream-basic-text-responses-1.sse"
TOOL_CALL = "openai-stream-multi-tool-conversation-responses-reasoning-past-reasoning-1.sse"
FAILED = "openai-stream-unknown-error-responses-1.sse"
COMPLETIONS = "friendli-completions-chunk-object.sse"


def _events(raw: str) -> list[dict]:
    """The JSON data payloads of an SSE text ([DONE] left out)."""
    return [json.loads(line[6:]) for line in raw.splitlines() if line.startswith("data: {")]


def _recorded(name: str) -> list[dict]:
    return _events((STREAMS / name).read_text())


async def _serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    head = await reader.readuntil(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    await reader.readexactly(length)
    body = (STREAMS / lines[0].split()[1].rsplit("/", 1)[-1]).read_bytes()
    head_out = f"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: {len(body)}\r\n"
    writer.write(f"{head_out}Connection: close\r\n\r\n".encode() + body)
    await writer.drain()
    writer.close()


def _read(api: str, name: str, max_tokens: int = 64):
    """The recorded stream `name` read as `api`'s reply by each transport: (httpx's, aiohttp's)."""
    body = REQUEST_BODIES[api]("m", [{"role": "user", "content": "hi"}], max_tokens)

    async def both():
        server = await asyncio.start_server(_serve, "127.0.0.1", 0)
        url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/streams/{name}"
        async with httpx.AsyncClient(trust_env=False) as client, aio_request.make_session(5.0) as session:
            outcomes = (
                await request.send_chat(client, url, body, {}, 5.0, api),
                await aio_request.send_chat(session, url, body, {}, 5.0, api),
            )
        server.close()
        await server.wait_closed()
        return outcomes

    return asyncio.run(both())


def _record(outcome) -> dict:
    return {
        "error_type": outcome.error_type,
        "chunks": len(outcome.chunk_times_ns),
        "reasoning_chunks": outcome.reasoning_chunks,
        "tool_call_chunks": outcome.tool_call_chunks,
        "tool_calls": outcome.tool_calls,
        "prompt_tokens": outcome.prompt_tokens,
        "output_tokens": outcome.output_tokens,
        "reasoning_tokens": outcome.reasoning_tokens,
        "cached_tokens": outcome.cached_tokens,
        "finish_reason": outcome.finish_reason,
        "usage_issue": outcome.usage_issue,
        # the events' arrival order (one network block may carry many: TTFO's place among them is
        # checked event by event in tests/unit/test_api_kinds.py)
        "ordered": outcome.chunk_times_ns == sorted(outcome.chunk_times_ns)
        and outcome.t_first_output_ns in outcome.chunk_times_ns,
    }


def test_a_recorded_text_response_is_read_event_by_event():
    events = _recorded(TEXT)
    deltas = [e["delta"] for e in events if e["type"] == "response.output_text.delta"]
    usage = events[-1]["response"]["usage"]
    via_httpx, via_aiohttp = _read("responses", TEXT)
    assert len(deltas) == 60
    assert (
        _record(via_httpx)
        == _record(via_aiohttp)
        == {
            "error_type": None,
            "chunks": len(deltas),
            "reasoning_chunks": 0,
            "tool_call_chunks": 0,
            "tool_calls": 0,
            "prompt_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
            "reasoning_tokens": 0,
            "cached_tokens": 0,
            "finish_reason": "stop",
            "usage_issue": None,
            "ordered": True,
        }
    )
    done = next(e["text"] for e in events if e["type"] == "response.output_text.done")
    assert via_aiohttp.reply_text == "".join(deltas) == done


def test_a_recorded_reasoning_models_tool_call_counts_reasoning_first_then_the_call():
    events = _recorded(TOOL_CALL)
    thoughts = sum(e["type"] == "response.reasoning_summary_text.delta" for e in events)
    argument_pieces = sum(e["type"] == "response.function_call_arguments.delta" for e in events)
    usage = events[-1]["response"]["usage"]
    via_httpx, via_aiohttp = _read("responses", TOOL_CALL, max_tokens=2048)
    assert (thoughts, argument_pieces) == (79, 15)
    assert (
        _record(via_httpx)
        == _record(via_aiohttp)
        == {
            "error_type": None,
            "chunks": thoughts + 1 + argument_pieces,  # the call's added item names it: a token event
            "reasoning_chunks": thoughts,
            "tool_call_chunks": 1 + argument_pieces,
            "tool_calls": 1,
            "prompt_tokens": usage["input_tokens"],
            "output_tokens": usage["output_tokens"],
            "reasoning_tokens": usage["output_tokens_details"]["reasoning_tokens"],
            "cached_tokens": 0,
            "finish_reason": "tool_calls",
            "usage_issue": None,
            "ordered": True,
        }
    )
    arguments = next(e["arguments"] for e in events if e["type"] == "response.function_call_arguments.done")
    assert via_aiohttp.tool_call_pieces == [{"name": "search", "arguments": arguments}]
    # the offered tools, as the log carried them (chat's shape): the call is judged as chat's is
    offered = events[0]["response"]["tools"]
    chat_tools = [{"type": "function", "function": {k: t[k] for k in ("name", "parameters")}} for t in offered]
    judge_reply(via_aiohttp, {"tools": chat_tools})
    assert via_aiohttp.tool_call_valid is True


def test_a_recorded_failed_response_is_a_stream_error_event():
    via_httpx, via_aiohttp = _read("responses", FAILED)
    assert _record(via_httpx) == _record(via_aiohttp)
    assert via_aiohttp.error_type == "stream_error_event" and "unknown-error" in via_aiohttp.error_message


def test_a_vendors_completions_stream_is_read_as_text_chunks_with_usage():
    via_httpx, via_aiohttp = _read("completions", COMPLETIONS, max_tokens=10)
    assert (
        _record(via_httpx)
        == _record(via_aiohttp)
        == {
            "error_type": None,
            "chunks": 2,  # " such", " as"; the finish chunk's empty text is no token
            "reasoning_chunks": 0,
            "tool_call_chunks": 0,
            "tool_calls": 0,
            "prompt_tokens": 5,
            "output_tokens": 10,
            "reasoning_tokens": None,
            "cached_tokens": None,
            "finish_reason": "length",
            "usage_issue": None,
            "ordered": True,
        }
    )
    assert via_aiohttp.reply_text == " such as"


def test_the_same_completions_stream_read_as_chat_sees_no_token():
    """The reader is the API's: a text completion's chunks carry no `delta`, so chat's reader sees
    none of their text — which is why `api` must name the API the endpoint speaks."""
    via_httpx, _ = _read("chat", COMPLETIONS, max_tokens=10)
    assert len(via_httpx.chunk_times_ns) == 0 and via_httpx.reply_text == ""


def _reference_events(running: ReferenceServer, **fields) -> list[dict]:
    body = REQUEST_BODIES["responses"]("reference-model", [{"role": "user", "content": "hi"}], 40, None, fields)
    with httpx.Client(timeout=10) as client:
        response = client.post(running.base_url + API_PATHS["responses"], json=body)
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    lines = response.text.splitlines()
    # every event names its type in its `event:` line too, as vLLM's and OpenAI's do
    named = [line[7:] for line in lines if line.startswith("event: ")]
    events = _events(response.text)
    assert named == [e["type"] for e in events] and "data: [DONE]" not in lines
    return events


def _keys(events: list[dict]) -> dict[str, set[str]]:
    keys: dict[str, set[str]] = {}
    for event in events:
        keys.setdefault(event["type"], set()).update(event)
    return keys


@pytest.fixture(scope="module")
def reasoning_server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("responses")
    profile = {
        "name": "r",
        "model": "reference-model",
        "prefill_ms_per_token": 0,
        "decode_ms_per_token": 0.1,
        "decode_slowdown_per_seq": 0,
        "max_running_seqs": 4,
        "reasoning": {"tokens": 4},
    }
    (folder / "r.yaml").write_text(yaml.safe_dump(profile))
    with ReferenceServer(str(folder / "r.yaml")) as running:
        yield running


def test_the_reference_endpoints_text_response_has_the_recorded_shape(zero_server):
    # a JSON answer is shorter than max_output_tokens: the response completes (else: response.incomplete)
    events = _reference_events(zero_server, response_format={"type": "json_object"})
    ours, recorded = _keys(events), _keys(_recorded(TEXT))
    assert set(ours) == set(recorded)
    assert all(recorded[kind] <= ours[kind] for kind in recorded), {k: recorded[k] - ours[k] for k in recorded}
    last = events[-1]["response"]
    recorded_usage = _recorded(TEXT)[-1]["response"]["usage"]
    assert set(last["usage"]) == set(recorded_usage)
    assert {k: set(v) for k, v in last["usage"].items() if isinstance(v, dict)} == {
        k: set(v) for k, v in recorded_usage.items() if isinstance(v, dict)
    }


def test_the_reference_endpoints_tool_call_has_the_recorded_shape(reasoning_server):
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    ours = _keys(_reference_events(reasoning_server, tools=[weather], tool_choice="required"))
    recorded = _keys(_recorded(TOOL_CALL))
    calls = {"response.function_call_arguments.delta", "response.function_call_arguments.done"}
    shared = calls | {"response.output_item.added", "response.output_item.done", "response.completed"}
    assert shared <= set(ours) and shared <= set(recorded)
    assert all(recorded[kind] <= ours[kind] for kind in shared)
    assert "response.reasoning_text.delta" in ours  # vLLM streams the reasoning text itself
