"""A tiny closed-loop replay under a loopback packet capture (bench/client_vs_wire.py's machinery):
every request is found on the wire by its request-id header, each wire exchange is whole and in
order, and the client's stamps keep causal order with the kernel's (the client stamps its send
before the request reaches the wire and each receipt after the bytes passed it), within the
residual of mapping the monotonic clock onto the capture's wall clock. No timing thresholds.

Skipped, with the reason, where tcpdump is missing or the kernel refuses to capture."""

from __future__ import annotations

import pytest

from bench.client_vs_server_clock import closed_loop
from bench.wire_capture import Capture, CaptureReport, CaptureUnavailable, capture_unavailable_reason
from bench.wire_reading import WireReading, join, read_capture
from pipeline.reference import ReferenceServer
from pipeline.replay.recording.journal import Journal, journal_to_table
from pipeline.replay.recording.records import PlannedRequest

REQUESTS, CONCURRENCY, MAX_TOKENS = 8, 4, 8


@pytest.fixture(scope="module")
def captured(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[dict], WireReading, CaptureReport]:
    reason = capture_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    folder = tmp_path_factory.mktemp("wire")
    messages = [{"role": "user", "content": "Where is my parcel? " * 4}]
    plan = [PlannedRequest(f"wire-{i}", None, messages, MAX_TOKENS, 20) for i in range(REQUESTS)]
    # a timed profile: each token event is its own write, so the first token and the end differ
    with ReferenceServer("large-gpu") as server, Journal(folder / "journal.jsonl") as journal:
        capture = Capture(server.port, folder / "wire.pcap")
        try:
            capture.start()
        except CaptureUnavailable as refused:
            pytest.skip(str(refused))
        with capture:
            stats = closed_loop(plan, server, CONCURRENCY, journal, "wire")
    assert stats.errors == 0 and stats.sent == REQUESTS
    report = capture.report
    assert report is not None
    return journal_to_table(folder / "journal.jsonl").to_pylist(), read_capture(report.path, server.port), report


def test_every_request_is_found_on_the_wire_by_its_request_id(captured) -> None:
    rows, reading, report = captured
    assert report.packets_dropped == 0 and reading.connections_with_gaps == 0 and reading.truncated_frames == 0
    answered = [exchange.request_id for exchange in reading.exchanges if exchange.t_end_ns is not None]
    assert sorted(i for i in answered if i is not None) == sorted(row["request_id"] for row in rows)
    assert answered.count(None) == 1  # the capture's own sentinel request, sent after the replay
    pairs, missing = join(rows, reading, report.clock.to_wall)
    assert missing == [] and len(pairs) == REQUESTS


def test_each_exchange_is_whole_and_in_order_on_the_wire(captured) -> None:
    rows, reading, _ = captured
    chunks = {row["request_id"]: row["content_chunks"] for row in rows}
    for wire in (exchange for exchange in reading.exchanges if exchange.t_end_ns is not None and exchange.request_id):
        assert wire.stream_error is None
        assert wire.t_response_first_ns is not None and wire.t_first_token_ns is not None and wire.t_end_ns is not None
        assert wire.t_request_first_ns <= wire.t_request_last_ns <= wire.t_response_first_ns
        assert wire.t_response_first_ns <= wire.t_first_token_ns <= wire.t_end_ns
        # the wire's events read by the client's own reader: the same token events the client counted
        assert len(wire.token_times_ns) == chunks[wire.request_id] == MAX_TOKENS
        assert wire.token_times_ns == sorted(wire.token_times_ns)


def test_client_stamps_keep_causal_order_with_the_wire(captured) -> None:
    rows, reading, report = captured
    clock = report.clock
    assert clock.before.half_width_ns > 0 and clock.tolerance_ns >= clock.before.half_width_ns
    slack = clock.tolerance_ns
    on_wire = {exchange.request_id: exchange for exchange in reading.exchanges if exchange.t_end_ns is not None}
    for row in rows:
        wire = on_wire[row["request_id"]]
        assert wire.t_response_first_ns is not None and wire.t_first_token_ns is not None and wire.t_end_ns is not None
        name = row["request_id"]
        # the send is stamped as the write carrying the request is called, before its first byte is on the wire
        assert (
            clock.to_wall(row["t_send_call_ns"]) <= clock.to_wall(row["t_sent_ns"]) <= wire.t_request_first_ns + slack
        ), name
        # every receipt is stamped after the bytes it read passed the capture tap
        assert wire.t_response_first_ns <= clock.to_wall(row["t_first_byte_ns"]) + slack, name
        assert wire.t_first_token_ns <= clock.to_wall(row["t_first_token_ns"]) + slack, name
        assert wire.t_end_ns <= clock.to_wall(row["t_end_ns"]) + slack, name
    for pair in join(rows, reading, clock.to_wall)[0]:  # every token event, not only the first
        assert len(pair.token_lags_ns) == MAX_TOKENS and min(pair.token_lags_ns) >= -slack, pair.request_id


def test_ttft_and_e2e_errors_do_not_depend_on_the_clock_mapping(captured) -> None:
    rows, reading, report = captured
    mapped, _ = join(rows, reading, report.clock.to_wall)
    shifted, _ = join(rows, reading, lambda ns: report.clock.to_wall(ns) + 1_000_000)  # a mapping 1 ms off
    for one, other in zip(mapped, shifted, strict=True):
        assert (one.ttft_error_ns, one.e2e_error_ns) == (other.ttft_error_ns, other.e2e_error_ns)
        assert one.send_lead_ns - other.send_lead_ns == 1_000_000
        # the TTFT error is the send lead plus the first token's receipt lag, on each clock alone
        assert one.ttft_error_ns == one.send_lead_ns + one.first_token_lag_ns
