"""The replay journal: one JSON line per finished request, read back into the raw-timing table."""

from __future__ import annotations

from datetime import UTC, datetime

from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import RequestOutcome, build_record


def test_a_journal_line_reads_back_as_the_record_it_was(tmp_path):
    """The journal writes each record with orjson: the send's wall-clock time, the per-token lists
    and every number come back from `journal_to_table` as they went in."""
    outcome = RequestOutcome(
        t_sent_ns=1_000, sent_at=datetime(2026, 12, 2, 6, 41, 50, 881077, tzinfo=UTC), t_end_ns=9_000_000
    )
    outcome.chunk_times_ns = [2_000_000, 2_000_000, 3_500_001]
    record = build_record(
        run_id="r",
        candidate="c",
        request_id="q-1",
        scheduled_offset_s=0.0025,
        t_scheduled_ns=500,
        prompt_tokens_client=32,
        max_tokens=3,
        outcome=outcome,
    )
    with Journal(tmp_path / "j.jsonl") as journal:
        journal.append(record)
    row = journal_to_table(tmp_path / "j.jsonl").to_pylist()[0]
    assert row["sent_at"] == outcome.sent_at
    assert row["itl_ms"] == [0.0, 1.500001] and row["chunk_offsets_ns"] == [1_999_000, 1_999_000, 3_499_001]
    assert (row["ttft_ms"], row["schedule_lag_ms"], row["e2e_ms"]) == (1.999, 0.0005, 8.999)
