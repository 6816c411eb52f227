"""The pack's load-sweep section: every level's figures, the highest load still meeting the SLA,
its cost figure (judged against a claim like any other), and the sweep plot.

The headline figures and their verdicts are the production level's (the spec's own load); the
sweep is an extra section, so a growth question ("does it still hold at 2× our traffic?") is
answered beside the claim, never mixed into it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq

from pipeline.analysis.sweep import sweep_ran
from pipeline.pack import claims, svg
from pipeline.pack.hashing import file_ref
from pipeline.pack.layout import PackLayout
from pipeline.replay.sweep import LOAD_UNITS, production_level
from pipeline.spec import Spec


def sweep_steps() -> tuple[str, ...]:
    """Every query a sweep figure read: the headline queries per level, then the sweep's two."""
    from pipeline.pack.model import LATENCY_STEPS, THROUGHPUT_STEPS  # model builds the pack with this module

    return (
        "steady_requests",
        *LATENCY_STEPS,
        "latency_percentiles",
        *THROUGHPUT_STEPS,
        "throughput",
        "cost_per_decision",
        "sweep_levels",
        "sweep_summary",
    )


def sweep_lineage(layout: PackLayout, raw_timings_rows: int, sweep_timings_rows: int) -> tuple[dict, list[dict]]:
    """The lineage of every sweep figure, and the input file refs (raw and sweep timings)."""
    steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(sweep_steps()))]
    inputs = [
        file_ref(layout.table("raw_timings"), layout.root, raw_timings_rows),
        file_ref(layout.table("sweep_timings"), layout.root, sweep_timings_rows),
    ]
    return claims.lineage(steps, inputs), inputs


def sweep_section(
    spec: Spec, level_rows: list[dict], summary_rows: list[dict], replay_summary: dict | None, lineage: dict | None
) -> dict | None:
    """evidence_pack.json's `sweep`: None when no sweep ran."""
    if not sweep_ran(spec):
        return None
    replay = spec.workload.replay
    assert replay.sweep is not None  # sweep_ran
    drop = {"run_id"}
    return {
        "mode": replay.mode,
        "knob": replay.sweep.knob,
        "unit": LOAD_UNITS[replay.mode],
        "production_load_level": production_level(replay).value,
        "production_load_level_label": production_level(replay).label,
        "sla": {
            "ttft_ms": spec.sla.ttft_ms,
            "tpot_ms": spec.sla.tpot_ms,
            "e2e_ms": spec.sla.e2e_ms,
            "min_attainment": spec.sla.min_attainment,
            "max_error_rate": spec.sla.max_error_rate,
        },
        "levels": [{k: v for k, v in row.items() if k not in drop} for row in level_rows],
        "summary": [{k: v for k, v in row.items() if k not in drop} for row in summary_rows],
        "replay": replay_summary,
        "lineage": lineage,
    }


def read_sweep_tables(layout: PackLayout) -> tuple[list[dict], list[dict], dict | None, int]:
    """The sweep's tables from the pack folder (empty when no sweep ran)."""
    levels = _rows(layout.table("sweep_levels"))
    summary = _rows(layout.table("sweep_summary"))
    replay_path = layout.json("sweep_replay")
    replay = json.loads(replay_path.read_text()) if replay_path.is_file() else None
    sweep_path = layout.table("sweep_timings")
    rows = pq.read_metadata(sweep_path).num_rows if sweep_path.is_file() else 0
    return levels, summary, replay, rows


def _rows(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist() if path.is_file() else []


def sweep_charts(section: dict | None) -> dict[str, str | None]:
    """Requests/s, goodput and p99 TTFT against the load level, per candidate, with the SLA's
    TTFT bound and each candidate's highest SLA-meeting level marked."""
    if not section or not section["levels"]:
        return {"sweep": None}
    series: dict[str, dict[str, list]] = {}
    for row in section["levels"]:
        entry = series.setdefault(row["candidate"], {"x": [], "requests_per_s": [], "goodput": [], "ttft_p99": []})
        entry["x"].append(row["load_level"])
        entry["requests_per_s"].append(row["requests_per_s"])
        entry["goodput"].append(row["goodput_requests_per_s"])
        entry["ttft_p99"].append(row["ttft_ms_p99"])
    marked = {
        row["candidate"]: row["max_sla_load_level"]
        for row in section["summary"]
        if row.get("max_sla_load_level") is not None
    }
    labels = {row["load_level"]: row["load_level_label"] for row in section["levels"]}
    sla_ttft = section["sla"]["ttft_ms"]
    return {
        "sweep": svg.sweep(
            series,
            marked,
            labels,
            f"load level ({section['unit']})",
            {f"SLA TTFT {sla_ttft:g} ms": sla_ttft} if sla_ttft else None,
        )
    }
