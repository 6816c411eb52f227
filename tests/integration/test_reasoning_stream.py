"""A reasoning model behind an agent, streamed over loopback: the reference endpoint reasons for 20
tokens, then answers (or calls a tool) for 10, one token every 10 ms, and reports its reasoning
tokens in usage. Through both HTTP clients the raw timing must see every token:

- TTFT within one token gap of the server's first reasoning chunk, TTFO within one gap of its
  first answer (or tool-call) chunk — both from the server's own timeline;
- TPOT within 10 % of the true per-token time — the server's own, from its timeline (the
  profile's 10 ms, less whatever the loaded machine's event loop added) — and ITL over all 30
  tokens;
- reasoning tokens equal to the server's count; a tool call counted, its finish reason kept.
A buffering server (every output piece held back, then flushed) shows as zero gaps.

The same tests run on each API kind that carries the feature (`api`: chat, responses; completions
has no reasoning and no tools, so it runs the no-reasoning and buffering ones), with the same
assertions: one record path, the same columns."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx
import pytest
import yaml

from pipeline.reference import ReferenceServer
from pipeline.reference.faults import FAULT_HEADER
from pipeline.reference.timeline import read_timeline
from pipeline.replay.recording.records import build_record
from pipeline.replay.transport import aio_request, request
from pipeline.replay.transport.api_kinds import API_PATHS, REQUEST_BODIES

TOKEN_MS = 10.0
REASONING, ANSWER = 20, 10
PROFILE = {
    "name": "reasoning",
    "model": "reference-model",
    "prefill_ms_per_token": 0,
    "decode_ms_per_token": TOKEN_MS,
    "decode_slowdown_per_seq": 0,
    "max_running_seqs": 8,
    "reasoning": {"tokens": REASONING},
    "seed": 0,
}
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Current weather of a city",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}},
            "required": ["city", "unit"],
        },
    },
}


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reasoning")
    (folder / "reasoning.yaml").write_text(yaml.safe_dump(PROFILE))
    timeline = folder / "timeline.jsonl"
    with ReferenceServer(str(folder / "reasoning.yaml"), timeline_path=timeline) as running:
        yield running, timeline


AGENT_APIS = ["chat", "responses"]  # the kinds with reasoning and tool calls
ALL_APIS = ["chat", "completions", "responses"]


def _send(transport: str, running, api: str, body: dict, request_id: str, fault: str | None = None):
    headers = {"x-loadproof-request-id": request_id, **({FAULT_HEADER: fault} if fault else {})}
    url = running.base_url + API_PATHS[api]

    async def go():
        if transport == "aiohttp":
            async with aio_request.make_session(30) as session:
                return await aio_request.send_chat(session, url, body, headers, 30, api)
        async with httpx.AsyncClient() as client:
            return await request.send_chat(client, url, body, headers, 30, api)

    outcome = asyncio.run(go())
    return outcome, build_record(
        run_id="r",
        candidate="c",
        request_id=request_id,
        scheduled_offset_s=0.0,
        t_scheduled_ns=outcome.t_sent_ns,
        prompt_tokens_client=5,
        max_tokens=body.get("max_tokens", body.get("max_output_tokens")),
        outcome=outcome,
    )


def _served(timeline: Path, request_id: str) -> dict:
    return next(row for row in read_timeline(timeline) if row["request_id"] == request_id)


def _stamped_after(client_ns: int, served_ns: int) -> None:
    """The client stamped a chunk no earlier than the server sent it: both read the one monotonic
    clock (`time.perf_counter_ns`, CLOCK_MONOTONIC), so a stamp before the send would be a chunk the
    server had not sent yet. How late the client is depends on the machine's load: not asserted."""
    assert client_ns >= served_ns, (client_ns, served_ns)


def _body(api: str, max_tokens: int = REASONING + ANSWER, **fields) -> dict:
    """The planned request as `api` sends it; `fields` as the log carried them (chat's names)."""
    return REQUEST_BODIES[api](
        "reference-model", [{"role": "user", "content": "plan my trip"}], max_tokens, None, fields
    )


@pytest.mark.parametrize("api", AGENT_APIS)
@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_every_streamed_token_counts_reasoning_first(server, transport, api):
    running, timeline = server
    outcome, row = _send(transport, running, api, _body(api), f"think-{transport}-{api}")
    served = _served(timeline, f"think-{transport}-{api}")
    assert row["status"] == "ok" and row["finish_reason"] == "length"
    assert (row["reasoning_chunks"], row["content_chunks"], row["tool_calls"]) == (REASONING, REASONING + ANSWER, 0)
    assert row["reasoning_tokens"] == served["reasoning_tokens"] == REASONING
    assert row["reasoning_tokens_source"] == "usage" and row["output_tokens"] == REASONING + ANSWER
    sent = row["t_sent_ns"]
    # TTFT at the first reasoning chunk, TTFO at the first answer chunk (the chunk counts above say
    # which chunk is which); each stamp after the server sent that chunk (one monotonic clock), and
    # the client's TTFT stamp before its TTFO stamp
    _stamped_after(row["t_first_token_ns"], served["first_token_ns"])
    _stamped_after(row["t_first_output_ns"], served["first_output_ns"])
    assert row["t_first_token_ns"] < row["t_first_output_ns"]
    assert row["ttfo_ms"] == pytest.approx((row["t_first_output_ns"] - sent) / 1e6)
    assert row["tpot_ms"] == pytest.approx(_true_tpot_ms(served), rel=0.10)
    assert len(row["itl_ms"]) == REASONING + ANSWER - 1
    assert sum(row["itl_ms"]) == pytest.approx((served["end_ns"] - served["first_token_ns"]) / 1e6, rel=0.10)
    assert outcome.reply_text and outcome.reasoning_text and outcome.reasoning_text not in outcome.reply_text


@pytest.mark.parametrize("api", AGENT_APIS)
@pytest.mark.parametrize("transport", ["aiohttp", "httpx"])
def test_a_streamed_tool_call_is_output_and_counts(server, transport, api):
    running, timeline = server
    body = _body(api, 60, tools=[WEATHER], tool_choice="required", reasoning_effort="low")
    outcome, row = _send(transport, running, api, body, f"tool-{transport}-{api}")
    served = _served(timeline, f"tool-{transport}-{api}")
    assert row["status"] == "ok" and row["finish_reason"] == "tool_calls" and row["tool_calls"] == 1
    assert row["reasoning_tokens"] == served["reasoning_tokens"] == REASONING // 2  # low effort: half
    assert row["tool_call_chunks"] == served["completion_tokens"] - REASONING // 2
    assert row["output_tokens"] == served["completion_tokens"] == row["content_chunks"]
    _stamped_after(row["t_first_output_ns"], served["first_output_ns"])
    assert row["tpot_ms"] == pytest.approx(_true_tpot_ms(served), rel=0.10)
    assert outcome.reply_text == ""  # no answer text: the tool call is the output
    assert "get_weather" in outcome.streamed_text


@pytest.mark.parametrize("api", ALL_APIS)
def test_without_reasoning_ttfo_is_ttft(server, api):
    running, _ = server
    body = _body(api, chat_template_kwargs={"enable_thinking": False})
    _, row = _send("aiohttp", running, api, body, f"no-think-{api}")
    assert row["status"] == "ok" and row["output_tokens"] == row["content_chunks"] == REASONING + ANSWER
    assert row["reasoning_tokens"] == 0 and row["reasoning_chunks"] == 0
    assert row["ttfo_ms"] == row["ttft_ms"]


@pytest.mark.parametrize("api", ALL_APIS)
def test_a_buffering_server_flushes_the_answer_at_once(server, api):
    running, timeline = server
    _, row = _send("aiohttp", running, api, _body(api), f"buffered-{api}", fault="buffered")
    served = _served(timeline, f"buffered-{api}")
    thoughts = 0 if api == "completions" else REASONING  # a text completion does not reason
    answer_gaps = row["itl_ms"][thoughts:]  # the gaps among the answer's chunks
    assert len(answer_gaps) == REASONING + ANSWER - thoughts - 1 and max(answer_gaps) < 1.0  # flushed in one write
    _stamped_after(row["t_first_output_ns"], served["first_output_ns"])  # held to the end


def _true_tpot_ms(served: dict) -> float:
    """The server's own time per output token after the first: first token to end, per gap."""
    return (served["end_ns"] - served["first_token_ns"]) / 1e6 / (served["completion_tokens"] - 1)
