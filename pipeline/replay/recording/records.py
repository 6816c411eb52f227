"""One raw-timing record per replayed request: lifecycle timestamps kept, figures derived from them;
and the two things a record is built from, the planned request and the outcome of its exchange.

The record's columns are `RAW_TIMING_RECORD_SCHEMA` in pipeline/contracts/ (ARCHITECTURE.md,
"Raw timings and sweep timings"): fixed names must not be renamed; add columns freely, there and here.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING

from pipeline.tokens import count_tokens

if TYPE_CHECKING:
    from pipeline.tokens.tokenizers import Tokenizer

# llama.cpp's per-request `timings` object (its fields) → the raw-timing columns that keep them
SERVER_TIMING_FIELDS = {
    "prompt_n": "server_prompt_n",
    "cache_n": "server_cache_n",
    "prompt_ms": "server_prompt_ms",
    "predicted_n": "server_predicted_n",
    "predicted_ms": "server_predicted_ms",
}


@dataclass(frozen=True)
class PlannedRequest:
    """One request of the replay plan, as the replay sends it."""

    request_id: str
    scheduled_offset_s: float | None
    messages: list[dict]
    max_tokens: int
    prompt_tokens_client: int
    min_tokens: int | None = None  # sent (with ignore_eos) only when the spec asks for it
    # sessions (pipeline/replay/pacing/sessions.py): a turn with `follows_request_id` is sent
    # `think_time_s` after that request ended, with the conversation so far
    session_id: str | None = None
    session_turn: int | None = None
    follows_request_id: str | None = None
    think_time_s: float | None = None
    history_turns: int | None = None  # set when sent: earlier exchanges carried
    labelled_item_id: str | None = None  # accuracy mixed into the load: sent at temperature 0, reply kept
    # the setting of the tokenizer the plan was fitted under (the plan's `tokenizer` column): a
    # reply without usage is counted with it where it is a real one loaded here (hf, gguf)
    tokenizer: str | None = None
    # the logged request fields as sent (tools, response_format, temperature, ...; the plan's `request_fields`)
    request_fields: dict | None = None


@dataclass
class RequestOutcome:
    """What one HTTP exchange produced; timestamps are time.perf_counter_ns() readings.

    `t_sent_ns` is when the request went onto the socket, at the write carrying it (latency starts there);
    `t_send_call_ns` when the send was called, before any pool wait or connection set-up (the
    stamp `t_sent_ns` was before issue 19); `connect_ns` the set-up of a connection opened for
    this request, None when it reused one."""

    t_sent_ns: int
    sent_at: datetime
    t_end_ns: int
    t_send_call_ns: int | None = None
    connect_ns: int | None = None
    t_first_byte_ns: int | None = None
    chunk_times_ns: list[int] = field(default_factory=list)
    http_status: int | None = None
    error_type: str | None = None
    error_message: str | None = None
    error_from_server: bool = False  # error_message is the server's own text (withheld under privacy.text hash, drop)
    prompt_tokens: int | None = None
    output_tokens: int | None = None
    output_tokens_client: int | None = None
    # the real tokenizer `output_tokens_client` was counted with (its name); None: loadproof-approx
    output_tokens_counter: str | None = None
    cached_tokens: int | None = None  # usage.prompt_tokens_details.cached_tokens, where reported
    usage_issue: str | None = None
    finish_reason: str | None = None
    retry_after_s: float | None = None
    reply_text: str | None = (
        None  # the answer received: a session's next turn carries it; recorded for labelled requests only
    )
    # what the stream carried besides answer text (reply_reading.StreamReader)
    t_first_output_ns: int | None = None  # the first answer or tool-call chunk
    reasoning_chunks: int = 0
    tool_call_chunks: int = 0
    tool_calls: int = 0
    reasoning_tokens: int | None = None  # usage.completion_tokens_details.reasoning_tokens
    # the reasoning text's count under the plan's real tokenizer, where usage does not give it
    reasoning_tokens_counted: int | None = None
    reasoning_tokens_counter: str | None = None
    # the reply's tool calls ({"name", "arguments"}) and its validity flags (reply_validity.py): the
    # calls and every text below are read, never recorded
    tool_call_pieces: list[dict] | None = None
    tool_call_valid: bool | None = None
    structured_output_valid: bool | None = None
    # every token's text (reasoning, answer, tool calls) and the reasoning's: counted, never recorded
    streamed_text: list[str] | None = None
    reasoning_text: str | None = None
    # the server's own per-request account (llama.cpp's `timings`; reply_reading.server_timings)
    server_timings: dict[str, float | int] = field(default_factory=dict)
    # no response, and the transport saw that the server did not take the request: it could not be
    # written whole, or the server closed the connection (FIN), not reset it (RST); not recorded
    request_not_taken: bool = False


def _ms(ns: int) -> float:
    return ns / 1e6


def ttft_ms(t_sent_ns: int, t_first_token_ns: int) -> float:
    """TTFT: send to the first chunk carrying a token of any kind (answer, reasoning, tool call);
    TTFO is the same with the first answer or tool-call chunk."""
    return _ms(t_first_token_ns - t_sent_ns)


def e2e_ms(t_sent_ns: int, t_end_ns: int) -> float:
    """E2E: send to the end of the stream."""
    return _ms(t_end_ns - t_sent_ns)


def from_schedule_ms(t_scheduled_ns: int, t_ns: int) -> float:
    """A latency from the planned send time rather than the actual one: a request the client sent
    late still counts its wait in the client's queue (no coordinated omission)."""
    return _ms(t_ns - t_scheduled_ns)


def itl_ms(chunk_times_ns: list[int]) -> list[float]:
    """ITL: the gaps between consecutive token chunks (of every kind)."""
    return [_ms(b - a) for a, b in zip(chunk_times_ns, chunk_times_ns[1:])]


def tpot_ms(e2e: float, ttft: float, output_tokens: int | None) -> float | None:
    """TPOT: (E2E − TTFT) / (output tokens − 1); undefined for fewer than two tokens. The output
    tokens are the ones the stream timed: a server that reports reasoning tokens it never
    streams (hidden reasoning) has them taken out first (`timed_output_tokens`)."""
    if output_tokens is None or output_tokens < 2:
        return None
    return (e2e - ttft) / (output_tokens - 1)


def timed_output_tokens(output_tokens: int | None, outcome: RequestOutcome) -> int | None:
    """The output tokens the stream's timing covers: all of them, less reasoning tokens that usage
    reports but no reasoning chunk carried (a model that reasons without streaming it: those
    tokens were generated before the first chunk, inside TTFT)."""
    if output_tokens is None or outcome.reasoning_chunks or not outcome.reasoning_tokens:
        return output_tokens
    return max(output_tokens - outcome.reasoning_tokens, 0)


def reasoning_count(outcome: RequestOutcome) -> tuple[int | None, str | None]:
    """The reply's reasoning tokens and their source: usage's count, else the reasoning text
    under the plan's real tokenizer, else loadproof-approx's count of it (`tokenizer:approx`);
    0 from the chunks when no reasoning was streamed nor reported. None for a failed request
    that streamed none."""
    if outcome.reasoning_tokens is not None:
        return outcome.reasoning_tokens, USAGE
    if outcome.reasoning_tokens_counter is not None:
        return outcome.reasoning_tokens_counted, f"tokenizer:{outcome.reasoning_tokens_counter}"
    if outcome.reasoning_text:
        return count_tokens(outcome.reasoning_text), "tokenizer:approx"
    return (0, CHUNKS) if outcome.error_type is None else (None, None)


# how `output_tokens` was counted, and how far the count may sit from the server's own: a count
# of record from the server (`usage`), or a client-side stand-in where usage is missing — a real
# tokenizer over the reply text (`tokenizer:<name>`), else the content chunks (`chunks`, at least
# one token each: never more than the server generated). Older files read as NULL.
USAGE, CHUNKS = "usage", "chunks"


def output_count(outcome: RequestOutcome) -> tuple[int | None, str]:
    """The reply's output tokens and their source (above)."""
    if outcome.output_tokens is not None:
        return outcome.output_tokens, USAGE
    if outcome.output_tokens_counter is not None:
        return outcome.output_tokens_client, f"tokenizer:{outcome.output_tokens_counter}"
    return len(outcome.chunk_times_ns), CHUNKS


def tool_definition_tokens(request_fields: dict | None, counter: Tokenizer | None, seen: dict[str, int]) -> int | None:
    """The offered tools' definitions as JSON text, counted under the plan's tokenizer where it is a
    local one (else loadproof-approx): the prompt tokens the tools add, which `prompt_tokens_client`
    (the messages' count) leaves out. The reference endpoint counts exactly this text; a real chat
    template wraps tools its own way, an overhead not measured. None when no tools were offered;
    `seen` keeps each distinct definition's count (the same tools are counted once per replay)."""
    tools = (request_fields or {}).get("tools")
    if not tools:
        return None
    text = json.dumps(tools, ensure_ascii=False)
    if text not in seen:
        seen[text] = counter.count_text(text) if counter is not None else count_tokens(text)
    return seen[text]


def build_record(
    *,
    run_id: str,
    candidate: str,
    request_id: str,
    scheduled_offset_s: float | None,
    t_scheduled_ns: int,
    prompt_tokens_client: int,
    max_tokens: int,
    outcome: RequestOutcome,
    attempts: list[dict] | None = None,
    labelled_item_id: str | None = None,
) -> dict:
    chunks = outcome.chunk_times_ns
    ok = outcome.error_type is None
    first = chunks[0] if chunks else None
    output_tokens, output_tokens_source = output_count(outcome)
    reasoning_tokens, reasoning_source = reasoning_count(outcome)
    ttft = ttft_ms(outcome.t_sent_ns, first) if ok and first is not None else None
    first_output = outcome.t_first_output_ns
    e2e = e2e_ms(outcome.t_sent_ns, outcome.t_end_ns) if ok else None
    return {
        "run_id": run_id,
        "candidate": candidate,
        "request_id": request_id,
        "scheduled_offset_s": scheduled_offset_s,
        "sent_at": outcome.sent_at,
        "schedule_lag_ms": _ms(outcome.t_sent_ns - t_scheduled_ns),
        "ttft_ms": ttft,
        "e2e_ms": e2e,
        "ttft_from_schedule_ms": from_schedule_ms(t_scheduled_ns, first)
        if first is not None and ttft is not None
        else None,
        "e2e_from_schedule_ms": from_schedule_ms(t_scheduled_ns, outcome.t_end_ns) if e2e is not None else None,
        "tpot_ms": tpot_ms(e2e, ttft, timed_output_tokens(output_tokens, outcome))
        if ttft is not None and e2e is not None
        else None,
        "itl_ms": itl_ms(chunks) if ok else None,
        "prompt_tokens": outcome.prompt_tokens,
        "output_tokens": output_tokens,
        "prompt_tokens_client": prompt_tokens_client,
        "output_tokens_client": outcome.output_tokens_client,
        "output_tokens_source": output_tokens_source,
        "cached_tokens": outcome.cached_tokens,
        "max_tokens": max_tokens,
        "status": "ok" if ok else "error",
        "error_type": outcome.error_type,
        "error_message": outcome.error_message,
        "http_status": outcome.http_status,
        "retry_count": max(0, len(attempts or []) - 1),
        "content_chunks": len(chunks),
        "usage_reported": outcome.prompt_tokens is not None,
        "usage_issue": outcome.usage_issue,
        "finish_reason": outcome.finish_reason,
        "retry_after_s": outcome.retry_after_s,
        "t_scheduled_ns": t_scheduled_ns,
        "t_sent_ns": outcome.t_sent_ns,
        "t_send_call_ns": outcome.t_send_call_ns,
        "connect_ms": _ms(outcome.connect_ns) if outcome.connect_ns is not None else None,
        "t_first_byte_ns": outcome.t_first_byte_ns,
        "t_first_token_ns": first,
        "t_last_token_ns": chunks[-1] if chunks else None,
        "t_end_ns": outcome.t_end_ns,
        "chunk_offsets_ns": [t - outcome.t_sent_ns for t in chunks],
        "attempts_json": json.dumps(attempts) if attempts and len(attempts) > 1 else None,
        "labelled_item_id": labelled_item_id,
        "reply_text": outcome.reply_text if labelled_item_id is not None else None,
        "reasoning_chunks": outcome.reasoning_chunks,
        "tool_call_chunks": outcome.tool_call_chunks,
        "tool_calls": outcome.tool_calls,
        "t_first_output_ns": first_output,
        "ttfo_ms": ttft_ms(outcome.t_sent_ns, first_output) if ok and first_output is not None else None,
        "reasoning_tokens": reasoning_tokens,
        "reasoning_tokens_source": reasoning_source,
        "tool_call_valid": outcome.tool_call_valid,
        "structured_output_valid": outcome.structured_output_valid,
        **{column: outcome.server_timings.get(column) for column in SERVER_TIMING_FIELDS.values()},
    }
