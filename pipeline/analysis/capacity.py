"""The capacity at the SLA: per candidate, the highest load still meeting the SLA, what it serves
there (requests/s and output tokens/s, with the intervals the throughput query computed at that
level), and the bracket around the knee (last level met, first level missed).

The rows are a reshaping of `sweep_summary` (sql/sweep_summary.sql, one row per candidate): its
highest SLA-meeting level is the bracket's lower end, its first missing level the upper end, the
very rule the capacity search bisected with (pipeline/replay/capacity_search.py `bracket`). So the
rows re-compute from the raw timings alone (`loadproof verify`), except why a search that did not
close its bracket stopped (a bound was hit: a fact of the run, not of its timings), which comes
from the search's own record (sweep_replay.json, `search`).

`bracket_closed` is re-judged from the levels with the search's precision rule; a level list (no
search) is judged with the default precision, and says why it is not closed in its own words.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.contracts import SWEEP_REPLAY, SWEEP_SUMMARY
from pipeline.replay.capacity_search import SearchBounds, is_closed
from pipeline.replay.sweep import KNOB_SETTING
from pipeline.spec import Spec

CAPACITY_COLUMNS = (
    "candidate",
    "knob",
    "max_sla_level",
    "max_sla_level_label",
    "first_missed_level",
    "first_missed_level_label",
    "bracket_closed",
    "reason",
    "requests_per_s",
    "requests_per_s_ci_low",
    "requests_per_s_ci_high",
    "output_tokens_per_s",
    "ci_low",
    "ci_high",
    "n",
    "levels_run",
)


def precision(spec: Spec) -> float:
    """The search's precision, or the default one for a level list."""
    sweep = spec.workload.replay.sweep
    return sweep.search.precision if sweep is not None and sweep.search is not None else SearchBounds().precision


def bracket_reason(last_met_label: str, first_missed_label: str, ratio: float, within: float) -> str:
    return (
        f"bracketed: met at {last_met_label}, first missed at {first_missed_label} (ratio {ratio:.3g} ≤ {within:.3g})"
    )


def _reason(row: dict, closed: bool, spec: Spec, recorded: dict | None) -> str:
    last_met, first_missed = row["max_sla_load_level"], row["first_missing_load_level"]
    within = 1 + 2 * precision(spec)
    if closed:
        return bracket_reason(
            row["max_sla_load_level_label"], row["first_missing_load_level_label"], first_missed / last_met, within
        )
    if recorded is not None and not recorded.get("bracket_closed", True):
        return str(recorded["reason"])
    searched = spec.workload.replay.sweep is not None and spec.workload.replay.sweep.search is not None
    where = "capacity search" if searched else "level list"
    if last_met is None:
        return f"{where}: production level does not meet the SLA: no capacity at or above the spec's own load"
    if first_missed is None:
        return (
            f"{where}: no level missed the SLA up to {row['max_sla_load_level_label']} (the capacity is a lower bound)"
        )
    return (
        f"{where}: met at {row['max_sla_load_level_label']}, first missed at {row['first_missing_load_level_label']}: "
        f"wider than the precision (ratio {first_missed / last_met:.3g}, above {within:.3g})"
    )


def capacity_rows(spec: Spec, summary_rows: list[dict], searches: dict | None) -> list[dict]:
    """One row per candidate of `sweep_summary` (CAPACITY_COLUMNS); `searches`: the search's record
    per candidate (sweep_replay.json `search`; None for a level list)."""
    mode = spec.workload.replay.mode
    rows = []
    for row in summary_rows:
        last_met, first_missed = row["max_sla_load_level"], row["first_missing_load_level"]
        closed = is_closed(last_met, first_missed, precision(spec), integer=mode == "concurrency")
        recorded = (searches or {}).get(row["candidate"])
        rows.append(
            {
                "candidate": row["candidate"],
                "knob": KNOB_SETTING[mode],
                "max_sla_level": last_met,
                "max_sla_level_label": row["max_sla_load_level_label"],
                "first_missed_level": first_missed,
                "first_missed_level_label": row["first_missing_load_level_label"],
                "bracket_closed": closed,
                "reason": _reason(row, closed, spec, recorded),
                "requests_per_s": row.get("requests_per_s_at_max_sla_load"),
                "requests_per_s_ci_low": row.get("requests_per_s_at_max_sla_load_ci_low"),
                "requests_per_s_ci_high": row.get("requests_per_s_at_max_sla_load_ci_high"),
                "output_tokens_per_s": row.get("output_tokens_per_s_at_max_sla_load"),
                "ci_low": row.get("output_tokens_per_s_at_max_sla_load_ci_low"),
                "ci_high": row.get("output_tokens_per_s_at_max_sla_load_ci_high"),
                "n": row.get("requests_in_window_at_max_sla_load"),
                "levels_run": row["load_levels"],
            }
        )
    return rows


def capacity_of_folder(root: Path, spec: Spec) -> pa.Table:
    """`data/capacity.parquet` of a partition folder: the rows from its sweep summary and the
    search's record (no rows without a sweep)."""
    summary, record = root / SWEEP_SUMMARY.path, root / SWEEP_REPLAY.path
    if spec.workload.replay.sweep is None or not summary.is_file():
        return pa.table({"candidate": pa.array([], pa.string())})
    searches = json.loads(record.read_text()).get("search") if record.is_file() else None
    return pa.Table.from_pylist(capacity_rows(spec, pq.read_table(summary).to_pylist(), searches))
