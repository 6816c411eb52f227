"""Hand-built raw-timing rows: one request's lifecycle from send, TTFT and E2E in ns."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.replay.records import RequestOutcome, build_record

S = 1_000_000_000


MS = 1_000_000


def timing(
    request_id: str, sent_ns: int, ttft_ns: int, e2e_ns: int, tokens: int = 100, error: str | None = None
) -> dict:
    chunks = [] if error else [sent_ns + ttft_ns + (e2e_ns - ttft_ns) * i // (tokens - 1) for i in range(tokens)]
    outcome = RequestOutcome(
        t_sent_ns=sent_ns,
        sent_at=datetime(2026, 11, 29, tzinfo=UTC),
        t_end_ns=sent_ns + e2e_ns,
        t_first_byte_ns=sent_ns + 1,
        chunk_times_ns=chunks,
        http_status=500 if error else 200,
        error_type=error,
        prompt_tokens=None if error else 10,
        output_tokens=None if error else tokens,
        output_tokens_client=0 if error else tokens,
    )
    return build_record(
        run_id="r",
        candidate="c",
        request_id=request_id,
        scheduled_offset_s=sent_ns / S,
        t_scheduled_ns=sent_ns,
        prompt_tokens_client=10,
        max_tokens=tokens,
        outcome=outcome,
    )
