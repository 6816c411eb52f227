"""A load sweep's tables: `sweep_levels` (candidate × load level) and `sweep_summary` (per
candidate, the highest load still meeting the SLA, its goodput and cost per useful decision).

Each level is analysed on its own by `pipeline.analysis.tabulate.tables.analyse_all` — the very queries of the
pack's headline figures, over that level's raw timings only, with its own steady-state window —
and the per-level outputs, tagged with the level, are joined by sql/sweep_levels.sql. The
production level's rows are `raw_timings` (the spec's own replay), the other levels' are
`sweep_timings`; the headline figures and verdicts stay those of the production level.
"""

from __future__ import annotations

import math
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline.analysis.sizing import users_at_tier
from pipeline.analysis.tabulate import tables as analysis_tables
from pipeline.duck.catalog import REPO_QUERIES, QueryCatalog
from pipeline.duck.session import QuerySession
from pipeline.replay.conditions import capacity_search
from pipeline.replay.conditions.sweep import LoadLevel, level_for_value, production_level
from pipeline.spec import Spec

SWEEP_QUERIES = ("per_user_tier", "sweep_levels", "sweep_summary")


def sweep_ran(spec: Spec) -> bool:
    return spec.workload.replay.sweep is not None


def level_spec(spec: Spec, level: LoadLevel) -> Spec:
    """The spec a level is analysed with: a sweep level's warm-up and cool-down are the sweep's
    (default: the replay's own); the production level keeps the replay's."""
    replay = spec.workload.replay
    if level.production or replay.sweep is None:
        return spec
    update = {
        "warmup_s": replay.warmup_s if replay.sweep.warmup_s is None else replay.sweep.warmup_s,
        "cooldown_s": replay.cooldown_s if replay.sweep.cooldown_s is None else replay.sweep.cooldown_s,
    }
    workload = spec.workload.model_copy(update={"replay": replay.model_copy(update=update)})
    return spec.model_copy(update={"workload": workload})


def level_sources(
    raw_timings: Path | pa.Table, sweep_timings: Path | pa.Table | None, spec: Spec
) -> list[tuple[LoadLevel, Path | pa.Table]]:
    """(level, its raw timings) for the production level and every level the sweep replayed."""
    replay = spec.workload.replay
    sources: list[tuple[LoadLevel, Path | pa.Table]] = [(production_level(replay), raw_timings)]
    if sweep_timings is None:
        return sources
    table = sweep_timings if isinstance(sweep_timings, pa.Table) else pq.read_table(sweep_timings)
    seen = table.select(["load_level", "load_level_label"]).group_by(["load_level", "load_level_label"]).aggregate([])
    for row in sorted(seen.to_pylist(), key=lambda r: r["load_level"]):
        level = level_for_value(replay, row["load_level"])
        if level.label != row["load_level_label"]:  # a level no longer in the spec: as the timings name it
            level = LoadLevel(row["load_level"], row["load_level_label"], math.nan)
        sources.append((level, table.filter(pc.equal(table.column("load_level"), row["load_level"]))))
    return sorted(sources, key=lambda pair: pair[0].value)


def _tagged(table: pa.Table, level: LoadLevel) -> pa.Table:
    rows = table.num_rows
    for name in ("load_level", "load_level_label", "production"):
        if name in table.schema.names:
            table = table.drop_columns([name])
    table = table.append_column("load_level", pa.array([level.value] * rows, pa.float64()))
    table = table.append_column("load_level_label", pa.array([level.label] * rows, pa.string()))
    return table.append_column("production", pa.array([level.production] * rows, pa.bool_()))


def level_tables(
    source: Path | pa.Table,
    level: LoadLevel,
    spec: Spec,
    accuracy_summary: pa.Table | None,
    queries: QueryCatalog = REPO_QUERIES,
) -> dict[str, pa.Table]:
    """One level's throughput (with the error rate's Wilson interval, as every throughput table has),
    latency, cost and users at the SLO tier, all from one steady session."""
    one = level_spec(spec, level)
    with analysis_tables.steady_session(source, one, queries) as session:  # one session for all of them
        tables = analysis_tables.analysed(session, one, accuracy_summary, load_figures_only=True)
        per_user = users_at_tier.per_user_from(session, one)
    return {
        "level_throughput": _tagged(tables["throughput"], level),
        "level_latency": _tagged(tables["latency_percentiles"], level),
        "level_cost": _tagged(tables["cost_per_decision"], level),
        # the SLO tier per user (sla.per_user) and the level's users: pipeline/analysis/sizing/users_at_tier.py
        "level_per_user": _tagged(per_user, level),
    }


def _params(spec: Spec) -> dict:
    return {
        "min_attainment": spec.sla.min_attainment,
        "max_error_rate": spec.sla.max_error_rate,
        **users_at_tier.tier_params(spec),
    }


def sweep_levels_from(
    sources: list[tuple[LoadLevel, Path | pa.Table]],
    spec: Spec,
    accuracy_summary: pa.Table | None = None,
    queries: QueryCatalog = REPO_QUERIES,
) -> pa.Table:
    per_level = [level_tables(source, level, spec, accuracy_summary, queries) for level, source in sources]
    views = {name: pa.concat_tables([t[name] for t in per_level], promote_options="default") for name in per_level[0]}
    with QuerySession(views, _params(spec), queries) as session:
        return session.run("sweep_levels")


def sweep_levels(
    raw_timings: Path | pa.Table,
    sweep_timings: Path | pa.Table | None,
    spec: Spec,
    accuracy_summary: pa.Table | None = None,
    queries: QueryCatalog = REPO_QUERIES,
) -> pa.Table:
    """One row per candidate × load level (production level included)."""
    return sweep_levels_from(level_sources(raw_timings, sweep_timings, spec), spec, accuracy_summary, queries)


def sweep_summary(levels: Path | pa.Table, spec: Spec, queries: QueryCatalog = REPO_QUERIES) -> pa.Table:
    """Per candidate: the highest load level still meeting the SLA, its goodput and cost."""
    with QuerySession({"sweep_levels": levels}, _params(spec), queries) as session:
        return session.run("sweep_summary")


def judge_level(candidate: str, level: LoadLevel, timings: Path | pa.Table, spec: Spec) -> str:
    """One candidate's level judged as the sweep's early stop and the capacity search need it:
    capacity_search.CLEARLY_MISSED (sweep_levels.clearly_misses_sla), MET (sweep_levels.meets_sla)
    or INCONCLUSIVE (neither: the point estimate misses, the interval does not, or no rows) —
    the very columns the sweep's tables show, from the same queries."""
    if isinstance(timings, pa.Table):
        timings = timings.filter(pc.equal(timings.column("candidate"), candidate))
    else:
        timings = pq.read_table(timings, filters=[("candidate", "==", candidate)])
    if timings.num_rows == 0:
        return capacity_search.INCONCLUSIVE
    rows = sweep_levels_from([(level, timings)], spec).to_pylist()
    if rows and rows[0]["clearly_misses_sla"]:
        return capacity_search.CLEARLY_MISSED
    return capacity_search.MET if rows and rows[0]["meets_sla"] else capacity_search.INCONCLUSIVE


def clearly_misses(candidate: str, level: LoadLevel, timings: Path | pa.Table, spec: Spec) -> bool:
    """Did this candidate's level clearly miss the SLA? (sweep_levels.clearly_misses_sla)"""
    return judge_level(candidate, level, timings, spec) == capacity_search.CLEARLY_MISSED
