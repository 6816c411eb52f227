"""production_logs → production_sample → prompt_profile, with their checks."""

import json

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetExecutionContext,
    MaterializeResult,
    MetadataValue,
    asset,
)

from assets.support.checks import check_result, shown_metadata, table_check, tied_check
from assets.support.metadata import (
    PREVIEW_ROWS,
    input_files,
    markdown_preview,
    source_files,
    table_metadata,
    with_run_id,
    written_file,
)
from assets.support.privacy import text_layout, write_with_text
from pipeline import privacy
from pipeline.contracts import (
    ARRIVAL_RATE,
    CLAIM_DIVERGENCE,
    PRODUCTION_LOGS,
    PRODUCTION_SAMPLE,
    PRODUCTION_SAMPLE_WINDOW,
    PROMPT_LENGTH_HISTOGRAM,
    PROMPT_PROFILE,
    PROMPT_PROFILE_DOCUMENT,
    QUARANTINE,
)
from pipeline.files.hashing import file_ref
from pipeline.files.layout import write_parquet, write_text
from pipeline.plan.warm_prefixes import warm_prefix_rows
from pipeline.quality import expectations, rules
from pipeline.workload.divergence import claim_divergence
from pipeline.workload.logs import ingest
from pipeline.workload.logs.ingest import TextPrivacy
from pipeline.workload.profile import profile_requests
from pipeline.workload.sampling import draw_sample, representativeness
from resources import PackStorage, SpecResource

GROUP = "workload"


@asset(
    group_name=GROUP, description="The production request log, parsed into the canonical table; bad lines quarantined."
)
def production_logs(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    source = loaded.spec.workload.log
    path, quarantine = layout.path(PRODUCTION_LOGS), layout.path(QUARANTINE)
    settings = loaded.spec.privacy
    private = text_layout(storage, loaded.spec)
    text_path = private.path(PRODUCTION_LOGS)
    salt = privacy.salt(settings.salt_env, private.root) if settings.text == privacy.HASH else ""
    stats = ingest(
        source,
        loaded.path.parent,
        path,
        quarantine,
        context.run_id,
        privacy=TextPrivacy(settings.text, salt, text_path),
    )
    if settings.text != privacy.KEEP:
        privacy.owner_only(text_path)
    meta = table_metadata(_head(path), path, context.run_id)
    meta.update(
        {
            "dagster/row_count": stats.accepted,
            "rejected": stats.rejected,
            "reject_rate": stats.reject_rate,
            "log_format": source.format,
            "privacy_text": settings.text,
            "files": len(stats.files),
            "ingest_seconds": round(stats.seconds, 3),
            "quarantine_preview": MetadataValue.md(markdown_preview(_head(quarantine))),
            "quarantine_sha256": written_file(quarantine)["sha256"],
            **source_files(stats.files),  # the log files as read (a database's rows: no file)
        }
    )
    return MaterializeResult(metadata=meta)


def _head(path, rows: int = PREVIEW_ROWS) -> pa.Table:
    """The first rows of a Parquet file, without reading the rest (logs can be millions of rows)."""
    parquet = pq.ParquetFile(path)
    batch = next(parquet.iter_batches(batch_size=rows), None)
    return pa.Table.from_batches([batch]) if batch is not None else parquet.schema_arrow.empty_table()


@tied_check(
    asset=production_logs, blocking=True, description="Reject rate within the spec's max_reject_rate; at least one row."
)
def production_logs_reject_rate(spec: SpecResource, storage: PackStorage) -> AssetCheckResult:
    layout = storage.layout()
    accepted = pq.read_metadata(layout.path(PRODUCTION_LOGS)).num_rows
    rejected = pq.read_metadata(layout.path(QUARANTINE)).num_rows
    outcome = rules.reject_rate_within_budget(accepted, rejected, spec.load().spec.workload.max_reject_rate)
    return check_result(outcome)


production_logs_expectations = table_check(
    PRODUCTION_LOGS,
    "expectations",
    expectations.canonical_log_suite,
    blocking=True,
    description=(
        "great-expectations: ids and timestamps present, timestamps monotonic in log order (99 %), token counts ≥ 1."
    ),
    columns=["request_id", "arrival_at", "prompt_tokens", "output_tokens", "source_file", "source_line"],
    frame=expectations.canonical_log_frame,
)


@asset(
    group_name=GROUP,
    deps=[production_logs],
    description=(
        "A window of the log that keeps its real arrival process (busiest N s, peak hour, explicit bounds), or a "
        "seeded stratified draw; KS/χ² against the whole log."
    ),
)
def production_sample(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    workload = loaded.spec.workload
    sample_spec = workload.sample
    logs, text = layout.path(PRODUCTION_LOGS), text_layout(storage, loaded.spec)
    # drawn from the copy with the text (the plan replays it); the pack keeps it withheld
    sample, window = draw_sample(text.path(PRODUCTION_LOGS), sample_spec)
    meta = write_with_text(context, storage, loaded.spec, PRODUCTION_SAMPLE, sample, inputs=[PRODUCTION_LOGS])
    check = representativeness(logs, sample, sample_spec.representativeness.alpha)
    check["on_fail"] = sample_spec.representativeness.on_fail
    # with warm_prefixes: the earlier requests the replay sends first (pipeline/plan/warm_prefixes.py)
    warm = warm_prefix_rows(text.path(PRODUCTION_LOGS), sample, workload.replay)
    description = {**window.as_dict(), "representativeness": check, "warm_prefixes": warm}
    if loaded.spec.privacy.text != privacy.KEEP:  # the rows' text stays private; the pack keeps their structure
        privacy.owner_only(write_text(json.dumps(description, indent=2), text.path(PRODUCTION_SAMPLE_WINDOW)))
        description["warm_prefixes"] = [
            {**row, "messages_json": privacy.message_structure(row["messages_json"])} for row in warm
        ]
    window_path = write_text(json.dumps(description, indent=2), layout.path(PRODUCTION_SAMPLE_WINDOW))
    meta["window_sha256"] = written_file(window_path)["sha256"]
    meta.update(
        mode=sample_spec.mode, window=MetadataValue.json(window.as_dict()), representativeness_passed=check["passed"]
    )
    for test in check["tests"]:
        meta[f"{test['test']}_{test['column']}_statistic"] = test["statistic"]
        meta[f"{test['test']}_{test['column']}_p_value"] = test["p_value"]
    return MaterializeResult(metadata=meta)


production_sample_within_window = table_check(
    PRODUCTION_SAMPLE,
    "within_window",
    expectations.production_sample_suite,
    blocking=True,
    description="great-expectations: 1 ≤ size ≤ max_requests, every request inside the sampled window.",
    columns=["window_offset_s"],
    params=lambda context, spec, layout: {
        "max_requests": spec.workload.sample.max_requests,
        "window_s": json.loads(layout.path(PRODUCTION_SAMPLE_WINDOW).read_text())["window_s"],
    },
)


@tied_check(
    asset=production_sample,
    blocking=True,
    description=(
        "great-expectations on the p-values of the sample vs the whole log (scipy: two-sample KS on prompt and output "
        "lengths, χ² on tenant and route); warns or blocks per spec."
    ),
)
def production_sample_representative(storage: PackStorage) -> AssetCheckResult:
    check = json.loads(storage.layout().path(PRODUCTION_SAMPLE_WINDOW).read_text())["representativeness"]
    severity = AssetCheckSeverity.ERROR if check["on_fail"] == "block" else AssetCheckSeverity.WARN
    frame = pd.DataFrame(check["tests"], columns=["test", "column", "statistic", "p_value", "n_sample", "n_population"])
    params = {"alpha_per_test": check["alpha_per_test"]}
    outcome = expectations.validate(expectations.representativeness_suite, frame, params, name="representativeness")
    failed = [f"{t['test']} {t['column']}" for t in check["tests"] if not t["passed"]]
    metadata = {
        **outcome.metadata,
        "alpha": check["alpha"],
        "failed_tests": ", ".join(failed) or "none",
        "tests": MetadataValue.json(check["tests"]),
    }
    return AssetCheckResult(passed=outcome.passed, severity=severity, metadata=shown_metadata(metadata))


@asset(
    group_name=GROUP,
    deps=[production_sample],
    description=(
        "Lengths, structure shares, prefix reuse, arrival rate, burstiness and concurrency of the sample; the claim's "
        "divergence and the proxy verdict."
    ),
)
def prompt_profile(context: AssetExecutionContext, spec: SpecResource, storage: PackStorage) -> MaterializeResult:
    loaded, layout = spec.load(), storage.layout()
    settings = loaded.spec.workload.profile
    profile = profile_requests(layout.path(PRODUCTION_SAMPLE), settings)
    profile["log"] = {
        k: v for k, v in profile_requests(layout.path(PRODUCTION_LOGS), settings).items() if not isinstance(v, list)
    }
    divergence = claim_divergence(loaded.spec, profile)
    scalars = {k: v for k, v in profile.items() if not isinstance(v, (list, dict))}
    table = with_run_id(pa.Table.from_pylist([scalars]), context.run_id)
    path = write_parquet(table, layout.path(PROMPT_PROFILE))
    written = [
        write_parquet(with_run_id(pa.Table.from_pylist(rows), context.run_id), layout.path(file))
        for rows, file in ((profile["histograms"], PROMPT_LENGTH_HISTOGRAM), (profile["arrival_rate"], ARRIVAL_RATE))
    ]
    written.append(write_text(json.dumps(profile, indent=2, default=str), layout.path(PROMPT_PROFILE_DOCUMENT)))
    written.append(write_text(json.dumps(divergence, indent=2, default=str), layout.path(CLAIM_DIVERGENCE)))
    meta = input_files(layout, [PRODUCTION_SAMPLE, PRODUCTION_LOGS]) | table_metadata(table, path, context.run_id)
    # the other files it wrote, as a pack's lineage names them
    meta["also_wrote"] = MetadataValue.json([file_ref(other, layout.root) for other in written])
    meta["profile"] = MetadataValue.json(scalars)
    meta["proxy_verdict"] = divergence["proxy_verdict"]["verdict"]
    meta["proxy_reasons"] = MetadataValue.md("\n".join(f"- {r}" for r in divergence["proxy_verdict"]["reasons"]))
    return MaterializeResult(metadata=meta)


@tied_check(
    asset=prompt_profile, description="Length quantiles ordered (p50 ≤ p90 ≤ p99 ≤ max), arrival rate positive."
)
def prompt_profile_quantiles_ordered(storage: PackStorage) -> AssetCheckResult:
    profile = json.loads(storage.layout().path(PROMPT_PROFILE_DOCUMENT).read_text())
    outcome = rules.quantiles_ordered(profile)
    return check_result(outcome)
