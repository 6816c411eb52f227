"""The capacity at the SLA: per candidate, the highest load still meeting the SLA, what it serves
there (requests/s and output tokens/s, with the intervals the throughput query computed at that
level), and the bracket around the knee (last level met, first level missed).

The rows are a reshaping of `sweep_summary` (sql/sweep_summary.sql, one row per candidate): its
highest SLA-meeting level is the bracket's lower end, its first missing level the upper end, the
very rule the capacity search bisected with (pipeline/replay/conditions/capacity_search.py `bracket`). So the
rows re-compute from the raw timings alone (`loadproof verify`), except why a search that did not
close its bracket stopped (a bound was hit: a fact of the run, not of its timings), which comes
from the search's own record (sweep_replay.json, `search`).

`bracket_closed` is re-judged from the levels with the search's precision rule; a level list (no
search) is judged with the default precision, and says why it is not closed in its own words.
Where no level met the SLA, the reason adds what the lowest level's requests met (a single
request at a time that still misses says by how much).

Each row also sizes the deployment (pipeline/analysis/sizing/replicas.py): the fraction of the production
load carried at the SLA, the replicas for that load and its peak (the prompt profile's
peak-to-mean ratio), and the cost per useful decision at that replica count; and, with an SLO
tier per user (`sla.per_user`), the users at it and the cost per user-hour
(pipeline/analysis/sizing/users_at_tier.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.analysis.sizing.replicas import HOURLY, SIZING_COLUMNS, TOKENS, sizing
from pipeline.analysis.sizing.users_at_tier import TIER_COLUMNS, tier_columns
from pipeline.contracts import PROMPT_PROFILE, SWEEP_REPLAY, SWEEP_SUMMARY
from pipeline.replay.conditions.capacity_search import SearchBounds, is_closed
from pipeline.replay.conditions.sweep import KNOB_SETTING
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
    "no_steady_window",  # why the SLA level's window is not steady (its figures carry it); None: steady
    *SIZING_COLUMNS,
    *TIER_COLUMNS,
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
        return str(recorded["reason"]) + (_lowest_level(row) if last_met is None else "")
    searched = spec.workload.replay.sweep is not None and spec.workload.replay.sweep.search is not None
    where = "capacity search" if searched else "level list"
    if last_met is None:
        return f"{where}: no level met the SLA" + _lowest_level(row)
    if first_missed is None:
        return (
            f"{where}: no level missed the SLA up to {row['max_sla_load_level_label']} (the capacity is a lower bound)"
        )
    return (
        f"{where}: met at {row['max_sla_load_level_label']}, first missed at {row['first_missing_load_level_label']}: "
        f"wider than the precision (ratio {first_missed / last_met:.3g}, above {within:.3g})"
    )


def _lowest_level(row: dict) -> str:
    """What the lowest level run met, where no level met the SLA (a packed row before these
    columns: nothing)."""
    if row.get("min_load_level_label") is None:
        return ""

    def number(value, unit: str = "") -> str:
        return "—" if value is None else f"{value:,.4g}{unit}"

    requests, peak = number(row.get("requests_in_window_at_min_load")), number(row.get("peak_concurrency_at_min_load"))
    ttft, e2e = number(row.get("ttft_ms_p50_at_min_load"), " ms"), number(row.get("e2e_ms_p50_at_min_load"), " ms")
    attainment = number(row.get("sla_attainment_at_min_load"))
    return (
        f"; at the lowest level run, {row['min_load_level_label']}: {requests} request(s) in the window, at most "
        f"{peak} in flight, TTFT p50 {ttft}, E2E p50 {e2e}, SLA attainment {attainment}"
    )


def pricing(spec: Spec, candidate: str) -> str:
    """hourly (a per-hour price: scales with replicas) or tokens (a per-token price)."""
    price = next((c.price for c in spec.candidates if c.name == candidate), None)
    return HOURLY if price is not None and price.usd_per_hour is not None else TOKENS


def capacity_rows(
    spec: Spec, summary_rows: list[dict], searches: dict | None, peak_to_mean: float | None = None
) -> list[dict]:
    """One row per candidate of `sweep_summary` (CAPACITY_COLUMNS); `searches`: the search's record
    per candidate (sweep_replay.json `search`; None for a level list); `peak_to_mean`: the
    production sample's busiest arrival-rate bin over its mean (the prompt profile's; None: no
    replicas for the peak)."""
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
                "no_steady_window": row.get("no_steady_window_at_max_sla_load"),
                **sizing(row, pricing(spec, row["candidate"]), peak_to_mean),
                **tier_columns(spec, row, precision(spec)),
            }
        )
    return rows


def peak_to_mean_of(root: Path) -> float | None:
    """The prompt profile's peak-to-mean arrival ratio in a partition or pack folder (None without it)."""
    path = root / PROMPT_PROFILE.path
    if not path.is_file():
        return None
    table = pq.read_table(path)
    if "peak_to_mean_ratio" not in table.schema.names or table.num_rows == 0:
        return None
    value = table.column("peak_to_mean_ratio")[0].as_py()
    return float(value) if value is not None else None


def capacity_of_folder(root: Path, spec: Spec) -> pa.Table:
    """`data/capacity.parquet` of a partition folder: the rows from its sweep summary and the
    search's record (no rows without a sweep)."""
    summary, record = root / SWEEP_SUMMARY.path, root / SWEEP_REPLAY.path
    if spec.workload.replay.sweep is None or not summary.is_file():
        return pa.table({"candidate": pa.array([], pa.string())})
    searches = json.loads(record.read_text()).get("search") if record.is_file() else None
    rows = capacity_rows(spec, pq.read_table(summary).to_pylist(), searches, peak_to_mean_of(root))
    return pa.Table.from_pylist(rows)
