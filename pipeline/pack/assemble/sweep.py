"""The pack's load-sweep section: every level's figures, the highest load still meeting the SLA,
its cost figure (judged against a claim like any other), and the sweep plot.

The headline figures and their verdicts are the production level's (the spec's own load); the
sweep is an extra section, so a growth question ("does it still hold at 2× our traffic?") is
answered beside the claim, never mixed into it.
"""

from __future__ import annotations

from pipeline.contracts import RAW_TIMINGS, SWEEP_TIMINGS
from pipeline.files.hashing import file_ref
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.lineage_steps import LATENCY_STEPS, THROUGHPUT_STEPS, lineage
from pipeline.pack.render import svg
from pipeline.replay.conditions.sweep import LOAD_UNITS, production_level
from pipeline.spec import Spec


def sweep_steps() -> tuple[str, ...]:
    """Every query a sweep figure read: the headline queries per level, then the sweep's two."""
    return (
        "steady_bins",
        "steady_requests",
        *LATENCY_STEPS,
        "latency_percentiles",
        *THROUGHPUT_STEPS,
        "throughput",
        "cost_per_decision",
        "per_user_tier",
        "sweep_levels",
        "sweep_summary",
    )


def sweep_lineage(layout: PackLayout, raw_timings_rows: int, sweep_timings_rows: int) -> tuple[dict, list[dict]]:
    """The lineage of every sweep figure, and the input file refs (raw and sweep timings)."""
    steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(sweep_steps()))]
    inputs = [
        file_ref(layout.path(RAW_TIMINGS), layout.root, raw_timings_rows),
        file_ref(layout.path(SWEEP_TIMINGS), layout.root, sweep_timings_rows),
    ]
    return lineage(steps, inputs), inputs


def sweep_section(
    spec: Spec, level_rows: list[dict], summary_rows: list[dict], replay_summary: dict | None, lineage: dict | None
) -> dict | None:
    """evidence_pack.json's `sweep`: None when no sweep ran."""
    replay = spec.workload.replay
    if replay.sweep is None:  # no sweep ran (analysis.sweep.sweep_ran)
        return None
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
            "per_user": None if spec.sla.per_user is None else spec.sla.per_user.model_dump(),
        },
        "levels": [{k: v for k, v in row.items() if k not in drop} for row in level_rows],
        "summary": [{k: v for k, v in row.items() if k not in drop} for row in summary_rows],
        "replay": replay_summary,
        "lineage": lineage,
    }


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
    labels = _spaced({row["load_level"]: row["load_level_label"] for row in section["levels"]})
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


def _spaced(labels: dict[float, str], share: float = 0.06) -> dict[float, str]:
    """The tick labels that do not overlap on the linear load axis: from the lightest level up,
    each kept label at least `share` of the axis from the last one kept (a search's bisected
    levels crowd near the knee: 1×, 1.41×, 1.68×, 2× would print over one another)."""
    ordered = sorted(labels)
    if not ordered:
        return labels
    gap = (ordered[-1] - ordered[0]) * share
    kept = [ordered[0]]
    for value in ordered[1:]:
        if value - kept[-1] >= gap:
            kept.append(value)
    return {value: labels[value] for value in kept}
