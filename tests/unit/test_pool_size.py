"""How many connections the replay opens before its first send: the plan's peak in flight."""

from pipeline.replay.pacing.engine import POOL_CAP, ReplaySettings, expected_peak_in_flight
from pipeline.replay.recording.records import PlannedRequest


def plan(offsets: list[float | None]) -> list[PlannedRequest]:
    return [PlannedRequest(f"q{i}", offset, [], 1, 1) for i, offset in enumerate(offsets)]


def test_the_closed_loop_opens_one_connection_per_stream():
    assert expected_peak_in_flight(plan([None] * 50), ReplaySettings(mode="concurrency", concurrency=8)) == 8
    assert expected_peak_in_flight(plan([None] * 3), ReplaySettings(mode="concurrency", concurrency=8)) == 3


def test_the_open_loop_opens_the_most_sends_planned_inside_one_second():
    burst = [0.0, 0.1, 0.2, 5.0, 5.1, 5.2, 5.3, 5.9, 6.5]  # 5.0 … 5.9: five sends inside one second
    assert expected_peak_in_flight(plan(burst), ReplaySettings(mode="trace")) == 5
    assert expected_peak_in_flight(plan(burst), ReplaySettings(mode="trace", max_concurrency=2)) == 2


def test_the_pool_is_bounded():
    assert expected_peak_in_flight(plan([0.0] * (POOL_CAP + 5)), ReplaySettings(mode="rate")) == POOL_CAP
    assert expected_peak_in_flight(plan([]), ReplaySettings(mode="trace")) == 1
