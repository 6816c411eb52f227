"""Transit kept out of the TTFT (issue 19, item 1), over real loopback HTTP with both transports:
the pool is opened before the first send (sized to the plan's peak in flight), the send is
stamped once the request is written (the call kept as `t_send_call_ns`), and a connection opened
for a request is timed apart (`connect_ms`), never inside its latency."""

import asyncio
from pathlib import Path

import httpx
import pytest

from pipeline.reference.managed_server import free_port
from pipeline.replay.pacing.engine import ReplaySettings, Target, run_replay
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.replay.transport import aio_request, request
from pipeline.tokens import count_message_tokens

MESSAGES = [{"role": "user", "content": "Why was my card declined at the shop today?"}]
TRANSPORTS = ["aiohttp", "httpx"]


def plan(n: int) -> list[PlannedRequest]:
    return [PlannedRequest(f"q{i}", None, MESSAGES, 4, count_message_tokens(MESSAGES)) for i in range(n)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_the_pool_is_opened_before_the_first_send_so_no_request_waits_for_a_connect(
    tmp_path: Path, zero_server, transport
):
    settings = ReplaySettings(mode="concurrency", concurrency=6, transport=transport)
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(plan(24), Target("ref", zero_server.base_url, "reference-model"), settings, "r", journal)
    rows = journal_to_table(journal.path).to_pylist()
    assert stats.errors == 0 and stats.pool_connections == stats.pool_connections_wanted == 6
    assert stats.pool_setup_ms > 0
    assert [row["connect_ms"] for row in rows] == [None] * 24  # every request found a connection ready
    for row in rows:
        assert row["t_send_call_ns"] <= row["t_sent_ns"] <= row["t_first_byte_ns"] <= row["t_first_token_ns"]
        assert row["ttft_ms"] == (row["t_first_token_ns"] - row["t_sent_ns"]) / 1e6


async def _two_sends(transport: str, url: str):
    body = request.chat_body("reference-model", MESSAGES, 4)
    if transport == "aiohttp":
        async with aio_request.make_session(5.0) as session:
            return [await aio_request.send_chat(session, url, body, {}, 5.0) for _ in range(2)]
    async with httpx.AsyncClient(trust_env=False) as client:
        return [await request.send_chat(client, url, body, {}, 5.0) for _ in range(2)]


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_connection_opened_for_a_request_is_timed_apart_and_the_send_stamped_once_written(zero_server, transport):
    first, second = asyncio.run(_two_sends(transport, Target("ref", zero_server.base_url, "m").chat_url))
    assert first.error_type is None and second.error_type is None
    assert first.connect_ns is not None and first.connect_ns > 0  # a fresh pool: this one connected
    # the connect happened between the call and the written request, so the latency excludes it
    assert first.t_sent_ns - first.t_send_call_ns >= first.connect_ns
    assert second.connect_ns is None  # kept alive: the second reused it
    assert second.t_send_call_ns <= second.t_sent_ns <= second.t_first_byte_ns


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_a_candidate_that_refuses_connections_still_gets_one_typed_row_per_request(tmp_path: Path, transport):
    settings = ReplaySettings(mode="concurrency", concurrency=2, transport=transport, request_timeout_s=2.0)
    target = Target("down", f"http://127.0.0.1:{free_port()}/v1", "m")
    with Journal(tmp_path / "journal.jsonl") as journal:
        stats = run_replay(plan(3), target, settings, "r", journal)
    rows = journal_to_table(journal.path).to_pylist()
    assert stats.pool_connections == 0 and stats.pool_connections_wanted == 2
    assert [row["error_type"] for row in rows] == ["connect_error"] * 3
    assert all(row["t_sent_ns"] == row["t_send_call_ns"] for row in rows)  # nothing was written
