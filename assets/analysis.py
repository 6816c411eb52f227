"""raw_timings → latency_percentiles, throughput, throughput_buckets, error_breakdown,
cost_per_decision: one multi-asset, so the shared steps (the steady-state window, the 1-second
buckets) are staged once in one DuckDB session (SQL in sql/), each table still its own asset
with its own checks."""

import pyarrow.compute as pc
import pyarrow.parquet as pq
from dagster import (
    AssetCheckExecutionContext,
    AssetCheckResult,
    AssetExecutionContext,
    AssetSpec,
    MaterializeResult,
    asset_check,
    multi_asset,
)

from assets.accuracy import accuracy_summary
from assets.metadata import table_metadata, with_run_id
from assets.partitions import REVALIDATION_PARTITIONS
from assets.replay import raw_timings
from pipeline.accuracy.replies import production_requests
from pipeline.analysis.tables import analyse_all
from pipeline.pack.layout import write_parquet
from pipeline.quality import expectations
from resources import PackStorage, SpecResource

GROUP = "analysis"
TABLES = {
    "latency_percentiles": "TTFT, TPOT, ITL, E2E p50…p99.9, overall and per prompt-length bucket, exact order-statistic intervals, steady state.",
    "throughput": "Output/total tokens per second, requests per second, goodput, error rate.",
    "throughput_buckets": "The replay in 1-second buckets: requests sent, succeeded, good and failed, tokens.",
    "error_breakdown": "Every planned request by outcome (ok or error type), with Wilson intervals.",
    "cost_per_decision": "Cost of the steady-state window per useful decision (succeeded, met the SLA, correct where scored) and per million output tokens.",
}
latency_percentiles, throughput, throughput_buckets, error_breakdown, cost_per_decision = TABLES


@multi_asset(
    specs=[AssetSpec(name, group_name=GROUP, deps=[raw_timings, accuracy_summary], description=text) for name, text in TABLES.items()],
    partitions_def=REVALIDATION_PARTITIONS,
    name="analysis_tables",
)
def analysis_tables(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage):
    loaded, layout = spec.load(), storage.partition_layout(context)
    accuracy = pq.read_table(layout.table("accuracy_summary"))
    tables = analyse_all(
        layout.table("raw_timings"), loaded.spec, accuracy if accuracy.num_rows else None, layout.table("itl_histogram")
    )
    for name in TABLES:
        path = write_parquet(with_run_id(tables[name], context.run_id), layout.table(name))
        meta = table_metadata(tables[name], path, context.run_id)
        meta["sql"] = f"sql/{name}.sql"
        yield MaterializeResult(asset_key=name, metadata=meta)


@asset_check(asset=latency_percentiles, blocking=True, description="great-expectations: p50 ≤ p90 ≤ p95 ≤ p99 ≤ p99.9 per series, each value inside its interval, no NaN where n > 0.")
def latency_percentiles_ordered(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = expectations.latency_percentiles_frame(pq.read_table(storage.partition_layout(context).table("latency_percentiles")))
    outcome = expectations.validate(expectations.latency_percentiles_suite, frame, name="latency_percentiles")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=throughput, blocking=True, description="great-expectations: no NaN or negative rate; goodput ≤ requests/s; tokens/s × window = token sum.")
def throughput_consistent(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = expectations.throughput_frame(pq.read_table(storage.partition_layout(context).table("throughput")))
    outcome = expectations.validate(expectations.throughput_suite, frame, name="throughput")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=throughput_buckets, blocking=True, description="great-expectations: every request that ended is counted in exactly one bucket of its candidate.")
def throughput_buckets_add_up(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    layout = storage.partition_layout(context)
    path = layout.table("raw_timings")
    labelled = ["labelled_item_id"] if "labelled_item_id" in pq.read_schema(path).names else []
    timings = production_requests(pq.read_table(path, columns=["candidate", "t_end_ns", "t_sent_ns", *labelled]))
    ended = timings.filter(pc.and_(pc.is_valid(timings.column("t_end_ns")), pc.is_valid(timings.column("t_sent_ns"))))
    counts = {row["candidate"]: row["count"] for row in ended.group_by("candidate").aggregate([("candidate", "count")]).rename_columns(["candidate", "count"]).to_pylist()}
    frame = expectations.throughput_buckets_frame(pq.read_table(layout.table("throughput_buckets")), counts)
    outcome = expectations.validate(expectations.throughput_buckets_suite, frame, {"candidates": sorted(counts)}, name="throughput_buckets")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=error_breakdown, blocking=True, description="great-expectations: each candidate's outcome rates sum to one, counts to its planned requests; rates inside their Wilson intervals.")
def error_breakdown_sums_to_one(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = expectations.error_breakdown_frame(pq.read_table(storage.partition_layout(context).table("error_breakdown")))
    outcome = expectations.validate(expectations.error_breakdown_suite, frame, name="error_breakdown")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset_check(asset=cost_per_decision, blocking=True, description="great-expectations: cost present and non-negative for every candidate; cost per decision inside its interval.")
def cost_per_decision_non_negative(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.partition_layout(context).table("cost_per_decision")).to_pandas()
    outcome = expectations.validate(expectations.cost_per_decision_suite, frame, name="cost_per_decision")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
