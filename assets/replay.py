"""replay_plan → raw_timings: the replay against every candidate, with its checks."""

import json
from dataclasses import asdict

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, MetadataValue, asset, asset_check

from assets.ingest import production_sample
from assets.metadata import table_metadata, with_run_id
from pipeline import checks
from pipeline.layout import write_parquet, write_text
from pipeline.plan import build_plan, planned_requests, prompt_fit_summary
from pipeline.replay.engine import ReplaySettings, run_replay
from pipeline.replay.journal import Journal, journal_to_table
from resources import EndpointResource, PackStorage, SpecResource

GROUP = "replay"


@asset(group_name=GROUP, deps=[production_sample], description="What to send and when: offsets computed up front from the sample.")
def replay_plan(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    layout = storage.layout()
    workload = spec.load().spec.workload
    mode = workload.replay.mode
    plan = build_plan(pq.read_table(layout.table("production_sample")), mode, workload.prompts)
    path = write_parquet(with_run_id(plan, context.run_id), layout.table("replay_plan"))
    meta = table_metadata(plan, path, context.run_id)
    meta["mode"] = mode
    meta["prompt_fit"] = MetadataValue.json(prompt_fit_summary(plan))
    return MaterializeResult(metadata=meta)


@asset_check(asset=replay_plan, blocking=True, description="Unique ids, non-decreasing offsets, max_tokens ≥ 1.")
def replay_plan_well_formed(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.plan_well_formed(pq.read_table(storage.layout().table("replay_plan")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[replay_plan], description="One row per replayed request and candidate: every lifecycle timestamp, monotonic clock.")
def raw_timings(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    replay = loaded.spec.workload.replay
    settings = ReplaySettings(
        mode=replay.mode,
        concurrency=replay.concurrency,
        request_timeout_s=replay.request_timeout_s,
        max_duration_s=replay.max_duration_s,
    )
    plan = planned_requests(pq.read_table(layout.table("replay_plan")))
    tables, summary = [], {"mode": replay.mode, "planned": len(plan), "candidates": {}}
    for candidate in loaded.spec.candidates:
        target = endpoint.target(candidate)
        context.log.info(f"replaying {len(plan)} requests against {candidate.name} ({target.base_url}, mode {replay.mode})")
        with Journal(layout.journal(context.run_id, candidate.name)) as journal:
            stats = run_replay(plan, target, settings, context.run_id, journal)
        context.log.info(f"{candidate.name}: {stats.sent} sent, {stats.errors} errors, {stats.unsent} not sent in {stats.wall_s:.1f} s")
        summary["candidates"][candidate.name] = asdict(stats)
        tables.append(journal_to_table(journal.path))
    for key in ("sent", "errors", "unsent", "peak_in_flight"):
        summary[key] = sum(stats[key] for stats in summary["candidates"].values())
    summary["wall_s"] = sum(stats["wall_s"] for stats in summary["candidates"].values())
    timings = pa.concat_tables(tables)
    path = write_parquet(timings, layout.table("raw_timings"))
    write_text(json.dumps(summary, indent=2), layout.json("replay_summary"))
    meta = table_metadata(timings, path, context.run_id)
    meta.update(errors=summary["errors"], unsent=summary["unsent"], summary=MetadataValue.json(summary))
    return MaterializeResult(metadata=meta)


@asset_check(asset=raw_timings, blocking=True, description="Exactly one row per planned request and candidate.")
def raw_timings_one_row_per_planned_request(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    layout = storage.layout()
    candidates = [c.name for c in spec.load().spec.candidates]
    outcome = checks.one_row_per_planned_request(
        pq.read_table(layout.table("replay_plan")), pq.read_table(layout.table("raw_timings")), candidates
    )
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=raw_timings, blocking=True, description="send ≤ first byte ≤ first token ≤ last token ≤ end; TTFT ≤ E2E; no negative duration.")
def raw_timings_lifecycle_ordered(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.lifecycle_ordered(pq.read_table(storage.layout().table("raw_timings")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
