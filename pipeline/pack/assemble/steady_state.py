"""The pack's steady-state section: each candidate's production-load window as the steady-state
tests found it (pipeline/analysis/steady_state.py), read from the throughput table's `steady_*`
columns — nothing is computed here. A pack whose throughput table predates the tests has none."""

from __future__ import annotations

import json


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
    """The tests of the window the figures read, in one line: 'trend TPOT p 0.48 ✓, …'."""
    last = max((t["pass_number"] for t in row["tests"]), default=1)
    return "; ".join(
        f"{'trend' if t['test'].startswith('trend') else 'level shift'} "
        f"{t['series'].split('_')[0].upper()} p = {t['p_value']:.2g} {t['decision']}"
        for t in row["tests"]
        if t["pass_number"] == last
    )
