"""The pack's `vendor_conditions` and `headline_waterfall` sections (typed parts and builders),
from `arm_figures` (pipeline/analysis/judge/arms.py), the sweep and the headline figures.

`vendor_conditions`: each claimed throughput, latency and error-rate figure measured by the arm
that re-ran the vendor's own benchmark (`a_vendor_conditions`), with the verdict and tolerance of
its figure at basis vendor_conditions (the analysis's `figures`: holds / holds within tolerance /
not reproduced / inconclusive), read, not judged again. Accuracy and cost are
not an arm's business: they stay judged on the buyer's slice and load.

`headline_waterfall`: per candidate and claimed capacity or latency figure, the claimed value, then
one step per axis in this order: (a) vendor conditions, (b) the buyer's prompt lengths, (c) + output
lengths, (d) + request structure, (d2) + the buyer's tools, schemas and reasoning settings (where
its requests carry any), (e) + arrival process at the last closed-loop step's mean load, (f) capacity at the
buyer's SLA (the sweep's highest SLA-meeting level), (g) served demand at the production load (the
headline figure). Each step's `change` is its figure minus the previous step's, attributed to the
step's axis; the attribution depends on the order (another order splits interactions between the
axes differently). The change's interval treats the two steps as independent estimates (separate
runs): each side's half-width is the root sum of squares of the two intervals' matching sides
(the later step's lower side with the earlier's upper side for the low end, and the other way for
the high end); absent when either step has an open side.
"""

from __future__ import annotations

import math

from pipeline.analysis.declare import metrics
from pipeline.analysis.declare.catalogue_model import VENDOR_CONDITIONS as VENDOR_CONDITIONS_BASIS
from pipeline.analysis.judge.arms import ARM_QUERIES
from pipeline.analysis.judge.figures import figure_key
from pipeline.contracts import ARM_TIMINGS
from pipeline.files.hashing import file_ref
from pipeline.files.layout import PackLayout
from pipeline.pack.assemble.lineage_steps import LATENCY_STEPS, THROUGHPUT_STEPS, lineage
from pipeline.pack.document.parts import FigureLineage
from pipeline.pack.document.section_parts import VendorConditionsRow, WaterfallRow, WaterfallStep
from pipeline.pack.render import svg
from pipeline.plan.arms import LADDER, VENDOR_CONDITIONS, sized_by_count, vendor_request_count
from pipeline.spec import Spec

CAPACITY_AT_SLA = ("capacity at SLA", "capacity at the buyer's SLA (highest SLA-meeting sweep level)")
PRODUCTION_LOAD = ("production load", "served demand at the buyer's production load")
# a step's figure read from a sweep level's row: the column holding it, when sweep_levels has one
NOT_LADDER_FIGURES = ("error_rate",)
JUDGED = ("tolerance", "tolerance_source", "no_steady_window")  # with the verdict: a figure's judgement


def arm_steps() -> tuple[str, ...]:
    """Every query an arm's figure read: the arm's window, then the headline's own chain."""
    return (
        *ARM_QUERIES,
        "steady_bins",
        "steady_requests",
        *LATENCY_STEPS,
        "latency_percentiles",
        *THROUGHPUT_STEPS,
        "throughput",
    )


def arm_lineage(layout: PackLayout, arm_timings_rows: int) -> dict:
    steps = [file_ref(path, layout.root) for path in layout.copy_sql(list(arm_steps()))]
    return lineage(steps, [file_ref(layout.path(ARM_TIMINGS), layout.root, arm_timings_rows)])


def conditions_text(spec: Spec) -> str:
    c, arms = spec.claim.conditions, spec.workload.replay.arms
    if c.concurrency is not None:
        load = f"closed loop at concurrency {c.concurrency}"
    else:
        load = f"open loop at {c.request_rate:g} requests/s ({c.arrival_process or 'poisson'} arrivals)"
    text = f"{c.input_tokens} tokens in, {c.output_tokens} out, {load}"
    if arms is None:
        return text
    sent = vendor_request_count(c, arms)
    if c.concurrency is not None and not sized_by_count(arms):  # sized in waves: the claim's count is its own sample
        text += f", {sent} requests: {1 + arms.waves} waves of {c.concurrency}, the first warm-up"
        return text + (f" (the vendor's sample: {c.num_requests})" if c.num_requests is not None else "")
    if c.num_requests is not None:  # the claim's count, as the arm sent it
        text += f", {sent} requests (the claim's {c.num_requests})"
    return text


def vendor_conditions_section(
    spec: Spec, arm_rows: list[dict], figures: list[dict], lineage: dict
) -> list[VendorConditionsRow]:
    """The arm's rows of the claimed figures, each with the verdict and tolerance of its figure at
    basis vendor_conditions (the analysis judged it: `figures`, read, not judged again)."""
    verdicts = {figure_key(item): item for item in figures if item.get("basis") == VENDOR_CONDITIONS_BASIS}
    out = []
    for row in arm_rows:
        if row["arm"] != VENDOR_CONDITIONS or row["metric"] not in spec.claim.figures:
            continue
        claimed, (unit, _) = spec.claim.figures[row["metric"]], metrics.describe(row["metric"])
        judged = verdicts.get((row["candidate"], row["metric"], VENDOR_CONDITIONS_BASIS), {})
        item = VendorConditionsRow(
            candidate=row["candidate"],
            metric=row["metric"],
            unit=unit,
            claimed=claimed,
            measured=row["measured"],
            ci_low=row["ci_low"],
            ci_high=row["ci_high"],
            n=row["n"],
            # the analysis's verdict and tolerance, not decisive over a window the steady-state tests rejected
            verdict=judged.get("verdict"),
            **{key: judged[key] for key in JUDGED if judged.get(key) is not None},
            conditions=conditions_text(spec),
            lineage=FigureLineage.model_validate(lineage),
        )
        if row.get("interval_method"):
            item.interval_method = row["interval_method"]
        out.append(item)
    return out


def change_interval(previous: dict, current: dict) -> tuple[float | None, float | None, float | None]:
    """(change, low, high) of current − previous, two independent estimates (module docstring)."""
    if previous["measured"] is None or current["measured"] is None:
        return None, None, None
    change = current["measured"] - previous["measured"]
    sides = (current["ci_low"], current["ci_high"], previous["ci_low"], previous["ci_high"])
    if any(side is None for side in sides):
        return change, None, None
    low_c, high_c, low_p, high_p = sides
    below = math.hypot(current["measured"] - low_c, high_p - previous["measured"])
    above = math.hypot(high_c - current["measured"], previous["measured"] - low_p)
    return change, change - below, change + above


def _sweep_step(metric: str, candidate: str, levels: list[dict], summary: list[dict]) -> dict:
    """(f): the figure at the highest SLA-meeting level of the sweep (sweep_levels' row there)."""
    top = next((row for row in summary if row["candidate"] == candidate), None)
    if top is None:
        return {"measured": None, "ci_low": None, "ci_high": None, "n": 0, "reason": "no load sweep ran"}
    if top.get("max_sla_load_level") is None:
        lowest = f", down to {top['min_load_level_label']}" if top.get("min_load_level_label") else ""
        return {
            "measured": None,
            "ci_low": None,
            "ci_high": None,
            "n": 0,
            "reason": f"no load level met the SLA{lowest}",
        }
    level = next(
        (row for row in levels if row["candidate"] == candidate and row["load_level"] == top["max_sla_load_level"]),
        None,
    )
    if level is None:
        return {
            "measured": None,
            "ci_low": None,
            "ci_high": None,
            "n": 0,
            "reason": "the sweep's level is not in its table",
        }
    n = level.get("latency_n") if metrics.percentile_of(metric) is not None else level.get("requests_in_window")
    step = {"measured": level.get(metric), "ci_low": level.get(f"{metric}_ci_low"), "n": n or 0}
    if top.get("headroom_factor") is not None:  # above or below the production load: how far
        step["label"] = (
            f"{CAPACITY_AT_SLA[1][:-1]}, {top['max_sla_load_level_label']}: {top['headroom_factor']:.3g}× the "
            "production load)"
        )
    step["ci_high"] = level.get(f"{metric}_ci_high")
    if metric not in level:
        step["reason"] = f"the sweep's tables have no {metric}"
    return step


def headline_waterfall(
    spec: Spec,
    arm_rows: list[dict],
    figures: list[dict],
    sweep_levels: list[dict],
    sweep_summary: list[dict],
    arm_lineage_: dict | None,
    sweep_lineage: dict | None,
) -> list[WaterfallRow]:
    """Per candidate × claimed capacity or latency figure measured by the arms (module docstring)."""
    out = []
    candidates = sorted({row["candidate"] for row in arm_rows})
    for candidate in candidates:
        for metric, claimed in spec.claim.figures.items():
            mine = {row["arm"]: row for row in arm_rows if (row["candidate"], row["metric"]) == (candidate, metric)}
            if not mine or metric in NOT_LADDER_FIGURES:
                continue
            steps: list[dict] = []
            for arm, (axis, label) in LADDER.items():
                if arm in mine:
                    row = mine[arm]
                    steps.append({"axis": axis, "label": label, "arm": arm, "lineage": arm_lineage_, **_values(row)})
            sweep = _sweep_step(metric, candidate, sweep_levels, sweep_summary)
            steps.append(
                {
                    "axis": CAPACITY_AT_SLA[0],
                    "label": CAPACITY_AT_SLA[1],
                    "arm": None,
                    "lineage": sweep_lineage if sweep.get("measured") is not None else None,
                    **sweep,
                }
            )
            headline = next((f for f in figures if figure_key(f) == (candidate, metric, metrics.PRODUCTION_LOAD)), None)
            production = _values(headline) if headline else {"measured": None, "ci_low": None, "ci_high": None, "n": 0}
            steps.append(
                {
                    "axis": PRODUCTION_LOAD[0],
                    "label": PRODUCTION_LOAD[1],
                    "arm": None,
                    "lineage": headline["lineage"] if headline else None,
                    **production,
                }
            )
            unit, larger_is_better = metrics.describe(metric)
            out.append(
                WaterfallRow(
                    candidate=candidate,
                    metric=metric,
                    unit=unit,
                    claimed=claimed,
                    larger_is_better=larger_is_better,
                    steps=[WaterfallStep.model_validate(step) for step in _with_changes(steps)],
                )
            )
    return out


def _values(row: dict) -> dict:
    return {key: row[key] for key in ("measured", "ci_low", "ci_high")} | {"n": row["n"] or 0}


def _with_changes(steps: list[dict]) -> list[dict]:
    previous = None
    for step in steps:
        change: float | None
        low: float | None
        high: float | None
        change, low, high = change_interval(previous, step) if previous is not None else (None, None, None)
        step.update(change=change, change_ci_low=low, change_ci_high=high)
        previous = step
    return steps


def waterfall_rows_for_chart(waterfall: list[dict]) -> list[dict]:
    """The rows the chart draws: every candidate's throughput figures first, then latency."""
    return sorted(waterfall, key=lambda row: (row["unit"] == "ms", row["metric"], row["candidate"]))


SHORT_LABELS = {
    "vendor conditions": "(a) vendor",
    "prompt lengths": "(b) prompts",
    "output lengths": "(c) outputs",
    "request structure": "(d) requests",
    "request settings": "(d2) tools, schemas",
    "arrival process": "(e) arrivals",
    CAPACITY_AT_SLA[0]: "(f) cap. at SLA",
    PRODUCTION_LOAD[0]: "(g) production",
}


def waterfall_charts(waterfall: list[dict] | None) -> dict[str, str | None]:
    """The headline waterfall chart (svg.waterfall): one panel per candidate × figure."""
    rows = waterfall_rows_for_chart(waterfall or [])
    panels = [
        {
            "title": f"{row['candidate']}: {row['metric']}",
            "claimed": row["claimed"],
            "unit": row["unit"],
            "larger_is_better": row["larger_is_better"],
            "steps": [
                (SHORT_LABELS.get(step["axis"], step["axis"]), step["measured"], step["ci_low"], step["ci_high"])
                for step in row["steps"]
            ],
        }
        for row in rows
    ]
    candidates = len({row["candidate"] for row in rows}) or 1
    return {"headline_waterfall": svg.waterfall(panels, columns=min(max(candidates, 2), 3))}
