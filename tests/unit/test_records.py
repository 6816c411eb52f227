"""Each metric as a small unit with a hand-computed answer (docs/statistics.md, "Definitions")."""

from datetime import UTC, datetime

from pipeline.replay.recording.records import RequestOutcome, build_record, e2e_ms, itl_ms, tpot_ms, ttft_ms

WHEN = datetime(2026, 11, 29, tzinfo=UTC)


def test_ttft_is_send_to_first_content_chunk():
    assert ttft_ms(t_sent_ns=100_000_000, t_first_token_ns=110_000_000) == 10.0


def test_e2e_is_send_to_end_of_stream():
    assert e2e_ms(t_sent_ns=0, t_end_ns=2_500_000) == 2.5


def test_itl_is_the_gaps_between_consecutive_chunks():
    assert itl_ms([0, 1_000_000, 4_000_000, 4_500_000]) == [1.0, 3.0, 0.5]
    assert itl_ms([7]) == []


def test_tpot_divides_decode_time_by_tokens_after_the_first():
    assert tpot_ms(e2e=110.0, ttft=10.0, output_tokens=5) == 25.0
    assert tpot_ms(e2e=110.0, ttft=10.0, output_tokens=1) is None
    assert tpot_ms(e2e=110.0, ttft=10.0, output_tokens=None) is None


def _record(outcome: RequestOutcome) -> dict:
    return build_record(
        run_id="r1",
        candidate="c",
        request_id="q1",
        scheduled_offset_s=1.0,
        t_scheduled_ns=900,
        prompt_tokens_client=12,
        max_tokens=4,
        outcome=outcome,
    )


def test_record_derives_figures_from_lifecycle_and_prefers_server_usage():
    outcome = RequestOutcome(
        t_sent_ns=1_000,
        sent_at=WHEN,
        t_end_ns=41_001_000,
        t_first_byte_ns=2_000,
        chunk_times_ns=[10_001_000, 20_001_000, 30_001_000, 40_001_000],
        http_status=200,
        prompt_tokens=11,
        output_tokens=4,
        output_tokens_client=5,
    )
    record = _record(outcome)
    assert record["schedule_lag_ms"] == 0.0001
    assert record["ttft_ms"] == 10.0
    assert record["e2e_ms"] == 41.0
    assert record["tpot_ms"] == (41.0 - 10.0) / 3
    assert record["itl_ms"] == [10.0, 10.0, 10.0]
    assert record["output_tokens"] == 4 and record["output_tokens_client"] == 5
    assert record["chunk_offsets_ns"] == [10_000_000, 20_000_000, 30_000_000, 40_000_000]
    assert record["status"] == "ok" and record["error_type"] is None


def test_failed_request_keeps_timestamps_but_has_no_latency_figures():
    outcome = RequestOutcome(t_sent_ns=0, sent_at=WHEN, t_end_ns=5_000_000, http_status=503, error_type="http_5xx")
    record = _record(outcome)
    assert record["status"] == "error" and record["error_type"] == "http_5xx" and record["http_status"] == 503
    assert record["ttft_ms"] is None and record["e2e_ms"] is None and record["tpot_ms"] is None
    assert record["t_end_ns"] == 5_000_000


def test_ttft_and_e2e_from_the_schedule_count_the_late_send():
    outcome = RequestOutcome(
        t_sent_ns=1_000_900, sent_at=WHEN, t_end_ns=9_000_900, chunk_times_ns=[3_000_900], http_status=200
    )
    record = _record(outcome)  # planned at 900 ns, sent 1 ms late
    assert record["schedule_lag_ms"] == 1.0
    assert record["ttft_ms"] == 2.0 and record["ttft_from_schedule_ms"] == 3.0
    assert record["e2e_ms"] == 8.0 and record["e2e_from_schedule_ms"] == 9.0
    outcome.error_type = "http_5xx"
    failed = _record(outcome)
    assert failed["ttft_from_schedule_ms"] is None and failed["e2e_from_schedule_ms"] is None


def test_the_send_call_and_a_connection_set_up_are_recorded_apart_from_the_latency():
    outcome = RequestOutcome(
        t_sent_ns=2_000_000, sent_at=WHEN, t_end_ns=9_000_000, chunk_times_ns=[5_000_000], http_status=200
    )
    outcome.t_send_call_ns, outcome.connect_ns = 500_000, 1_200_000
    record = _record(outcome)
    assert record["t_send_call_ns"] == 500_000 and record["connect_ms"] == 1.2
    assert record["ttft_ms"] == 3.0  # from the written request, not from the call
