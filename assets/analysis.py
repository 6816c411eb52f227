"""raw_timings → latency_percentiles, throughput, throughput_buckets, error_breakdown,
cost_per_decision (DuckDB, SQL in sql/)."""

import pyarrow.compute as pc
import pyarrow.parquet as pq
from dagster import AssetCheckExecutionContext, AssetCheckResult, AssetExecutionContext, MaterializeResult, asset, asset_check

from assets.accuracy import accuracy_summary
from assets.metadata import materialise_table
from assets.partitions import REVALIDATION_PARTITIONS
from assets.replay import raw_timings
from pipeline import analysis, expectations
from pipeline.accuracy_mixed import production_requests
from resources import PackStorage, SpecResource

GROUP = "analysis"


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[raw_timings],
    description="TTFT, TPOT, ITL, E2E p50…p99.9, overall and per prompt-length bucket, exact order-statistic intervals, steady state.",
)
def latency_percentiles(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    histogram = storage.partition_layout(context).table("itl_histogram")  # written beside raw_timings by the replay

    def compute(raw, loaded_spec):
        return analysis.latency_percentiles(raw, loaded_spec, histogram)

    return materialise_table(context, "latency_percentiles", compute, "raw_timings", spec, storage)


@asset_check(asset=latency_percentiles, blocking=True, description="great-expectations: p50 ≤ p90 ≤ p95 ≤ p99 ≤ p99.9 per series, each value inside its interval, no NaN where n > 0.")
def latency_percentiles_ordered(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = expectations.latency_percentiles_frame(pq.read_table(storage.partition_layout(context).table("latency_percentiles")))
    outcome = expectations.validate(expectations.latency_percentiles_suite, frame, name="latency_percentiles")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[raw_timings],
    description="Output/total tokens per second, requests per second, goodput, error rate.",
)
def throughput(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "throughput", analysis.throughput, "raw_timings", spec, storage)


@asset_check(asset=throughput, blocking=True, description="great-expectations: no NaN or negative rate; goodput ≤ requests/s; tokens/s × window = token sum.")
def throughput_consistent(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = expectations.throughput_frame(pq.read_table(storage.partition_layout(context).table("throughput")))
    outcome = expectations.validate(expectations.throughput_suite, frame, name="throughput")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[raw_timings],
    description="The replay in 1-second buckets: requests sent, succeeded, good and failed, tokens.",
)
def throughput_buckets(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "throughput_buckets", analysis.throughput_buckets, "raw_timings", spec, storage)


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


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[raw_timings],
    description="Every planned request by outcome (ok or error type), with Wilson intervals.",
)
def error_breakdown(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "error_breakdown", analysis.error_breakdown, "raw_timings", spec, storage)


@asset_check(asset=error_breakdown, blocking=True, description="great-expectations: each candidate's outcome rates sum to one, counts to its planned requests; rates inside their Wilson intervals.")
def error_breakdown_sums_to_one(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = expectations.error_breakdown_frame(pq.read_table(storage.partition_layout(context).table("error_breakdown")))
    outcome = expectations.validate(expectations.error_breakdown_suite, frame, name="error_breakdown")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(
    partitions_def=REVALIDATION_PARTITIONS,
    group_name=GROUP,
    deps=[raw_timings, accuracy_summary],
    description="Cost of the steady-state window per useful decision (succeeded, met the SLA, correct where scored) and per million output tokens.",
)
def cost_per_decision(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    accuracy = pq.read_table(storage.partition_layout(context).table("accuracy_summary"))

    def compute(raw, loaded_spec):
        return analysis.cost_per_decision(raw, loaded_spec, accuracy if accuracy.num_rows else None)

    return materialise_table(context, "cost_per_decision", compute, "raw_timings", spec, storage)


@asset_check(asset=cost_per_decision, blocking=True, description="great-expectations: cost present and non-negative for every candidate; cost per decision inside its interval.")
def cost_per_decision_non_negative(context: AssetCheckExecutionContext, storage: PackStorage) -> AssetCheckResult:
    frame = pq.read_table(storage.partition_layout(context).table("cost_per_decision")).to_pandas()
    outcome = expectations.validate(expectations.cost_per_decision_suite, frame, name="cost_per_decision")
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
