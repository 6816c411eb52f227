"""production_logs → production_sample → prompt_profile, with their checks."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
from dagster import AssetCheckResult, AssetExecutionContext, MaterializeResult, MetadataValue, asset, asset_check

from assets.metadata import PREVIEW_ROWS, markdown_preview, table_metadata, with_run_id
from pipeline import checks
from pipeline.layout import write_parquet, write_text
from pipeline.logs import ingest
from pipeline.sqlrun import run_query
from resources import PackStorage, SpecResource

GROUP = "workload"


@asset(group_name=GROUP, description="The production request log, parsed into the canonical table; bad lines quarantined.")
def production_logs(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    source = loaded.spec.workload.log
    path, quarantine = layout.table("production_logs"), layout.table("quarantine")
    stats = ingest(source, loaded.path.parent, path, quarantine, context.run_id)
    meta = table_metadata(_head(path), path, context.run_id)
    meta.update(
        {"dagster/row_count": stats.accepted, "rejected": stats.rejected, "reject_rate": stats.reject_rate,
         "log_format": source.format, "files": len(stats.files), "ingest_seconds": round(stats.seconds, 3),
         "quarantine_preview": MetadataValue.md(markdown_preview(_head(quarantine)))}
    )
    return MaterializeResult(metadata=meta)


def _head(path, rows: int = PREVIEW_ROWS) -> pa.Table:
    """The first rows of a Parquet file, without reading the rest (logs can be millions of rows)."""
    parquet = pq.ParquetFile(path)
    batch = next(parquet.iter_batches(batch_size=rows), None)
    return pa.Table.from_batches([batch]) if batch is not None else parquet.schema_arrow.empty_table()


@asset_check(asset=production_logs, blocking=True, description="Reject rate within the spec's max_reject_rate; at least one row.")
def production_logs_reject_rate(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    layout = storage.layout()
    accepted = pq.read_metadata(layout.table("production_logs")).num_rows
    rejected = pq.read_metadata(layout.table("quarantine")).num_rows
    outcome = checks.reject_rate_within_budget(accepted, rejected, spec.load().spec.workload.max_reject_rate)
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[production_logs], description="A contiguous window of the log that keeps its real arrival process.")
def production_sample(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    sample_spec, layout = spec.load().spec.workload.sample, storage.layout()
    params = {
        "window_s": sample_spec.window_s,
        "start_offset_s": sample_spec.start_offset_s if sample_spec.mode == "explicit_window" else None,
        "max_requests": sample_spec.max_requests,
    }
    sample = run_query("production_sample", {"production_logs": layout.table("production_logs")}, params)
    path = write_parquet(sample, layout.table("production_sample"))
    meta = table_metadata(sample, path, context.run_id)
    meta.update(mode=sample_spec.mode, window_s=sample_spec.window_s)
    return MaterializeResult(metadata=meta)


@asset_check(asset=production_sample, blocking=True, description="Non-empty, every request inside the sampled window.")
def production_sample_within_window(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    sample = pq.read_table(storage.layout().table("production_sample"))
    outcome = checks.sample_within_window(sample, spec.load().spec.workload.sample.window_s)
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)


@asset(group_name=GROUP, deps=[production_sample], description="Token-length quantiles, structure shares, arrival rate and burstiness of the sample.")
def prompt_profile(context: AssetExecutionContext, storage: PackStorage) -> MaterializeResult:
    layout = storage.layout()
    table = run_query("prompt_profile", {"requests": layout.table("production_sample")})
    path = write_parquet(with_run_id(table, context.run_id), layout.table("prompt_profile"))
    profile = table.to_pylist()[0]
    write_text(json.dumps(profile, indent=2), layout.json("prompt_profile"))
    meta = table_metadata(table, path, context.run_id)
    meta["profile"] = MetadataValue.json(profile)
    return MaterializeResult(metadata=meta)


@asset_check(asset=prompt_profile, description="Length quantiles ordered (p50 ≤ p90 ≤ p99 ≤ max), arrival rate positive.")
def prompt_profile_quantiles_ordered(storage: PackStorage) -> AssetCheckResult:
    profile = json.loads(storage.layout().json("prompt_profile").read_text())
    outcome = checks.quantiles_ordered(profile)
    return AssetCheckResult(passed=outcome.passed, metadata=outcome.metadata)
