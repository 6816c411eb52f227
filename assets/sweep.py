"""The sweep group: sweep_timings, per candidate × model version, the
plan at each further load level of `workload.replay.sweep` (the listed levels, or those the
capacity search chooses; empty without a sweep), after every other replay of the partition, and
its checks (one row per level request, lifecycle order, the search's bracket closed or its
reason recorded)."""

import json

import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
)

from assets.replay import raw_timings, replay_plan
from assets.support.checks import check_result, table_check, tied_check
from assets.support.partitions import partition_layout
from assets.support.privacy import planned_requests_with_text
from assets.support.replays import PartitionReplay, replay_asset
from pipeline.analysis.sizing import sweep as sweep_analysis
from pipeline.analysis.tabulate.repeats import first_run
from pipeline.contracts import (
    ACCURACY_RESULTS,
    RAW_TIMINGS,
    REPLAY_PLAN,
    SWEEP_REPLAY,
    SWEEP_TIMINGS,
    SWEEP_TIMINGS_SCHEMA,
)
from pipeline.files.hashing import sha256_file
from pipeline.files.layout import write_text
from pipeline.quality import expectations, rules
from pipeline.replay.conditions.sweep import run_sweep
from resources import PackStorage, SpecResource

GROUP = "sweep"


@replay_asset(
    group_name=GROUP,
    deps=[replay_plan, raw_timings, ACCURACY_RESULTS.name],  # after every other replay: no two ever overlap
    description=(
        "The plan replayed at each further load level of workload.replay.sweep (the listed levels, or those the "
        "capacity search chooses: grown until a level clearly misses the SLA, then bisected), after the spec's own "
        "load (raw_timings); every row carries load_level."
    ),
)
def sweep_timings(context: AssetExecutionContext, run: PartitionReplay) -> MaterializeResult:
    # each level's server_metrics rows, scoped by load_level (no warm-up: the production replay warmed the cache)
    scrapes = run.scrapes("load_level")
    if run.replay.sweep is None:
        timings, summary = SWEEP_TIMINGS_SCHEMA.empty_table(), None
    else:

        def judge(candidate, level, table):
            source = first_run(run.layout.path(RAW_TIMINGS)) if table is None else table
            return sweep_analysis.judge_level(candidate, level, source, run.spec)

        timings, summary = run_sweep(
            run.plan,
            run.replay,
            run.runs,
            judge=judge,
            log=context.log.info,
            around_level=lambda candidate, level: scrapes.around(level.value),
        )
        record = write_text(json.dumps(summary, indent=2), run.layout.path(SWEEP_REPLAY))
    meta = run.write(SWEEP_TIMINGS, timings, inputs=[REPLAY_PLAN, RAW_TIMINGS])  # the production level: reused
    meta["server_metrics_rows"] = scrapes.write(run.layout, context.log.warning).num_rows
    if summary is not None:
        meta["summary"] = MetadataValue.json(summary)
        meta["sweep_replay_sha256"] = sha256_file(record)
        if "search" in summary:  # how the capacity search ended: bracket closed, or why not
            meta["capacity_search"] = MetadataValue.json(summary["search"])
    return MaterializeResult(metadata=meta)


@tied_check(
    asset=sweep_timings,
    blocking=True,
    description="Per candidate and replayed level: exactly one row per request of the level's plan.",
)
def sweep_timings_one_row_per_level_request(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    layout = partition_layout(storage, context)
    timings, plan = pq.read_table(layout.path(SWEEP_TIMINGS)), planned_requests_with_text(storage, spec.load().spec)
    return check_result(rules.sweep_timings_complete(timings, plan, spec.load().spec.workload.replay))


@tied_check(
    asset=sweep_timings,
    description=(
        "A capacity search (workload.replay.sweep.search): per candidate, the bracket around the knee closed to the "
        "precision, or the reason it did not (a bound hit, the production level missing) is recorded."
    ),
)
def sweep_timings_bracket_closed_or_reason(
    context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage
) -> AssetCheckResult:
    record = partition_layout(storage, context).path(SWEEP_REPLAY)
    summary = json.loads(record.read_text()) if record.is_file() else None
    return check_result(rules.capacity_search_ended(summary, spec.load().spec.workload.replay))


sweep_timings_lifecycle_ordered = table_check(
    SWEEP_TIMINGS,
    "lifecycle_ordered",
    expectations.raw_timings_suite,
    blocking=True,
    description=(
        "great-expectations (the raw-timings suite): status typed, send ≤ first byte ≤ first token ≤ last token ≤ "
        "end, TTFT ≤ E2E, output ≤ max_tokens (within the count's uncertainty)."
    ),
)
