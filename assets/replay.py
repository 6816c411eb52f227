"""replay_plan → raw_timings: the replay against every candidate, with its checks."""

import json
from dataclasses import asdict

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import AssetCheckResult, AssetCheckSeverity, AssetExecutionContext, MaterializeResult, MetadataValue, asset, asset_check

from assets.ingest import production_sample
from assets.metadata import table_metadata, with_run_id
from pipeline import analysis, checks, expectations
from pipeline.accuracy_mixed import mix_into_plan
from pipeline.calibration import CLIENT_LIMITED_LAG_MS, calibrate
from pipeline.layout import write_parquet, write_text
from pipeline.plan import build_plan, planned_requests, prompt_fit_summary
from pipeline.replay.engine import ReplaySettings, run_replay
from pipeline.replay.journal import Journal, journal_to_table
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
    return MaterializeResult(metadata=meta)


def with_mixed_accuracy(plan: pa.Table, loaded_spec, layout) -> pa.Table:
    """With `accuracy.mode: mixed`, the labelled items placed among the planned requests."""
    config = loaded_spec.accuracy
    if config is None or config.mode != "mixed":
        return plan
    return mix_into_plan(plan, pq.read_table(layout.table("labelled_slice")), config, loaded_spec.workload.prompts)


@asset_check(asset=replay_plan, blocking=True, description="Unique ids, non-decreasing offsets, max_tokens ≥ 1.")
def replay_plan_well_formed(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.plan_well_formed(pq.read_table(storage.layout().table("replay_plan")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=replay_plan, blocking=True, description="great-expectations: ids unique, offsets non-decreasing, prompt + max_tokens within the model's context.")
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


@asset(group_name=GROUP, deps=[replay_plan, client_calibration], description="One row per replayed request and candidate: every lifecycle timestamp, monotonic clock.")
def raw_timings(
    context: AssetExecutionContext, spec: SpecResource, storage: PackStorage, endpoint: EndpointResource
) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    replay = loaded.spec.workload.replay
    settings = ReplaySettings.from_spec(replay, progress=True)
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
    for key in ("sent", "errors", "unsent", "retries", "peak_in_flight"):
        summary[key] = sum(stats[key] for stats in summary["candidates"].values())
    summary["wall_s"] = sum(stats["wall_s"] for stats in summary["candidates"].values())
    timings = pa.concat_tables(tables)
    path = write_parquet(timings, layout.table("raw_timings"))
    write_text(json.dumps(summary, indent=2), layout.json("replay_summary"))
    meta = table_metadata(timings, path, context.run_id)
    meta.update(write_itl_histogram(timings, loaded.spec, layout, context.run_id))
    meta.update(errors=summary["errors"], unsent=summary["unsent"], summary=MetadataValue.json(summary))
    return MaterializeResult(metadata=meta)


def write_itl_histogram(timings: pa.Table, spec, layout, run_id: str) -> dict:
    """Every gap counted per µs beside raw_timings, from the table still in memory: the analysis
    reads this instead of decoding every gap list again (`loadproof verify` re-builds it)."""
    histogram = with_run_id(analysis.itl_histogram(timings, spec), run_id)
    path = write_parquet(histogram, layout.table("itl_histogram"))
    return {"itl_histogram": MetadataValue.path(str(path)), "itl_histogram_rows": histogram.num_rows}


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


@asset_check(asset=raw_timings, blocking=True, description="great-expectations: status typed, send ≤ first token, last token ≤ end, TTFT ≤ E2E, output ≤ max_tokens.")
def raw_timings_expectations(storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.layout().table("raw_timings")).to_pandas()
    outcome = expectations.validate(expectations.raw_timings_suite, frame, name="raw_timings")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=raw_timings, description="Error rate within the spec's budget; schedule lag p99 within the client-validity bound (else the client was the bottleneck).")
def raw_timings_endpoint_health(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.layout().table("raw_timings")).to_pandas()
    params = {"max_error_rate": spec.load().spec.sla.max_error_rate, "max_schedule_lag_ms_p99": CLIENT_LIMITED_LAG_MS}
    outcome = expectations.validate(expectations.endpoint_health_suite, frame, params, name="endpoint_health")
    return AssetCheckResult(passed=outcome.passed, severity=AssetCheckSeverity.WARN, metadata=outcome.metadata)
