"""replay_plan → raw_timings: the replay against every candidate, with its checks."""

import json
import os
import shutil
from dataclasses import asdict
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetIn,
    DynamicOut,
    DynamicOutput,
    In,
    MaterializeResult,
    MetadataValue,
    Nothing,
    OpExecutionContext,
    Out,
    asset,
    asset_check,
    graph_asset,
    op,
)

from assets.ingest import production_sample
from assets.metadata import table_metadata, with_run_id
from assets.partitions import REVALIDATION_PARTITIONS, partition_candidate
from pipeline.analysis import tables
from pipeline.pack.layout import write_parquet, write_text
from pipeline.plan.accuracy import mix_into_plan
from pipeline.plan.replay_plan import build_plan, planned_requests, prompt_fit_summary
from pipeline.plan.sessions import session_summary
from pipeline.quality import expectations
from pipeline.replay.calibration import CLIENT_LIMITED_LAG_MS, calibrate
from pipeline.replay.engine import ReplaySettings, run_replay
from pipeline.replay.journal import Journal, journal_to_table
from pipeline.replay.shards import Shard, StartBarrier, shard_plan, shard_settings, shards_for, with_shard_column
from pipeline.replay.sweep import production_level, with_load_level
from resources import EndpointResource, PackStorage, SpecResource

GROUP = "replay"


@asset(
    group_name=GROUP,
    deps=[production_sample, "labelled_slice"],  # the slice's items join the plan when accuracy is mixed
    description="What to send and when: offsets computed up front from the sample.",
)
def replay_plan(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    layout = storage.layout()
    workload = spec.load().spec.workload
    replay = workload.replay
    plan = build_plan(pq.read_table(layout.table("production_sample")), replay, workload.prompts)
    plan = with_mixed_accuracy(plan, spec.load().spec, layout)
    path = write_parquet(with_run_id(plan, context.run_id), layout.table("replay_plan"))
    meta = table_metadata(plan, path, context.run_id)
    meta["mode"] = replay.mode
    meta["prompt_fit"] = MetadataValue.json(prompt_fit_summary(plan))
    meta["sessions"] = MetadataValue.json(session_summary(plan))
    return MaterializeResult(metadata=meta)


def with_mixed_accuracy(plan: pa.Table, loaded_spec, layout) -> pa.Table:
    """With `accuracy.mode: mixed`, the labelled items placed among the planned requests."""
    config = loaded_spec.accuracy
    if config is None or config.mode != "mixed":
        return plan
    return mix_into_plan(plan, pq.read_table(layout.table("labelled_slice")), config, loaded_spec.workload.prompts)


@asset_check(asset=replay_plan, blocking=True, description="great-expectations: ids present and unique, offsets non-decreasing, max_tokens ≥ 1, prompt + max_tokens within the model's context.")
def replay_plan_expectations(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.layout().table("replay_plan")).to_pandas()
    frame["context_tokens"] = frame["prompt_tokens_client"] + frame["max_tokens"]
    windows = [c.max_context_tokens for c in spec.load().spec.candidates if c.max_context_tokens]
    outcome = expectations.validate(
        expectations.replay_plan_suite, frame, {"max_context_tokens": min(windows, default=None)}, name="replay_plan"
    )
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[replay_plan], description="The client's own schedule-lag and TTFT floor at the plan's peak rate, against a zero-delay echo endpoint.")
def client_calibration(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    layout = storage.layout()
    settings = ReplaySettings.from_spec(spec.load().spec.workload.replay)
    plan = planned_requests(pq.read_table(layout.table("replay_plan")))
    figures = calibrate(plan, settings, layout.journal(context.run_id, "calibration"))
    path = write_text(json.dumps(figures, indent=2), layout.json("client_calibration"))
    context.log.info(f"client calibration: schedule lag p99 {figures['schedule_lag_ms_p99']} ms at {figures['peak_rate_per_s']} req/s")
    return MaterializeResult(metadata={"path": MetadataValue.path(str(path)), **{k: v for k, v in figures.items() if v is not None}, "run_id": context.run_id})


@asset_check(asset=client_calibration, description="The client keeps the plan's peak schedule against a zero-delay endpoint (else the run is client-limited).")
def client_calibration_not_client_limited(storage: PackStorage) -> AssetCheckResult:
    figures = json.loads(storage.layout().json("client_calibration").read_text())
    return AssetCheckResult(
        passed=not figures["client_limited"],
        severity=AssetCheckSeverity.WARN,
        metadata={k: figures[k] for k in ("schedule_lag_ms_p99", "threshold_ms", "errors", "peak_rate_per_s")},
    )


@op(
    ins={"plan": In(Nothing), "calibration": In(Nothing)},
    out=DynamicOut(Shard),
    description="Split the plan across `workload.replay.shards` worker processes (one shard: the whole plan in this process).",
)
def plan_replay_shards(context: OpExecutionContext, spec: SpecResource, storage: PackStorage):
    barrier = storage.partition_layout(context).root / "journal" / f"{context.run_id}-start-barrier"
    shutil.rmtree(barrier, ignore_errors=True)
    for shard in shards_for(spec.load().spec.workload.replay.shards, barrier):
        yield DynamicOutput(shard, mapping_key=shard.label)


@op(description="Replay one shard of the plan against the partition's candidate, from the shards' common start time.")
def replay_shard(
    context: OpExecutionContext, shard: Shard, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> dict:
    loaded, layout = spec.load(), storage.partition_layout(context)
    replay = loaded.spec.workload.replay
    candidate = partition_candidate(context, loaded.spec)
    settings = shard_settings(ReplaySettings.from_spec(replay, progress=shard.count == 1), shard)
    plan = shard_plan(planned_requests(pq.read_table(layout.table("replay_plan"))), shard)
    barrier = StartBarrier(shard, replay.shard_ready_timeout_s) if shard.count > 1 else None
    name = candidate.name if shard.count == 1 else f"{candidate.name}-{shard.label}"
    context.log.info(f"replaying {len(plan)} requests against {candidate.name} (mode {replay.mode}, {shard.label} of {shard.count}, pid {os.getpid()})")
    with Journal(layout.journal(context.run_id, name)) as journal:
        stats = run_replay(plan, endpoint.target(candidate), settings, context.run_id, journal, start_at=barrier)
    context.log.info(f"{candidate.name} {shard.label}: {stats.sent} sent, {stats.errors} errors, {stats.unsent} not sent in {stats.wall_s:.1f} s")
    return {"candidate": candidate.name, "shard": shard, "journal": str(journal.path), "stats": asdict(stats), "pid": os.getpid(), "clock": barrier.clock if barrier else "monotonic"}


@op(out=Out(Nothing), description="Merge the shards' journals into one raw_timings table and the replay summary.")
def merge_replay_shards(context: OpExecutionContext, shards: list[dict], spec: SpecResource, storage: PackStorage) -> None:
    layout, replay = storage.partition_layout(context), spec.load().spec.workload.replay
    shards = sorted(shards, key=lambda s: s["shard"].index)
    timings = pa.concat_tables([with_shard_column(journal_to_table(Path(s["journal"])), s["shard"]) for s in shards])
    timings = with_load_level(timings, production_level(replay))  # the spec's own load
    stats = {key: sum(s["stats"][key] for s in shards) for key in ("planned", "sent", "errors", "unsent", "retries", "peak_in_flight")}
    stats["wall_s"] = max(s["stats"]["wall_s"] for s in shards)
    summary = {"mode": replay.mode, "planned": stats["planned"], "candidates": {shards[0]["candidate"]: stats}, **stats}
    summary["shards"] = [{"shard": s["shard"].index, "pid": s["pid"], "clock": s["clock"], **s["stats"]} for s in shards]
    path = write_parquet(timings, layout.table("raw_timings"))
    write_text(json.dumps(summary, indent=2), layout.json("replay_summary"))
    meta = table_metadata(timings, path, context.run_id)
    meta.update(write_itl_histogram(timings, spec.load().spec, layout, context.run_id))
    meta.update(errors=summary["errors"], unsent=summary["unsent"], shards=len(shards), summary=MetadataValue.json(summary))
    context.add_output_metadata(meta)


def write_itl_histogram(timings: pa.Table, spec, layout, run_id: str) -> dict:
    """Every gap counted per µs beside raw_timings, from the table still in memory: the analysis
    reads this instead of decoding every gap list again (`loadproof verify` re-builds it)."""
    histogram = with_run_id(tables.itl_histogram(timings, spec), run_id)
    path = write_parquet(histogram, layout.table("itl_histogram"))
    return {"itl_histogram": MetadataValue.path(str(path)), "itl_histogram_rows": histogram.num_rows}


@graph_asset(
    group_name=GROUP,
    ins={"replay_plan": AssetIn(dagster_type=Nothing), "client_calibration": AssetIn(dagster_type=Nothing)},
    partitions_def=REVALIDATION_PARTITIONS,
    description="One row per replayed request of the partition's candidate: every lifecycle timestamp, monotonic clock; sent by one process or fanned out over shards.",
)
def raw_timings(replay_plan, client_calibration):
    shards = plan_replay_shards(plan=replay_plan, calibration=client_calibration)
    return merge_replay_shards(shards.map(replay_shard).collect())


@asset_check(asset=raw_timings, blocking=True, description="great-expectations: exactly one row per planned request and candidate.")
def raw_timings_one_row_per_planned_request(context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    layout = storage.partition_layout(context)
    params = {
        "planned": pq.read_table(layout.table("replay_plan"), columns=["request_id"]).column("request_id").to_pylist(),
        "candidates": [partition_candidate(context, spec.load().spec).name],
    }
    frame = pq.read_table(layout.table("raw_timings"), columns=["candidate", "request_id"]).to_pandas()
    outcome = expectations.validate(expectations.raw_timings_complete_suite, frame, params, name="raw_timings_complete")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=raw_timings, blocking=True, description="great-expectations: status typed, send ≤ first byte ≤ first token ≤ last token ≤ end, TTFT ≤ E2E, no negative duration, output ≤ max_tokens.")
def raw_timings_expectations(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.partition_layout(context).table("raw_timings")).to_pandas()
    outcome = expectations.validate(expectations.raw_timings_suite, frame, name="raw_timings")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=raw_timings, description="Error rate within the spec's budget; schedule lag p99 within the client-validity bound (else the client was the bottleneck).")
def raw_timings_endpoint_health(context: AssetCheckExecutionContext, spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.partition_layout(context).table("raw_timings")).to_pandas()
    params = {"max_error_rate": spec.load().spec.sla.max_error_rate, "max_schedule_lag_ms_p99": CLIENT_LIMITED_LAG_MS}
    outcome = expectations.validate(expectations.endpoint_health_suite, frame, params, name="endpoint_health")
    return AssetCheckResult(passed=outcome.passed, severity=AssetCheckSeverity.WARN, metadata=outcome.metadata)
