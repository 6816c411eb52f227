"""The pack's steady-state section: each candidate's production-load window as the steady-state
tests found it (pipeline/analysis/statistics/steady_state.py), read from the throughput table's `steady_*`
columns — nothing is computed here. A pack whose throughput table predates the tests has none."""

from __future__ import annotations

import json

SERIES = ("tpot_ms_p50", "ttft_ms_p50")  # the order the legend names them in


def steady_state_section(throughput_rows: list[dict]) -> list[dict]:
    """One row per candidate whose window was tested; [] for tables written before the tests."""
    return [
        {
            "candidate": row["candidate"],
            "steady_window": row["steady_window"],
            "reason": row.get("steady_reason"),
            "window_start_s": row.get("steady_window_start_s"),
            "window_end_s": row.get("steady_window_end_s"),
            "configured_window_start_s": row.get("configured_window_start_s"),
            "configured_window_end_s": row.get("configured_window_end_s"),
            "trimmed_bins": row.get("steady_trimmed_bins"),
            "min_length_s": row.get("steady_min_length_s"),
            "min_length_term": row.get("steady_min_length_term"),
            "tests": json.loads(row.get("steady_tests") or "[]"),
        }
        for row in throughput_rows
        if row.get("steady_window") is not None
    ]


def tests_in_words(row: dict) -> str:
    """The tests of the window the figures read, short enough for a plot's legend:
    'trend p 0.86 / 0.38, level shift p 0.97 / 0.46 (TPOT / TTFT)'; a failing p-value is starred."""
    last = max((t["pass_number"] for t in row["tests"]), default=1)
    tests = [t for t in row["tests"] if t["pass_number"] == last]
    if not tests:
        return "not tested"
    words = []
    for name in ("trend", "level shift"):
        ps = [
            f"{t['p_value']:.2g}{'*' if t['decision'] == 'fails' else ''}"
            for series in SERIES
            for t in tests
            if t["test"].startswith(name) and t["series"] == series
        ]
        words.append(f"{name} p {' / '.join(ps)}")
    return ", ".join(words) + " (TPOT / TTFT" + ("; after trimming" if last > 1 else "") + ")"


def why_not_steady(reason: str | None) -> str:
    """The reason in a few words: too short, too few replies, or a test failed."""
    reason = reason or ""
    if "shorter than its minimum length" in reason:
        return "shorter than its minimum length"
    if "fewer than" in reason:
        return "too few spans with a reply"
    return "a test fails (*)"
