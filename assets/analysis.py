"""raw_timings → latency_percentiles, throughput, cost_per_decision (DuckDB, SQL in sql/)."""

import pyarrow.parquet as pq
from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, asset, asset_check

from assets.metadata import table_metadata, with_run_id
from assets.replay import raw_timings
from pipeline import analysis, checks
from pipeline.layout import write_parquet
from resources import PackStorage, SpecResource

GROUP = "analysis"


def _materialise(context: AssetExecutionContext, name: str, compute, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    layout = storage.layout()
    table = compute(layout.table("raw_timings"), spec.load().spec)
    path = write_parquet(with_run_id(table, context.run_id), layout.table(name))
    meta = table_metadata(table, path, context.run_id)
    meta["sql"] = f"sql/{name}.sql"
    return MaterializeResult(metadata=meta)


@asset(group_name=GROUP, deps=[raw_timings], description="TTFT, TPOT, ITL, E2E p50/p90/p95/p99 with order-statistic intervals, steady state.")
def latency_percentiles(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return _materialise(context, "latency_percentiles", analysis.latency_percentiles, spec, storage)


@asset_check(asset=latency_percentiles, blocking=True, description="p50 ≤ p90 ≤ p95 ≤ p99 and each value inside its interval.")
def latency_percentiles_ordered(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.percentiles_ordered(pq.read_table(storage.layout().table("latency_percentiles")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[raw_timings], description="Output/total tokens per second, requests per second, goodput, error rate.")
def throughput(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return _materialise(context, "throughput", analysis.throughput, spec, storage)


@asset_check(asset=throughput, blocking=True, description="No NaN or negative rate; goodput ≤ requests/s; tokens/s × window = token sum.")
def throughput_consistent(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.throughput_consistent(pq.read_table(storage.layout().table("throughput")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[raw_timings], description="Cost of the steady-state window per useful decision and per million output tokens.")
def cost_per_decision(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    return _materialise(context, "cost_per_decision", analysis.cost_per_decision, spec, storage)


@asset_check(asset=cost_per_decision, blocking=True, description="Cost is present and non-negative for every candidate.")
def cost_per_decision_non_negative(storage: PackStorage) -> AssetCheckResult:
    outcome = checks.cost_non_negative(pq.read_table(storage.layout().table("cost_per_decision")))
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
