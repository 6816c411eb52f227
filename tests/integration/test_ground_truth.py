"""The server's own timeline against the client's measurements, at 256 concurrent streams.

No timing threshold here: the size of the client's error is printed by
`bench/client_vs_server_clock.py`. This checks what must hold whatever the machine: one clock
for both processes, every request joined, and causality (the client can only be late).
"""

from __future__ import annotations

from pathlib import Path

from bench.client_vs_server_clock import closed_loop
from pipeline.reference import ReferenceServer
from pipeline.reference.ground_truth import compare, monotonic_clock_is_shared
from pipeline.reference.timeline import read_timeline
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest
from pipeline.tokens import count_message_tokens

STREAMS = 256


def test_perf_counter_is_one_clock_across_processes() -> None:
    assert monotonic_clock_is_shared()


def test_client_timings_match_the_server_timeline_at_256_streams(tmp_path: Path) -> None:
    messages = [{"role": "user", "content": "Which fees apply to a transfer to Kenya?"}]
    plan = [PlannedRequest(f"s{i}", None, messages, 8, count_message_tokens(messages)) for i in range(STREAMS)]
    timeline = tmp_path / "timeline.jsonl"
    with ReferenceServer("large-gpu", timeline_path=timeline) as server, Journal(tmp_path / "j.jsonl") as journal:
        stats = closed_loop(plan, server, STREAMS, journal, "run-gt")
    assert stats.errors == 0 and stats.peak_in_flight == STREAMS
    rows = journal_to_table(journal.path).to_pylist()
    server_rows = read_timeline(timeline)
    assert {r["request_id"] for r in server_rows} == {r["request_id"] for r in rows}
    assert all(r["outcome"] == "ok" and r["completion_tokens"] == 8 for r in server_rows)
    pairs = compare(rows, server_rows)
    assert len(pairs) == STREAMS
    for pair in pairs:  # the client is never early: it sends first and hears last
        assert pair.request_transit_ns >= 0 and pair.first_token_transit_ns >= 0 and pair.end_transit_ns >= 0
        assert pair.ttft_error_ns >= 0 and pair.e2e_error_ns >= 0
    # the wall clock agrees with the monotonic one on the order of events
    assert all(r["arrival_unix_ns"] <= r["end_unix_ns"] for r in server_rows)
