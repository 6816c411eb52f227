"""Hand-built raw-timing rows: one request's lifecycle from send, TTFT and E2E in ns."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.replay.recording.records import RequestOutcome, build_record

S = 1_000_000_000


MS = 1_000_000


def record(
    request_id: str,
    sent_ns: int,
    chunks_ns: list[int],
    end_ns: int,
    *,
    prompt_tokens: int = 10,
    max_tokens: int | None = None,
    error: str | None = None,
    late_ns: int = 0,
    reasoning: int = 0,
    tool_call_valid: bool | None = None,
    structured_output_valid: bool | None = None,
) -> dict:
    """One raw-timing row: sent at `sent_ns` (`late_ns` after its planned send), token chunks at
    `chunks_ns` (the first `reasoning` of them reasoning, reported so in usage), ended at `end_ns`
    (a failed request has no chunks and no server counts); the reply's validity flags as given."""
    outcome = RequestOutcome(
        t_sent_ns=sent_ns,
        sent_at=datetime(2026, 11, 29, tzinfo=UTC),
        t_end_ns=end_ns,
        t_first_byte_ns=sent_ns + 1,
        chunk_times_ns=chunks_ns,
        http_status=500 if error else 200,
        error_type=error,
        prompt_tokens=None if error else prompt_tokens,
        output_tokens=None if error else len(chunks_ns),
        output_tokens_client=0 if error else len(chunks_ns),
        t_first_output_ns=chunks_ns[reasoning] if len(chunks_ns) > reasoning else None,
        reasoning_chunks=min(reasoning, len(chunks_ns)),
        reasoning_tokens=None if error else min(reasoning, len(chunks_ns)),
        tool_call_valid=tool_call_valid,
        structured_output_valid=structured_output_valid,
    )
    return build_record(
        run_id="r",
        candidate="c",
        request_id=request_id,
        scheduled_offset_s=sent_ns / S,
        t_scheduled_ns=sent_ns - late_ns,
        prompt_tokens_client=prompt_tokens,
        max_tokens=len(chunks_ns) if max_tokens is None else max_tokens,
        outcome=outcome,
    )


def timing(
    request_id: str,
    sent_ns: int,
    ttft_ns: int,
    e2e_ns: int,
    tokens: int = 100,
    error: str | None = None,
    late_ns: int = 0,
    **stream,
) -> dict:
    """A request whose `tokens` chunks are spread evenly from TTFT to E2E, sent `late_ns` after its
    plan; `stream`: record()'s reasoning count and validity flags."""
    chunks = [] if error else [sent_ns + ttft_ns + (e2e_ns - ttft_ns) * i // (tokens - 1) for i in range(tokens)]
    return record(
        request_id, sent_ns, chunks, sent_ns + e2e_ns, max_tokens=tokens, error=error, late_ns=late_ns, **stream
    )
