"""The two checks on how streams were read: tokens the server counted but the client never saw
fail the run (the issue's reasoning case: 30 counted, 10 seen), batching and hidden reasoning do
not; buffered output (zero gaps at a real per-token time) is flagged, an instant server is not."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pandas as pd
import pytest

from pipeline.quality.expectations import stream_frame, stream_gaps_suite, stream_tokens_seen_suite, validate
from pipeline.replay.reading.reply_reading import StreamError, StreamReader
from pipeline.replay.recording.records import RequestOutcome


def _row(request_id: str, **overrides) -> dict:
    row = {
        "candidate": "c",
        "request_id": request_id,
        "status": "ok",
        "output_tokens": 30,
        "output_tokens_source": "usage",
        "output_tokens_client": 30,
        "content_chunks": 30,
        "reasoning_chunks": 20,
        "reasoning_tokens": 20,
        "reasoning_tokens_source": "usage",
        "tpot_ms": 10.0,
        "itl_ms": [10.0] * 29,
    }
    return {**row, **overrides}


def _frame(rows: list[dict]) -> pd.DataFrame:
    return pd.DataFrame(rows)


def test_every_token_seen_passes_and_batching_is_not_a_miss():
    rows = [_row(f"r{i}") for i in range(10)]
    # a server that puts three tokens in each chunk: 10 chunks, but the text holds 30 tokens
    rows += [_row(f"b{i}", content_chunks=10, reasoning_chunks=7, itl_ms=[30.0] * 9) for i in range(10)]
    outcome = validate(stream_tokens_seen_suite, _frame(rows), name="stream_tokens_seen")
    assert outcome.passed, outcome.metadata


def test_reasoning_the_client_did_not_see_fails_with_a_hint_that_names_the_cause():
    # the endpoint read by a client that knows only delta.content: 30 counted, 10 seen
    unseen = [
        _row(f"r{i}", output_tokens_client=10, content_chunks=10, reasoning_chunks=0, reasoning_tokens_source="chunks")
        for i in range(10)
    ]
    outcome = validate(stream_tokens_seen_suite, _frame(unseen), name="stream_tokens_seen")
    assert not outcome.passed
    [failure] = outcome.metadata["failed"]
    assert failure["unexpected_count"] == 10
    assert "did not see" in failure["hint"] and "did not see" in outcome.metadata["explanation"]
    assert stream_frame(pd.DataFrame(unseen))["unseen_token_factor"].iloc[0] == pytest.approx(3.0)


def test_reasoning_usage_reports_but_never_streams_is_not_a_miss():
    hidden = [_row(f"h{i}", output_tokens_client=10, content_chunks=10, reasoning_chunks=0) for i in range(10)]
    assert stream_frame(pd.DataFrame(hidden))["unseen_token_factor"].iloc[0] == pytest.approx(1.0)
    assert validate(stream_tokens_seen_suite, _frame(hidden), name="stream_tokens_seen").passed


def test_a_few_misses_pass_within_mostly_and_failed_requests_are_not_judged():
    rows = [_row(f"r{i}") for i in range(39)] + [_row("odd", output_tokens_client=5, content_chunks=5)]
    rows += [_row("failed", status="error", output_tokens_client=0, content_chunks=0)]
    assert validate(stream_tokens_seen_suite, _frame(rows), name="stream_tokens_seen").passed


def test_a_json_answer_is_not_judged_and_a_plain_one_with_the_same_counts_is():
    """llama-server's grammar-constrained JSON reply: 37 tokens in 16 chunks, 15 by the approximate
    count — no yardstick for missed deltas; the same counts on a plain answer are a miss."""
    json_reply = dict(output_tokens=37, output_tokens_client=15, content_chunks=16, reasoning_chunks=0)
    json_reply.update(reasoning_tokens_source="chunks", structured_output_valid=True)
    rows = [_row(f"j{i}", **json_reply) for i in range(10)]
    assert stream_frame(pd.DataFrame(rows))["unseen_token_factor"].isna().all()
    assert validate(stream_tokens_seen_suite, _frame(rows), name="stream_tokens_seen").passed
    plain = [_row(f"p{i}", **{**json_reply, "structured_output_valid": None}) for i in range(10)]
    assert not validate(stream_tokens_seen_suite, _frame(plain), name="stream_tokens_seen").passed


def test_buffered_output_is_flagged_and_an_instant_server_is_not():
    buffered = [_row(f"b{i}", itl_ms=[10.0] * 20 + [0.01] * 9 + [0.02] * 10) for i in range(10)]
    under_half = validate(stream_gaps_suite, _frame(buffered), name="stream_gaps")
    assert stream_frame(pd.DataFrame(buffered))["zero_gap_share"].iloc[0] == pytest.approx(19 / 39)
    assert under_half.passed  # under half the gaps: not a burst
    flushed = [_row(f"f{i}", itl_ms=[10.0] * 5 + [0.01] * 24) for i in range(10)]
    outcome = validate(stream_gaps_suite, _frame(flushed), name="stream_gaps")
    assert not outcome.passed and "flushes" in outcome.metadata["failed"][0]["hint"]
    instant = [_row(f"i{i}", tpot_ms=0.01, itl_ms=[0.01] * 29) for i in range(10)]
    assert validate(stream_gaps_suite, _frame(instant), name="stream_gaps").passed


def test_the_reader_counts_every_kind_of_token_and_no_empty_piece():
    """Reasoning, answer and tool-call pieces are token arrivals; a tool-call piece that carries
    only an id (no name, no argument text) and an empty content delta are not."""

    def chunk(delta: dict, finish: str | None = None) -> str:
        return json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 1, tzinfo=UTC), t_end_ns=0)
    reader = StreamReader(outcome)
    events = [
        chunk({"role": "assistant", "content": ""}),  # no token
        chunk({"reasoning_content": "Let me"}),
        chunk({"reasoning": " think"}),  # OpenRouter's key
        chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function"}]}),  # id only: no token
        chunk({"tool_calls": [{"index": 0, "function": {"name": "card_status", "arguments": ""}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"card_id": "x"}'}}]}, "tool_calls"),
        json.dumps(
            {"choices": [], "usage": {"completion_tokens": 9, "completion_tokens_details": {"reasoning_tokens": 3}}}
        ),
    ]
    for t, data in enumerate(events, start=1):
        reader.feed(data, t)
    reader.feed("[DONE]", 99)
    assert outcome.chunk_times_ns == [2, 3, 5, 6]
    assert (outcome.reasoning_chunks, outcome.tool_call_chunks, outcome.t_first_output_ns) == (2, 2, 5)
    assert outcome.finish_reason == "tool_calls" and outcome.reasoning_tokens == 3
    assert reader.tool_calls == {0: {"name": "card_status", "arguments": '{"card_id": "x"}'}}
    assert reader.streamed_text == ["Let me think", "card_status", '{"card_id": "x"}']


def test_the_reader_keeps_the_servers_own_timings_and_nothing_that_is_not_a_number():
    """llama.cpp's server sends a `timings` object on the stream's last chunk (beside usage): its
    numbers are kept by raw-timing column; a field that is not a number is left out."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 1, tzinfo=UTC), t_end_ns=0)
    reader = StreamReader(outcome)
    last = {
        "choices": [],
        "usage": {"prompt_tokens": 40, "completion_tokens": 8, "prompt_tokens_details": {"cached_tokens": 32}},
        # as llama-server 11434 writes it (tools/server/server-common.cpp server_slot_stats::to_json)
        "timings": {
            "cache_n": 32,
            "prompt_n": 8,
            "prompt_ms": 12.5,
            "prompt_per_token_ms": 1.5625,
            "predicted_n": 8,
            "predicted_ms": 70.25,
            "predicted_per_second": "fast",
        },
    }
    reader.feed(json.dumps(last), 1)
    assert outcome.cached_tokens == 32
    assert outcome.server_timings == {
        "server_cache_n": 32,
        "server_prompt_n": 8,
        "server_prompt_ms": 12.5,
        "server_predicted_n": 8,
        "server_predicted_ms": 70.25,
    }
    bad = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 1, tzinfo=UTC), t_end_ns=0)
    StreamReader(bad).feed(json.dumps({"choices": [], "timings": {"prompt_ms": "n/a", "cache_n": True}}), 1)
    assert bad.server_timings == {}


def test_a_payload_orjson_refuses_is_read_as_the_stdlib_reads_it_and_one_neither_reads_is_malformed():
    """The reader parses with orjson, which refuses a few things the stdlib's json reads (NaN, a
    lone surrogate); those are judged by the stdlib as before, so a server that writes them keeps
    its tokens, and text that is no JSON at all is still `malformed_sse`."""
    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 1, tzinfo=UTC), t_end_ns=0)
    reader = StreamReader(outcome)
    reader.feed('{"choices": [{"delta": {"content": "a"}}], "score": NaN}', 1)
    reader.feed('{"choices": [{"delta": {"content": "\\ud800b"}}]}', 2)
    assert outcome.chunk_times_ns == [1, 2] and reader.text_parts == ["a", "\ud800b"]
    with pytest.raises(StreamError) as failure:
        reader.feed("{not json", 3)
    assert failure.value.error_type == "malformed_sse"


def test_bytes_that_are_not_utf8_in_a_stream_become_replacement_characters_not_a_crash():
    """aiohttp's SSE path decodes each block of complete lines; a server that writes a byte that
    is no UTF-8 (here 0xff, inside a token) keeps its tokens and their stamps, as through httpx."""
    import asyncio
    from types import SimpleNamespace

    from pipeline.replay.transport.aio_request import _read_events

    def event(content: bytes) -> bytes:
        return b'data: {"choices": [{"delta": {"content": "' + content + b'"}}]}\n\n'

    blocks = [event(b"ok") + event(b"caf\xff"), event(b"!") + b"data: [DONE]"]

    async def iter_any():
        for block in blocks:
            yield block

    outcome = RequestOutcome(t_sent_ns=0, sent_at=datetime(2026, 12, 1, tzinfo=UTC), t_end_ns=0)
    reader = StreamReader(outcome)
    asyncio.run(_read_events(SimpleNamespace(content=SimpleNamespace(iter_any=iter_any)), reader))
    assert reader.text_parts == ["ok", "caf\ufffd", "!"] and len(outcome.chunk_times_ns) == 3
