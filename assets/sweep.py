"""The load sweep: sweep_timings (the plan replayed at each further load level) → sweep_levels →
sweep_summary. Without `workload.replay.sweep` each writes an empty table and the pack has no
sweep section."""

import json

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
    asset_check,
)

from assets.accuracy import accuracy_results, accuracy_summary
from assets.metadata import table_metadata, with_run_id
from assets.partitions import REVALIDATION_PARTITIONS, partition_candidate
from assets.replay import raw_timings, replay_plan
from pipeline.analysis import sweep as sweep_analysis
from pipeline.pack.layout import write_parquet, write_text
from pipeline.plan.replay_plan import planned_requests
from pipeline.quality import expectations, rules
from pipeline.replay.engine import ReplaySettings
from pipeline.replay.sweep import SWEEP_TIMINGS_SCHEMA, level_plan, load_levels, run_sweep
from resources import EndpointResource, PackStorage, SpecResource


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name="replay",
    deps=[replay_plan, raw_timings, accuracy_results],  # after every other replay: no two ever overlap
    description="The plan replayed at each further load level of workload.replay.sweep, after the spec's own load (raw_timings); every row carries load_level.",
)
def sweep_timings(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    loaded, layout = spec.load(), storage.partition_layout(context)
    replay = loaded.spec.workload.replay
    if replay.sweep is None:
        timings, summary = SWEEP_TIMINGS_SCHEMA.empty_table(), None
    else:
        plan = planned_requests(pq.read_table(layout.table("replay_plan")))

        def judge(candidate, level, table):
            source = layout.table("raw_timings") if table is None else table
            return sweep_analysis.clearly_misses(candidate, level, source, loaded.spec)

        timings, summary = run_sweep(
            plan,
            replay,
            [endpoint.target(partition_candidate(context, loaded.spec))],
            ReplaySettings.from_spec(replay, progress=True),
            context.run_id,
            lambda candidate, index: layout.journal(context.run_id, f"{candidate}.sweep{index}"),
            judge=judge,
            log=context.log.info,
        )
        write_text(json.dumps(summary, indent=2), layout.json("sweep_replay"))
    path = write_parquet(timings, layout.table("sweep_timings"))
    meta = table_metadata(timings, path, context.run_id)
    if summary is not None:
        meta["summary"] = MetadataValue.json(summary)
    return MaterializeResult(metadata=meta)


@asset_check(asset=sweep_timings, blocking=True, description="Per candidate and replayed level: exactly one row per request of the level's plan.")
def sweep_timings_one_row_per_level_request(context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    layout = storage.partition_layout(context)
    replay = spec.load().spec.workload.replay
    timings = pq.read_table(layout.table("sweep_timings"))
    if replay.sweep is None:
        return AssetCheckResult(passed=timings.num_rows == 0, metadata={"rows": timings.num_rows})
    plan = planned_requests(pq.read_table(layout.table("replay_plan")))
    problems, levels = [], 0
    for level in load_levels(replay):
        mine = timings.filter(pc.equal(timings.column("load_level"), level.value))
        if level.production or mine.num_rows == 0:
            continue  # raw_timings holds the production level; a skipped level has no rows
        levels += 1
        params = {"planned": [item.request_id for item in level_plan(plan, level, replay)], "candidates": sorted(set(mine.column("candidate").to_pylist()))}
        frame = mine.select(["candidate", "request_id"]).to_pandas()
        outcome = expectations.validate(expectations.raw_timings_complete_suite, frame, params, name=f"sweep_timings_{level.label}")
        if not outcome.passed:
            problems.append(f"{level.label}: {outcome.metadata}")
    return AssetCheckResult(passed=not problems, metadata={"levels": levels, "problems": "; ".join(problems) or "none"})


@asset_check(asset=sweep_timings, blocking=True, description="great-expectations (the raw-timings suite): status typed, send ≤ first byte ≤ first token ≤ last token ≤ end, TTFT ≤ E2E, output ≤ max_tokens.")
def sweep_timings_lifecycle_ordered(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.partition_layout(context).table("sweep_timings")).to_pandas()
    outcome = expectations.validate(expectations.raw_timings_suite, frame, name="sweep_timings")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name="analysis",
    deps=[raw_timings, sweep_timings, accuracy_summary],
    description="Per candidate × load level: throughput, goodput, SLA attainment, error rate, TTFT/TPOT/E2E percentiles, cost per useful decision.",
)
def sweep_levels(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.partition_layout(context)
    if not sweep_analysis.sweep_ran(loaded.spec):
        table = pa.table({"candidate": pa.array([], pa.string()), "load_level": pa.array([], pa.float64())})
    else:
        accuracy = pq.read_table(layout.table("accuracy_summary"))
        table = sweep_analysis.sweep_levels(
            layout.table("raw_timings"), layout.table("sweep_timings"), loaded.spec, accuracy if accuracy.num_rows else None
        )
    path = write_parquet(with_run_id(table, context.run_id), layout.table("sweep_levels"))
    meta = table_metadata(table, path, context.run_id)
    meta["sql"] = "sql/sweep_levels.sql"
    return MaterializeResult(metadata=meta)


@asset_check(asset=sweep_levels, blocking=True, description="One row per candidate × measured level, the production level among them, proportions in [0, 1].")
def sweep_levels_complete(context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    loaded = spec.load().spec
    outcome = rules.sweep_levels_complete(
        pq.read_table(storage.partition_layout(context).table("sweep_levels")).to_pylist(),
        [partition_candidate(context, loaded).name],
        sweep_analysis.sweep_ran(loaded),
    )
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name="analysis",
    deps=[sweep_levels],
    description="Per candidate: the highest load level still meeting the SLA, its goodput and cost per useful decision, the headroom over production.",
)
def sweep_summary(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.partition_layout(context)
    levels = pq.read_table(layout.table("sweep_levels"))
    if not sweep_analysis.sweep_ran(loaded.spec):
        table = pa.table({"candidate": pa.array([], pa.string()), "max_sla_load_level": pa.array([], pa.float64())})
    else:
        table = sweep_analysis.sweep_summary(levels.drop_columns(["run_id"]), loaded.spec)
    path = write_parquet(with_run_id(table, context.run_id), layout.table("sweep_summary"))
    meta = table_metadata(table, path, context.run_id)
    meta["sql"] = "sql/sweep_summary.sql"
    for row in table.to_pylist():
        context.log.info(f"{row['candidate']}: highest load still meeting the SLA: {row.get('max_sla_load_level_label')}")
    return MaterializeResult(metadata=meta)


@asset_check(asset=sweep_summary, blocking=True, description="The chosen level and every lighter level met the SLA; the first missing level is above it.")
def sweep_summary_consistent(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    layout = storage.partition_layout(context)
    outcome = rules.sweep_summary_consistent(
        pq.read_table(layout.table("sweep_levels")).to_pylist(), pq.read_table(layout.table("sweep_summary")).to_pylist()
    )
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
