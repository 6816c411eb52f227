"""Every figure of a partition, made in one place: each catalogue entry (`catalogue.py`) read from
the analysis table its `Source` names, at each basis, beside the claim, with its interval, n,
interval method and verdict; written as `data/figures.parquet` (`figures_table`), which the pack
only reads (`pipeline/pack/`) and `loadproof verify` re-computes with this very code.

Verdicts come from the interval and the direction in which larger is better
(`pipeline.analysis.statistics.stats.verdict`). For a percentile the interval's ends are exact order statistics, so
"holds" is exactly MLPerf LoadGen's early-stopping rule at the interval's one-sided confidence:
a run shorter than `min_samples_to_hold` can never make a percentile claim hold.

A figure dict names the query it was read from (`query`, a `sql/` name): the pack turns it into
the figure's lineage (the query's copy in the pack, the queries it read, the input files' hashes).
"""

from __future__ import annotations

import pyarrow as pa

from pipeline.analysis.declare import metrics
from pipeline.analysis.declare.catalogue import (
    BY_NAME,
    CAPACITY_AT_SLA,
    CATALOGUE,
    PRODUCTION_LOAD,
    VENDOR_CONDITIONS,
    Metric,
    Source,
)
from pipeline.analysis.judge.instrument_error import carried_error
from pipeline.analysis.sizing.replicas import cost_method
from pipeline.analysis.sizing.users_at_tier import TIER_FIGURES, tier_note
from pipeline.analysis.statistics import steady_state
from pipeline.analysis.statistics.dependence import WILSON
from pipeline.analysis.statistics.stats import (
    INCONCLUSIVE,
    INTERVAL_RULE,
    NOT_REPRODUCED,
    early_stopping_note,
    unsteady_verdict,
    verdict,
)
from pipeline.plan.arms import VENDOR_CONDITIONS as VENDOR_CONDITIONS_ARM  # the arm: the vendor's own benchmark
from pipeline.replay.client_validity.calibration import CLIENT_LIMITED_LAG_MS
from pipeline.spec import Spec

# the window's cost over the extreme products of the SLA share's and the accuracy's Wilson bounds
COST_METHOD = "Wilson bounds of the useful share"
ARM_QUERY = "arm_window"  # an arm's figures are the headline queries over the window this query finds

# every analysis table a figure is read from (the catalogue's sources)
SOURCE_TABLES = frozenset(source.table for entry in CATALOGUE for source in entry.sources.values())

SERVED_DEMAND = (
    "served demand: throughput at the production load is what that load offered, not a capacity, so the claim "
    "is judged at the capacity at the SLA and at the vendor's conditions, not here"
)


def figure(
    spec: Spec,
    candidate: str,
    metric: str,
    measured,
    ci_low,
    ci_high,
    n: int,
    query: str,
    basis: str = PRODUCTION_LOAD,
    no_steady_window: str | None = None,
) -> dict:
    """One figure at its `basis` (what it is measured against), judged against the claim where
    the claim is about that basis (a capacity claim never at the production load)."""
    unit, _ = metrics.describe(metric)
    claimed = spec.claim.figures.get(metric)
    item = {
        "candidate": candidate,
        "metric": metric,
        "unit": unit,
        "basis": basis,
        "claimed": claimed,
        "measured": measured,
        "ci_low": ci_low,
        "ci_high": ci_high,
        "n": n,
        **judged(spec, metric, ci_low, ci_high, no_steady_window),
        "query": query,
    }
    if basis == PRODUCTION_LOAD and metrics.claim_kind(metric) == "capacity" and claimed is not None:
        item["verdict"] = None
        item["not_judged"] = SERVED_DEMAND
        for key in ("tolerance", "tolerance_source", "decision_rule"):
            item.pop(key, None)
    return item


def judged(spec: Spec, metric: str, ci_low, ci_high, no_steady_window: str | None = None) -> dict:
    """The verdict on the claim on `metric` from an interval, the tolerance it was judged with and
    its source (`claim.tolerance`, the catalogue's default by the figure's kind), and the rule that
    decided it (`decision_rule`): the one place a verdict is made (`stats.verdict` holds the rule).
    No claim: no verdict, no tolerance; a spec with `claim.tolerance: null` (a pack written before
    tolerances) judges without one. Over a window the steady-state tests rejected
    (`no_steady_window`: why) a verdict is decisive only in the direction the transient cannot
    explain (`stats.unsteady_verdict`)."""
    claimed = spec.claim.figures.get(metric)
    _, larger_is_better = metrics.describe(metric)
    tolerance = 0.0
    out: dict = {"verdict": verdict(claimed, ci_low, ci_high, larger_is_better)}
    if claimed is not None and spec.claim.tolerance is not None:
        tolerance, source = spec.claim.tolerance.of(metric)
        word = verdict(claimed, ci_low, ci_high, larger_is_better, tolerance)
        out = {"verdict": word, "tolerance": tolerance, "tolerance_source": source}
    if out["verdict"] is not None:
        out["decision_rule"] = INTERVAL_RULE
    if no_steady_window is not None:
        word, rule = unsteady_verdict(
            out["verdict"], claimed, ci_low, ci_high, metrics.metric(metric).kind, tolerance, larger_is_better
        )
        out |= {"verdict": word, "no_steady_window": no_steady_window}
        if rule is not None:
            out["decision_rule"] = rule
    return out


WINDOW_TABLES = frozenset({"latency_percentiles", "throughput", "cost_per_decision"})  # accuracy: not in the window


def with_steady_windows(spec: Spec, items: list[dict], unsteady: dict[str, str]) -> list[dict]:
    """Each production-load figure of a candidate with no steady window, re-judged as such (`judged`)."""
    for item in items:
        reason, entry = unsteady.get(item["candidate"]), BY_NAME.get(item["metric"])
        if reason is not None and entry is not None and entry.source.table in WINDOW_TABLES:
            judge = item.get("not_judged") is None
            item |= judged(spec, item["metric"], item["ci_low"], item["ci_high"], reason) if judge else {}
            item["no_steady_window"] = reason
    return items


def figure_key(item: dict) -> tuple[str, str, str]:
    """A figure's identity in a pack: candidate, metric and basis (a pack written before bases
    has only production-load figures)."""
    return item["candidate"], item["metric"], item.get("basis", PRODUCTION_LOAD)


def figure_rows(tables: dict[str, pa.Table]) -> dict[str, list[dict]]:
    """The rows of the analysis tables a figure is read from (`analyse_all`'s ITL histogram and
    per-second buckets, which can be large, are no figure's source and are left as they are)."""
    return {name: table.to_pylist() for name, table in tables.items() if name in SOURCE_TABLES}


def read(source: Source, row: dict) -> tuple:
    """(measured, ci_low, ci_high, n, interval method) of one figure from its table's row."""
    return (
        row.get(source.value),
        row.get(source.ci_low) if source.ci_low else None,
        row.get(source.ci_high) if source.ci_high else None,
        row.get(source.n) or 0,
        row.get(source.method) if source.method else None,
    )


def entries(table: str, basis: str = PRODUCTION_LOAD) -> list[Metric]:
    """The catalogue entries read from `table` at `basis`, in catalogue order."""
    return [m for m in CATALOGUE if basis in m.sources and m.sources[basis].table == table]


def values_at(tables: dict[str, list[dict]], name: str, basis: str) -> tuple:
    """(measured, ci_low, ci_high, n, interval method) of figure `name` from one run's analysis
    tables (one candidate's: an arm's), read where the catalogue says it is at `basis`."""
    source = metrics.metric(name).sources[basis]
    rows = tables.get(source.table) or []
    if source.row_metric is not None:  # a latency table: the row of this family and percentile, whole window
        rows = [
            row
            for row in rows
            if (row["metric"], row["percentile"]) == (source.row_metric, source.row_percentile)
            and (row.get("scope") or "all") == "all"
        ]
    return read(source, rows[0]) if rows else (None, None, None, 0, None)


def latency_entry(row: dict) -> Metric | None:
    """The catalogue entry a latency_percentiles row is (None for a family the catalogue lacks)."""
    return BY_NAME.get(metrics.latency_figure_name(row["metric"], row["percentile"]))


def latency_figures(
    spec: Spec, rows: list[dict], schedule_lag_ms_p99: dict[str, float | None] | None = None
) -> list[dict]:
    """One figure per candidate, metric and percentile over the whole window (scope 'all').

    A candidate whose replay lagged (`schedule_lag_ms_p99`, per candidate, above the client-validity
    threshold) has its TTFT and E2E figures — and so their verdicts — read from the planned send
    time (`ttft_from_schedule_ms`, `e2e_from_schedule_ms`): timed from the late actual send, the
    client's own queue would be hidden. `timed_from` says so and keeps the figure from the actual send.
    Older packs have no schedule-based rows; their figures stay as they were."""
    whole = [row for row in rows if (row.get("scope") or "all") == "all"]
    by_key = {(row["candidate"], row["metric"], row["percentile"]): row for row in whole}
    lags = schedule_lag_ms_p99 or {}
    out = []
    for row in whole:
        entry = latency_entry(row)
        if entry is None:
            continue
        source, timed_from = row, None
        lag = lags.get(row["candidate"])
        scheduled = by_key.get((row["candidate"], metrics.FROM_SCHEDULE.get(row["metric"]), row["percentile"]))
        if lag is not None and lag > CLIENT_LIMITED_LAG_MS and scheduled is not None:
            source = scheduled
            actual = "—" if row["value"] is None else format(row["value"], ".4g")
            timed_from = (
                f"from the planned send time ({scheduled['metric']}): the client lagged (schedule lag p99 "
                f"{lag:.3g} ms > {CLIENT_LIMITED_LAG_MS:g} ms); from the actual send it is {actual} ms"
            )
        measured, low, high, n, method = read(entry.source, source)
        item = figure(spec, row["candidate"], entry.name, measured, low, high, n, entry.source.sql)
        if timed_from is not None:
            item["timed_from"] = timed_from
        item["early_stopping"] = early_stopping_note(
            row["q"],
            n,
            row.get("confidence") or spec.analysis.confidence,
            source.get("design_effect") if method else None,
            closed=low is not None and high is not None,
        )
        if method:
            item["interval_method"] = method
            item["design_effect"] = source.get("design_effect")
        if (row.get("sample_every") or 1) > 1:
            item["sampled"] = f"every gap of the requests sent in 1 of every {row['sample_every']} 5-second slices"
        out.append(item)
    return out


def schedule_lags(throughput_rows: list[dict]) -> dict[str, float | None]:
    """Each candidate's replay schedule lag p99: above the threshold, its latency verdicts are
    read from the planned send time (`latency_figures`)."""
    return {row["candidate"]: row.get("schedule_lag_ms_p99") for row in throughput_rows}


def throughput_figures(spec: Spec, rows: list[dict], served_demand: bool = True) -> list[dict]:
    """Throughput, SLA attainment and error rate at the production load. Throughput there is served
    demand, never judged against a capacity claim; `served_demand=False` re-computes a pack written
    before figures had a basis, when it was (pack/audit/verify.py)."""
    out = []
    for row in rows:
        for entry in entries("throughput"):
            measured, low, high, n, method = read(entry.source, row)
            item = figure(spec, row["candidate"], entry.name, measured, low, high, n, entry.source.sql)
            if not served_demand and item.pop("not_judged", None):
                item |= judged(spec, entry.name, low, high)
            out.append(with_method(item, method))
    return out


def with_method(item: dict, method: str | None) -> dict:
    """The figure with its interval method named, when the analysis named it (a pack written
    before methods were named has none)."""
    if method:
        item["interval_method"] = method
    return item


def cost_figures(spec: Spec, rows: list[dict]) -> list[dict]:
    """Cost per decision has an interval from the useful share; cost per million tokens has none,
    so a claim on it stays inconclusive. (The sweep's cost figure: `sweep_figures`.)"""
    out = []
    for row in rows:
        n = row["requests_in_window"] if "requests_in_window" in row else row["useful_decisions"]
        for entry in entries("cost_per_decision"):
            measured, low, high, _, _ = read(entry.source, row)
            item = figure(spec, row["candidate"], entry.name, measured, low, high, n, entry.source.sql)
            out.append(with_method(item, COST_METHOD if entry.source.ci_low else None))
    return out


def accuracy_figures(spec: Spec, rows: list[dict]) -> list[dict]:
    """Accuracy on the buyer's slice with its Wilson interval and the delta to the claim."""
    out = []
    for row in rows:
        for entry in entries("accuracy_summary"):
            measured, low, high, n, _ = read(entry.source, row)
            item = figure(spec, row["candidate"], entry.name, measured, low, high, n, entry.source.sql)
            item["delta"] = row.get("accuracy_delta")
            out.append(with_method(item, WILSON))
    return out


def sweep_figures(spec: Spec, summary_rows: list[dict]) -> list[dict]:
    """Cost per useful decision at the highest load still meeting the SLA (sweep_summary), with
    the interval of that level's cost; when it is claimed but no sweep ran, or no level met
    the SLA, the figure says why it has no value."""
    out = []
    by_candidate = {row["candidate"]: row for row in summary_rows}
    for entry in entries("sweep_summary", CAPACITY_AT_SLA):
        source = entry.sources[CAPACITY_AT_SLA]
        for candidate in [c.name for c in spec.candidates]:
            row = by_candidate.get(candidate)
            if row is None and entry.name not in spec.claim.figures:
                continue
            row = row or {}
            measured, low, high, n, _ = read(source, row)
            item = figure(spec, candidate, entry.name, measured, low, high, n, source.sql, basis=CAPACITY_AT_SLA)
            if row.get("max_sla_load_level") is not None:
                with_method(item, COST_METHOD)
                item["load_level"] = row["max_sla_load_level"]
                item["load_level_label"] = row["max_sla_load_level_label"]
            elif not row:
                item["reason"] = "no load sweep ran (workload.replay.sweep)"
            else:
                item["reason"] = "no load level met the SLA"
            out.append(item)
    return out


NOT_SIZED = {
    "replicas_at_sla_peak": "no peak-to-mean arrival ratio (the prompt profile's peak_to_mean_ratio: none where the "
    "sample spans less than one workload.profile.rate_bin_s bin)"
}


def capacity_figures(spec: Spec, capacity_rows: list[dict]) -> list[dict]:
    """Throughput at the buyer's capacity at the SLA (the highest load level the capacity search
    found still meeting it), judged against a capacity claim. When the search never reached a
    level that clearly missed, the figure is a lower bound: it can show that a claim holds, never
    that it is not reproduced."""
    out = []
    for row in capacity_rows:
        for entry in entries("capacity", CAPACITY_AT_SLA):
            source = entry.sources[CAPACITY_AT_SLA]
            measured, low, high, n, _ = read(source, row)
            # read over the SLA level's rejected window: not decisive
            unsteady = row.get("no_steady_window") if row.get("max_sla_level") is not None else None
            item = figure(
                spec, row["candidate"], entry.name, measured, low, high, n, source.sql, CAPACITY_AT_SLA, unsteady
            )
            if entry.name in TIER_FIGURES:  # at the SLO tier's own knee, not the SLA's
                if row.get("per_user_output_tokens_per_s_min") is not None or entry.name in spec.claim.figures:
                    out.append(item | {"n": row.get("streams_at_tier") or 0} | tier_note(row, entry.name))
                continue
            if row.get("max_sla_level") is not None:
                item["load_level"] = row["max_sla_level"]
                item["load_level_label"] = row.get("max_sla_level_label") or f"{row['max_sla_level']:.3g}"
                if measured is None:
                    item["reason"] = NOT_SIZED.get(entry.name, "not measured at that level")
                elif entry.name == "cost_per_decision_at_sla_replicas_usd":
                    with_method(item, cost_method(row))
            else:
                item["reason"] = f"no load level met the SLA ({row.get('reason') or 'the capacity search found none'})"
            if not row.get("bracket_closed"):
                if row.get("first_missed_level") is None and item["verdict"] == NOT_REPRODUCED:
                    item["verdict"] = INCONCLUSIVE  # the knee lies above the highest level tried
                item.setdefault("reason", f"the capacity bracket is not closed: {row.get('reason') or 'unknown'}")
            out.append(item)
    return out


def vendor_conditions_rows(spec: Spec, arm_rows: list[dict]) -> list[dict]:
    """The vendor-conditions arm's rows of the claimed figures: each becomes a figure with basis
    vendor_conditions."""
    claimed = spec.claim.figures
    return [r for r in arm_rows if r["arm"] == VENDOR_CONDITIONS_ARM and r["metric"] in claimed]


def vendor_conditions_figures(spec: Spec, rows: list[dict]) -> list[dict]:
    """Each claimed figure measured at the vendor's own conditions (the claim's benchmark, run
    against the candidate: pipeline/analysis/judge/arms.py), judged against the claim."""
    return [
        with_method(
            figure(
                spec,
                row["candidate"],
                row["metric"],
                row["measured"],
                row["ci_low"],
                row["ci_high"],
                row["n"],
                ARM_QUERY,
                basis=VENDOR_CONDITIONS,
                no_steady_window=row.get("no_steady_window"),
            ),
            row.get("interval_method"),
        )
        | carried_error(row)
        for row in rows
    ]


def headline_figures(spec: Spec, tables: dict[str, list[dict]], served_demand: bool = True) -> list[dict]:
    """The production-load figures of one run from its analysis tables (accuracy when scored)."""
    throughput = tables["throughput"]
    window_figures = (
        latency_figures(spec, tables["latency_percentiles"], schedule_lags(throughput))
        + throughput_figures(spec, throughput, served_demand)
        + cost_figures(spec, tables["cost_per_decision"])
    )
    return with_steady_windows(spec, window_figures, steady_state.unsteady_windows(throughput)) + accuracy_figures(
        spec, tables.get("accuracy_summary") or []
    )
