"""The endpoint views' bounds check tells rows apart by each view's own keys: server_timings has a
row per candidate and request kind, server_levels per candidate and load level."""

from __future__ import annotations

from pipeline.quality.rules import endpoint_view_in_bounds


def _timing(kind: str, gap: float = 40.0) -> dict:
    return {"candidate": "gemma", "request_kind": kind, "requests": 7, "ttft_gap_ms_p50": gap}


def test_a_row_per_request_kind_passes_and_a_repeated_kind_or_a_negative_gap_fails():
    assert endpoint_view_in_bounds("server_timings", [_timing("text"), _timing("structured output")]).passed
    repeated = endpoint_view_in_bounds("server_timings", [_timing("text"), _timing("text")])
    assert not repeated.passed and repeated.metadata["repeated"] == ["gemma text"]
    negative = endpoint_view_in_bounds("server_timings", [_timing("text", gap=-3.0)])
    assert not negative.passed and "ttft_gap_ms_p50" in negative.metadata["out_of_bounds"][0]


def test_server_levels_are_told_apart_by_load_level():
    rows = [{"candidate": "c", "load_level": level, "running_mean": 1.0} for level in (1.0, 2.0)]
    assert endpoint_view_in_bounds("server_levels", rows).passed
    assert not endpoint_view_in_bounds("server_levels", rows + rows[:1]).passed
