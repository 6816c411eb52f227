"""raw_timings → latency_percentiles, throughput, throughput_buckets, error_breakdown,
cost_per_decision (DuckDB, SQL in sql/)."""

import pyarrow.compute as pc
import pyarrow.parquet as pq
from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, asset, asset_check

from assets.accuracy import accuracy_summary
from assets.metadata import materialise_table
from assets.replay import raw_timings
from pipeline import analysis, analysis_checks, checks
from resources import PackStorage, SpecResource

GROUP = "analysis"


@asset(
    group_name=GROUP,
    deps=[raw_timings],
    description="TTFT, TPOT, ITL, E2E p50…p99.9, overall and per prompt-length bucket, exact order-statistic intervals, steady state.",
)
def latency_percentiles(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    histogram = storage.layout().table("itl_histogram")  # written beside raw_timings by the replay

    def compute(raw, loaded_spec):
        return analysis.latency_percentiles(raw, loaded_spec, histogram)

    return materialise_table(context, "latency_percentiles", compute, "raw_timings", spec, storage)


@asset_check(asset=latency_percentiles, blocking=True, description="p50 ≤ p90 ≤ p95 ≤ p99 and each value inside its interval.")
def latency_percentiles_ordered(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.percentiles_ordered(pq.read_table(storage.layout().table("latency_percentiles")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[raw_timings], description="Output/total tokens per second, requests per second, goodput, error rate.")
def throughput(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "throughput", analysis.throughput, "raw_timings", spec, storage)


@asset_check(asset=throughput, blocking=True, description="No NaN or negative rate; goodput ≤ requests/s; tokens/s × window = token sum.")
def throughput_consistent(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.throughput_consistent(pq.read_table(storage.layout().table("throughput")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[raw_timings], description="The replay in 1-second buckets: requests sent, succeeded, good and failed, tokens.")
def throughput_buckets(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "throughput_buckets", analysis.throughput_buckets, "raw_timings", spec, storage)


@asset_check(asset=throughput_buckets, blocking=True, description="Every request that ended is counted in exactly one bucket.")
def throughput_buckets_add_up(storage: PackStorage) -> AssetCheckResult:
    layout = storage.layout()
    path = layout.table("raw_timings")
    labelled = ["labelled_item_id"] if "labelled_item_id" in pq.read_schema(path).names else []
    timings = analysis_checks.production_requests(pq.read_table(path, columns=["candidate", "t_end_ns", "t_sent_ns", *labelled]))
    ended = timings.filter(pc.and_(pc.is_valid(timings.column("t_end_ns")), pc.is_valid(timings.column("t_sent_ns"))))
    counts = {row["candidate"]: row["count"] for row in ended.group_by("candidate").aggregate([("candidate", "count")]).rename_columns(["candidate", "count"]).to_pylist()}
    outcome = analysis_checks.buckets_add_up(pq.read_table(layout.table("throughput_buckets")), counts)
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[raw_timings], description="Every planned request by outcome (ok or error type), with Wilson intervals.")
def error_breakdown(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return materialise_table(context, "error_breakdown", analysis.error_breakdown, "raw_timings", spec, storage)


@asset_check(asset=error_breakdown, blocking=True, description="Outcome rates of each candidate sum to one.")
def error_breakdown_sums_to_one(storage: PackStorage) -> AssetCheckResult:
    outcome = analysis_checks.error_rates_sum_to_one(pq.read_table(storage.layout().table("error_breakdown")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(
    group_name=GROUP,
    deps=[raw_timings, accuracy_summary],
    description="Cost of the steady-state window per useful decision (succeeded, met the SLA, correct where scored) and per million output tokens.",
)
def cost_per_decision(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    accuracy = pq.read_table(storage.layout().table("accuracy_summary"))

    def compute(raw, loaded_spec):
        return analysis.cost_per_decision(raw, loaded_spec, accuracy if accuracy.num_rows else None)

    return materialise_table(context, "cost_per_decision", compute, "raw_timings", spec, storage)


@asset_check(asset=cost_per_decision, blocking=True, description="Cost is present and non-negative for every candidate.")
def cost_per_decision_non_negative(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.cost_non_negative(pq.read_table(storage.layout().table("cost_per_decision")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
